"""The shipped checkpoint on the simulator's held-out test split, as `nilmbuild evaluate` scores it (issue 10's bar:
every device F1 >= 0.6, NDE < 0.5, MAE below the train-mean and the all-OFF predictors). A retrained checkpoint
that falls below what the shipped one reaches fails here; the microwave's known miss is a strict xfail, so the
day it is met the test says so."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow
BAR_MET = ("kettle", "fridge", "dishwasher", "washing_machine")


@pytest.fixture(scope="module")
def scores():
    from nilmbuild.infer import evaluate
    from nilmbuild.model.checkpoint import load_checkpoint
    from nilmbuild.pipeline import load_data_for

    loaded = load_checkpoint(None)
    return evaluate(loaded, load_data_for(loaded), "test")


def test_every_device_detects_its_on_periods_and_beats_the_mean(scores):
    for d, m in scores["devices"].items():
        assert m["f1"] >= 0.6, d
        assert m["mae"] < scores["baselines"]["mean"][d]["mae"], d


@pytest.mark.parametrize("device", BAR_MET)
def test_the_bar_holds(scores, device):
    m, base = scores["devices"][device], scores["baselines"]
    assert m["nde"] < 0.5
    assert m["mae"] < base["mean"][device]["mae"] and m["mae"] < base["zero"][device]["mae"]


@pytest.mark.xfail(strict=True, reason="microwave false positives while the toaster runs (docs/training.md)")
def test_the_microwave_beats_the_all_off_predictor(scores):
    m = scores["devices"]["microwave"]
    assert m["mae"] < scores["baselines"]["zero"]["microwave"]["mae"] and m["nde"] < 0.5
