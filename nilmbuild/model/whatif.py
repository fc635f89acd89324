"""What-if settings as tensors, so one exported graph can take them as inputs (issue 11 item 4, docs/live-model.md).

NILMFormer.forward(x, what_if=WhatIf(...)) changes, at run time and without re-tracing:
- thresholds (D,): each device's hard-gate threshold (p > threshold); 1.0 closes the gate;
- film_enc_affine (layers, 4): per encoder layer [gamma scale, gamma offset, beta scale, beta offset], applied to
  the device-mean FiLM parameters as gamma * scale + offset (what the FiLM page's sliders do);
- film_on (): 1 keeps both FiLMs, 0 sets every gamma and beta to 0, i.e. FiLM off (use_film=False): for finite
  x, (1 + 0) * x + 0 = x exactly;
- mask_diagonal (): 1 masks the attention diagonal in every layer, 0 does not (mask_diagonal=False);
- soft_gate (): 0 gates with the hard threshold, 1 with smoothstep(p) (gate_mode="soft", the training gate).

WhatIf.defaults(cfg) reproduces the model exactly (x * 1 + 0 = x, and the flags pick today's branch), so the
graph at its default inputs equals the checkpoint. Flags are float32 (> 0.5 means on): onnxruntime-web feeds
float32 more simply than bool. Without a WhatIf the forward pass is exactly the one that is traced and captured.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

FIELDS = ("thresholds", "film_enc_affine", "film_on", "mask_diagonal", "soft_gate")


@dataclass
class WhatIf:
    thresholds: torch.Tensor  # (D,) float32
    film_enc_affine: torch.Tensor  # (layers, 4) float32: gamma scale, gamma offset, beta scale, beta offset
    film_on: torch.Tensor  # () float32
    mask_diagonal: torch.Tensor  # () float32
    soft_gate: torch.Tensor  # () float32

    @classmethod
    def defaults(cls, cfg) -> WhatIf:
        """The settings that reproduce the checkpoint (its thresholds, identity FiLM affine, FiLM and mask as
        configured, hard gate)."""
        f = torch.float32
        affine = torch.tensor([[1.0, 0.0, 1.0, 0.0]] * cfg.n_encoder_layers, dtype=f)
        return cls(
            thresholds=torch.tensor([d.gate_threshold for d in cfg.devices], dtype=f),
            film_enc_affine=affine,
            film_on=torch.tensor(1.0 if cfg.use_film else 0.0, dtype=f),
            mask_diagonal=torch.tensor(1.0 if cfg.mask_diagonal else 0.0, dtype=f),
            soft_gate=torch.tensor(0.0, dtype=f),
        )

    def replace(self, **changes) -> WhatIf:
        return WhatIf(**{k: torch.as_tensor(changes.get(k, getattr(self, k)), dtype=torch.float32) for k in FIELDS})


# Each of these leaves the model's own values alone when what_if is None (the traced and captured forward pass).
def encoder_film(what_if: WhatIf | None, gamma: torch.Tensor, beta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """gamma, beta (B, layers, d_model): (gamma * scale + offset) * film_on per layer, and the same for beta."""
    if what_if is None:
        return gamma, beta
    a, on = what_if.film_enc_affine, what_if.film_on  # (layers, 4), ()
    return (gamma * a[:, 0:1] + a[:, 1:2]) * on, (beta * a[:, 2:3] + a[:, 3:4]) * on


def output_film(what_if: WhatIf | None, gamma: torch.Tensor, beta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if what_if is None:
        return gamma, beta
    return gamma * what_if.film_on, beta * what_if.film_on


def mask_diagonal(what_if: WhatIf | None, static: bool) -> bool | torch.Tensor:
    """The attention's mask_diagonal: the static flag, or a () bool tensor decided at run time."""
    return static if what_if is None else what_if.mask_diagonal > 0.5


def threshold(what_if: WhatIf | None, own: torch.Tensor, i: int) -> torch.Tensor:
    return own if what_if is None else what_if.thresholds[i]


def gate(what_if: WhatIf | None, soft_gated: torch.Tensor, gated: torch.Tensor) -> torch.Tensor:
    """The gated power: as gate_mode chose, or smoothstep-gated where the soft_gate input is on."""
    return gated if what_if is None else torch.where(what_if.soft_gate > 0.5, soft_gated, gated)
