"""What-ifs of an upstream model as tensors, so that its live graph (nilmbuild/live/export.py) can take them as inputs:
- mask_diagonal (): 1 masks the attention diagonal in every layer (as configured, both upstreams), 0 does not;
- film_on (): CondiNILM with FiLM only. 1 keeps both FiLMs, 0 sets every gamma and beta to 0: for finite x,
  (1 + 0) x + 0 = x exactly, i.e. the model with FiLM off.

UpstreamWhatIf.defaults(cfg) reproduces the model exactly; UpstreamNILMFormer.forward(x, what_if=None) is the
captured forward pass. Flags are float32 (> 0.5 means on), as the spec's what-ifs (model/whatif.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


def fields(cfg) -> tuple[str, ...]:
    """The what-if inputs the model has: the diagonal mask, and FiLM on/off when it has FiLM."""
    return ("mask_diagonal",) + (("film_on",) if cfg.arch == "condinilm" and cfg.use_film else ())


@dataclass
class UpstreamWhatIf:
    mask_diagonal: torch.Tensor  # () float32
    film_on: torch.Tensor | None = None  # () float32; None: the model has no FiLM

    @classmethod
    def defaults(cls, cfg) -> UpstreamWhatIf:
        """The settings that reproduce the checkpoint: its diagonal mask as configured, FiLM on if it has FiLM."""
        f = torch.float32
        on = torch.tensor(1.0, dtype=f) if "film_on" in fields(cfg) else None
        return cls(mask_diagonal=torch.tensor(1.0 if cfg.mask_diagonal else 0.0, dtype=f), film_on=on)

    @classmethod
    def of(cls, cfg, tensors) -> UpstreamWhatIf:
        """From the graph's what-if inputs, in fields(cfg) order."""
        return cls(**dict(zip(fields(cfg), tensors)))

    def replace(self, **changes) -> UpstreamWhatIf:
        out = {k: getattr(self, k) for k in ("mask_diagonal", "film_on")}
        out.update({k: torch.as_tensor(v, dtype=torch.float32) for k, v in changes.items()})
        return UpstreamWhatIf(**out)


def film_scaled(what_if: UpstreamWhatIf | None, gamma: torch.Tensor, beta: torch.Tensor):
    """gamma, beta times film_on (unchanged without a what-if or a FiLM switch)."""
    if what_if is None or what_if.film_on is None:
        return gamma, beta
    return gamma * what_if.film_on, beta * what_if.film_on


def mask_flag(what_if: UpstreamWhatIf | None, static: bool) -> bool | torch.Tensor:
    """The attention's mask_diagonal: the configured flag, or a () bool tensor decided at run time."""
    return static if what_if is None else what_if.mask_diagonal > 0.5
