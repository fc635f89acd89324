"""CondiNILM's soft gate. It is applied *outside* the model, by its evaluation (src/helpers/evaluation.py
evaluate_nilm_split), with per-device parameters that its checkpoint stores under `criterion.*`:

  criterion gate (gate_source "criterion", the checkpoint has criterion.gate_soft_scales|floors|biases):
    s = clamp(gate_soft_scales, 0.5, 6);  f = clamp(gate_floors, 0.01, 0.5);  b = gate_biases
    l = max(nan_to_num(logit), logits_floor)      logits_floor: -3 for sparse_high_power devices (not stored:
                                                  derived from the device type, see device_types.py), else -inf
    p = sigmoid(clamp(l * s + b, -50, 50));  power = power_ungated * (f + (1 - f) * p)
  config gate (no criterion.* in the checkpoint): the config's gate_soft_scale s and gate_floor f in [0, 1],
    p = sigmoid(clamp(logit * s, -50, 50)), the same blend.

The buffers are named as the checkpoint names them, so this module's state_dict keys are `criterion.gate_*`.
"""

from __future__ import annotations

import torch
from torch import nn

from ..trace import Trace, put

SECTION = "CondiNILM evaluation gate"
AX = ("batch", "device", "time")


class SoftGate(nn.Module):
    def __init__(self, n_devices: int, source: str, logits_floors=(), soft_scale: float = 1.0, floor: float = 0.0):
        super().__init__()
        if source not in ("criterion", "config"):
            raise ValueError(f"unknown gate source {source!r}")
        self.source = source
        self.register_buffer("gate_soft_scales", torch.full((n_devices,), float(soft_scale)))
        self.register_buffer("gate_floors", torch.full((n_devices,), float(floor)))
        self.register_buffer("gate_biases", torch.zeros(n_devices))
        floors = list(logits_floors) or [float("-inf")] * n_devices
        self.register_buffer("gate_logits_floors", torch.tensor(floors, dtype=torch.float32), persistent=False)

    def parameters_used(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(scale, floor, bias), each (1, D, 1), clamped as the evaluation clamps them."""
        D = self.gate_soft_scales.numel()
        if self.source == "criterion":
            s = torch.clamp(self.gate_soft_scales, min=0.5, max=6.0)
            f = torch.clamp(self.gate_floors, min=0.01, max=0.5)
            return s.view(1, D, 1), f.view(1, D, 1), self.gate_biases.view(1, D, 1)
        f = torch.clamp(self.gate_floors, min=0.0, max=1.0)
        return self.gate_soft_scales.view(1, D, 1), f.view(1, D, 1), torch.zeros(1, D, 1)

    def forward(self, power: torch.Tensor, logit: torch.Tensor, trace: Trace | None = None):
        """power, logit (B, D, L) -> (gated power (B, D, L), gate probability (B, D, L))."""
        s, f, b = self.parameters_used()
        logit = torch.nan_to_num(logit.float(), nan=0.0, posinf=0.0, neginf=0.0)
        if self.source == "criterion":
            logit = torch.maximum(logit, self.gate_logits_floors.view(1, -1, 1))
        p = torch.sigmoid(torch.clamp(logit * s + b, min=-50.0, max=50.0))
        put(trace, "gate.prob", p, AX, "12", SECTION, "sigmoid(clamp(max(logit, floor) * scale + bias))")
        gated = power * (f + (1.0 - f) * p)
        put(trace, "output.power", gated, AX, "12", SECTION, "power * (floor + (1 - floor) * p), scaled units")
        return gated, p
