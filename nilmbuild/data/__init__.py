"""Household data: the built-in simulator, dataset loaders and the preprocessing pipeline."""

from nilmbuild.data.household import DEVICE_NAMES, Household
from nilmbuild.data.loaders import load_csv, load_redd, load_refit, load_source, load_ukdale
from nilmbuild.data.preprocess import Prepared, PrepConfig, Split, example_batch, prepare, summary
from nilmbuild.data.simulate import simulate_household

__all__ = [
    "DEVICE_NAMES",
    "Household",
    "PrepConfig",
    "Prepared",
    "Split",
    "example_batch",
    "load_csv",
    "load_redd",
    "load_refit",
    "load_source",
    "load_ukdale",
    "prepare",
    "simulate_household",
    "summary",
]
