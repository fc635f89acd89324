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
        on_steps = np.concatenate([np.zeros((len(self.s), 1), np.int64), np.cumsum(self.s > 0, axis=1)], axis=1)
        has_on = on_steps[:, self.starts + window] > on_steps[:, self.starts]  # (D, S): device ON in the window
        self.active = [self.starts[h] for h in has_on if h.any()]  # per device that is ever ON: its windows

    def draw(self, n: int, seed: int, on_share: float = 0.0) -> dict[str, torch.Tensor]:
        """n windows at random valid offsets -> {"x": (n, 7, W), "y", "s", "lo": (n, D, W)}. Balanced sampling:
        round(on_share * n) of them each go to a device picked at random (among those ever ON) and are drawn among
        the windows where that device is ON, so a rarely used device is seen as often as a fridge; the rest are
        drawn among all windows; shuffled. on_share 0: the uniform draw."""
        rng = np.random.Generator(np.random.PCG64(seed))
        k = int(round(on_share * n)) if self.active else 0
        starts = rng.choice(self.starts, size=n - k, replace=len(self.starts) < n - k)
        if k:
            pick = np.bincount(rng.integers(0, len(self.active), size=k), minlength=len(self.active))
            on = [rng.choice(a, size=m, replace=len(a) < m) for a, m in zip(self.active, pick)]
            starts = rng.permutation(np.concatenate([starts, *on]))
        idx = starts[:, None] + np.arange(self.window)  # (n, W)
        s = self.s[:, idx].transpose(1, 0, 2)  # (n, D, W)
        return {
            "x": torch.from_numpy(np.ascontiguousarray(self.x[:, idx].transpose(1, 0, 2))),
            "y": torch.from_numpy(np.ascontiguousarray(self.y[:, idx].transpose(1, 0, 2))),
            "s": torch.from_numpy(np.ascontiguousarray(s)),
            "lo": torch.from_numpy(long_off_mask(s, self.long_off_steps)),
        }
