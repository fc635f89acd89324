"""A run's data: the prepared windows (nilmbuild.pipeline, the one place that knows how a checkpoint's data is
prepared) and the tensors a step reads."""

from __future__ import annotations

import torch

from nilmbuild.pipeline import load_training_data

from .config import TrainConfig
from .losses import long_off_mask


def load_prepared(tc: TrainConfig, window: int):
    """The run's data (nilmbuild.pipeline: the one place that knows how a checkpoint's data is prepared)."""
    return load_training_data(
        **tc.data_settings(),
        window=window,
        devices=tc.devices,
        val_from=tc.val_from,
        test_from=tc.test_from,
        scaler=tc.scaler,
        prep=tc.prep,
    )


def tensors(split, long_off_steps) -> dict:
    y = torch.from_numpy(split.y)  # (N, D, 2, L)
    st = split.y[:, :, 1]
    return {
        "x": torch.from_numpy(split.x),
        "y": y[:, :, 0].contiguous(),
        "s": y[:, :, 1].contiguous(),
        "lo": torch.from_numpy(long_off_mask(st, long_off_steps)) if st.size else torch.zeros(st.shape),
    }
