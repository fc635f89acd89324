"""Inference: a checkpoint over whole series by seq2subseq, post-processing, metrics, and what the CLI
and the pages call (`evaluate`, `disaggregate_series`, `predict_series`: infer/series.py).

The data a checkpoint runs on is prepared by nilmbuild.pipeline (provenance -> the same split, window and
scalers as in training); this package only runs the model on it and scores the output.
"""

from .metrics import METRICS, all_metrics, baselines, device_metrics, format_table, json_safe, mean_baseline
from .postprocess import (
    PostConfig,
    clamp_negative,
    denormalise,
    duration_steps,
    postprocess,
    suppress_long_off,
    suppress_short_activations,
)
from .seq2subseq import Geometry, Seq2SubseqResult, geometry, pad_series, seq2subseq
from .series import disaggregate_series, evaluate, predict_series

__all__ = [
    "METRICS",
    "Geometry",
    "PostConfig",
    "Seq2SubseqResult",
    "all_metrics",
    "baselines",
    "clamp_negative",
    "denormalise",
    "device_metrics",
    "disaggregate_series",
    "duration_steps",
    "evaluate",
    "format_table",
    "geometry",
    "json_safe",
    "mean_baseline",
    "pad_series",
    "postprocess",
    "predict_series",
    "seq2subseq",
    "suppress_long_off",
    "suppress_short_activations",
]
