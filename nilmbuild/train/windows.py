"""Training windows at fresh random offsets every epoch (issue: a model worth explaining).

`prepare()` cuts the train block on a fixed stride grid (480 / 240). Training on that grid shows the model
each activation at only two positions. `TrainSeries` keeps the continuous, scaled train block and draws
each epoch's windows at random valid offsets (no window overlaps a long gap), seeded by (seed, epoch), so a
run stays reproducible and a resumed run redraws the same windows.
"""

from __future__ import annotations

import numpy as np
import torch

from nilmbuild.data.preprocess import exogenous, scaler_from_dict, window_starts

from .losses import long_off_mask


class TrainSeries:
    """The train split as continuous arrays: x (7, T) model input, y (D, T) scaled power, s (D, T) states."""

    def __init__(self, prepared, long_off_steps: list[int], window: int) -> None:
        sp = prepared.train
        agg = scaler_from_dict(prepared.scalers["aggregate"]).transform(sp.aggregate_w)  # (T,)
        self.x = np.concatenate([agg[None], exogenous(sp.timestamps)]).astype(np.float32)  # (7, T)
        self.y = np.stack(
            [
                scaler_from_dict(prepared.scalers["appliances"][d]).transform(sp.appliances_w[i])
                for i, d in enumerate(prepared.devices)
            ]
        ).astype(np.float32)  # (D, T)
        self.s = sp.states.astype(np.float32)  # (D, T)
        self.window = window
        self.long_off_steps = long_off_steps
        self.starts = window_starts(0, self.x.shape[1], window, 1, sp.valid)  # (S,)

    def draw(self, n: int, seed: int) -> dict[str, torch.Tensor]:
        """n windows at random valid offsets -> {"x": (n, 7, W), "y", "s", "lo": (n, D, W)}."""
        rng = np.random.Generator(np.random.PCG64(seed))
        starts = rng.choice(self.starts, size=n, replace=len(self.starts) < n)
        idx = starts[:, None] + np.arange(self.window)  # (n, W)
        s = self.s[:, idx].transpose(1, 0, 2)  # (n, D, W)
        return {
            "x": torch.from_numpy(np.ascontiguousarray(self.x[:, idx].transpose(1, 0, 2))),
            "y": torch.from_numpy(np.ascontiguousarray(self.y[:, idx].transpose(1, 0, 2))),
            "s": torch.from_numpy(np.ascontiguousarray(s)),
            "lo": torch.from_numpy(long_off_mask(s, self.long_off_steps)),
        }
