"""The one-window entry point that Python users, embedding hosts and tests call (the pages expose the same
signature as `window.nilmbuild.runWindow`): a checkpoint -> per-device watts for one window of aggregate.

    >>> import nilmbuild
    >>> m = nilmbuild.load_model()                  # the shipped checkpoint
    >>> out = m.run_window(aggregate_w, "2024-04-12T08:00")
    >>> out["kettle"].shape                          # (480,) float32 watts

The output is the model's answer in watts after the hard gate and the output FiLM, before post-processing
(no short-activation or long-OFF suppression, no clamp, no cap): exactly stage 12 of the forward pass,
converted with the checkpoint's scalers. The start time fixes the six time features.

For an imported upstream checkpoint (architecture "condinilm" or "nilmformer") it is what the upstream's own
evaluation computes before its post-processing: CondiNILM's output after its external soft gate
(src/helpers/evaluation.py), inverse-scaled and clamped at 0 W as that evaluation does before thresholding;
the original NILMFormer's output after its learned de-normalisation, inverse-scaled. Its time features are the
config's list_exo_variables at the config's sampling rate.

Start times are naive wall-clock times; a trailing `Z` (or +00:00) is accepted and read as that time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import torch

from nilmbuild.errors import UserError


@dataclass
class Model:
    loaded: object  # nilmbuild.model.checkpoint.Loaded

    @property
    def devices(self) -> list[str]:
        return list(self.loaded.devices)

    @property
    def window(self) -> int:
        return int(self.loaded.cfg.window)

    @property
    def architecture(self) -> str:
        return self.loaded.architecture

    @property
    def step_s(self) -> int:
        if self.architecture != "spec":
            return int(self.loaded.cfg.step_s)
        prep = (self.loaded.provenance or {}).get("prep") or {}
        return int(prep.get("resample_s") or 60)

    def timestamps(self, start: str | datetime | np.datetime64) -> np.ndarray:
        try:
            t0 = np.datetime64(_naive(start), "s")
        except (ValueError, TypeError):
            raise UserError(f"bad start time {start!r}: use an ISO date-time such as 2024-04-12T08:00") from None
        return t0 + np.arange(self.window) * np.timedelta64(self.step_s, "s")

    @torch.no_grad()
    def run_window(self, aggregate_w, start) -> dict[str, np.ndarray]:
        """aggregate_w: (window,) watts; start: the first step's time -> {device: (window,) float32 watts}."""
        from nilmbuild.infer.postprocess import denormalise
        from nilmbuild.pipeline import model_input

        agg = np.asarray(aggregate_w, dtype=np.float32).reshape(-1)
        if agg.shape[0] != self.window or not np.isfinite(agg).all():
            raise UserError(f"run_window needs {self.window} finite aggregate values in watts, got {agg.shape[0]}")
        x = torch.from_numpy(model_input(self.loaded, self.timestamps(start), agg))[None]  # (1, 1 + E, L)
        model = self.loaded.model.eval()
        power = model(x).power[0].numpy()  # (D, L) scaled
        apps = self.loaded.scalers["appliances"]
        out = {d: denormalise(power[i], apps[d]) for i, d in enumerate(self.devices)}
        if self.architecture == "condinilm":  # its evaluation clamps the inverse-scaled output at 0 W
            out = {d: np.maximum(w, np.float32(0.0)) for d, w in out.items()}
        return out


def _naive(start):
    """A start time without a time-zone suffix: numpy warns on (and will refuse) 'Z' / '+00:00'."""
    if isinstance(start, datetime):
        return start.replace(tzinfo=None)
    if isinstance(start, str):
        s = start.strip()
        for suffix in ("Z", "z", "+00:00", "+0000"):
            if s.endswith(suffix):
                return s[: -len(suffix)]
    return start


def load_model(path=None) -> Model:
    """Load a checkpoint (None: the shipped one) for `run_window`."""
    from nilmbuild.model.checkpoint import load_checkpoint

    loaded = load_checkpoint(path)
    if not loaded.scalers:
        raise UserError(f"{path or 'the checkpoint'} has no scalers: write it with `nilmbuild train`")
    return Model(loaded)
