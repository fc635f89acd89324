"""The explained function: aggregate watts -> one device's output watts, as one differentiable torch module.

Attributions are taken with respect to the aggregate **in watts** (the physical input space), so the model input
(scaling with the checkpoint's aggregate scaler, the six time features of the window's start; the same as
`nilmbuild.pipeline.model_input` and `nilmbuild.api.Model.run_window`) is built inside the module:

    watts (N, L) -> scaled aggregate + time features (N, 7, L) -> NILMFormer -> device power (scaled) -> watts

Output kinds (`gate`):
- "hard": the inference output the Disaggregation page draws (hard gate p > threshold, output FiLM), equal to
  `run_window`. The gate is a step function of the input: its gradient is zero almost everywhere and the jumps
  are invisible to gradients, so gradient methods see only the regression branch where the gate is open.
- "soft": the same weights with the smoothstep gate (the training output): differentiable everywhere, so
  Integrated Gradients' completeness (sum of attributions = f(x) - f(baseline)) can hold.

`Target` reduces the device's watts to one number per input: its energy over steps [lo, hi) in Wh (sequence
level) or its power at one step in W (point level, hi = lo + 1 with `point=True`).

An imported upstream checkpoint (architecture "condinilm" or "nilmformer") has one output, the one its own
evaluation computes (nilmbuild.api's docstring), and `outputs_of` lists only "hard", which names it:
- CondiNILM: its soft gate, applied outside the model with each device's stored scale, floor and bias
  (model/upstream/soft_gate.py), then the inverse scaling and the clamp at 0 W, as run_window. It is what the
  pages draw and it is differentiable, so gradients and forward passes explain the same output; there is no
  threshold gate and no smoothstep twin.
- the original NILMFormer: no gate at all; its conv head's output de-normalised with the stats token.
The module accepts either `gate` value for them (both give that output); the API and the CLI refuse "soft".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

GATES = ("hard", "soft")
#: What each output is, per architecture (`output_label`): the words of `nilmbuild explain`'s text and figure.
LABELS = {
    "spec": {"hard": "hard-gate output", "soft": "soft-gate output"},
    "condinilm": {"hard": "evaluation output (CondiNILM's external soft gate)"},
    "nilmformer": {"hard": "de-normalised conv-head output (the original NILMFormer has no gate)"},
}


def architecture_of(loaded) -> str:
    return getattr(loaded, "architecture", "spec")


def outputs_of(loaded) -> tuple[str, ...]:
    """The distinct outputs the checkpoint's model has: hard and soft gate for the spec's, one for an upstream
    model ("hard" names it: see the module doc)."""
    return GATES if architecture_of(loaded) == "spec" else ("hard",)


def output_label(loaded, gate: str) -> str:
    return LABELS[architecture_of(loaded)][gate]


class WattsToDevice(nn.Module):
    """aggregate watts (N, L) -> the device's output watts (N, L) for windows starting at `start`."""

    def __init__(self, loaded, start, device: str, gate: str = "hard") -> None:
        from nilmbuild.api import Model
        from nilmbuild.data.preprocess import scaler_affines
        from nilmbuild.pipeline import time_features_for

        super().__init__()
        if gate not in GATES:
            raise ValueError(f"gate must be one of {GATES}, got {gate!r}")
        affine = scaler_affines(loaded.scalers)
        self.model = loaded.model.eval()
        self.index = list(loaded.devices).index(device)
        self.gate = gate
        self.a_in, self.b_in = affine["aggregate"]["a"], affine["aggregate"]["b"]
        self.a_out, self.b_out = affine["appliances"][device]["a"], affine["appliances"][device]["b"]
        self.architecture = Model(loaded).architecture
        stamps = Model(loaded).timestamps(start)
        self.register_buffer("exo", torch.from_numpy(time_features_for(loaded, stamps)))  # (E, L)

    def model_input(self, agg_w: torch.Tensor) -> torch.Tensor:
        """(N, L) watts -> (N, 1 + E, L) float32 model input (scaling in float64, as pipeline.model_input)."""
        z = ((agg_w.double() - self.b_in) / self.a_in).float()
        return torch.cat([z[:, None], self.exo.expand(z.shape[0], -1, -1)], dim=1)

    def forward(self, agg_w: torch.Tensor) -> torch.Tensor:
        x = self.model_input(agg_w)
        out = self.model(x, gate_mode=self.gate) if self.architecture == "spec" else self.model(x)
        watts = (out.power[:, self.index].double() * self.a_out + self.b_out).float()  # (N, L)
        return watts.clamp(min=0.0) if self.architecture == "condinilm" else watts


class Target(nn.Module):
    """The explained number per input: energy (Wh) over steps [lo, hi), or the power (W) at step lo (point)."""

    def __init__(self, device_w: WattsToDevice, lo: int, hi: int, step_s: float, point: bool = False) -> None:
        super().__init__()
        self.device_w, self.lo, self.hi, self.point = device_w, int(lo), int(hi), bool(point)
        self.scale = 1.0 if point else float(step_s) / 3600.0

    def forward(self, agg_w: torch.Tensor) -> torch.Tensor:
        return self.device_w(agg_w)[:, self.lo : self.hi].sum(dim=1) * self.scale  # (N,)


@dataclass(frozen=True)
class Interval:
    """Steps [lo, hi) of the window that the target covers; point: one step, the power there."""

    lo: int
    hi: int
    point: bool = False

    @property
    def unit(self) -> str:
        return "W" if self.point else "Wh"


def window_baseline(agg_w: np.ndarray) -> np.ndarray:
    """The documented baseline: the window's own minimum power (its always-on load) at every step, (L,)."""
    agg = np.asarray(agg_w, dtype=np.float32)
    return np.full_like(agg, agg.min())
