"""Attribution methods, all from Captum, over a `Target` (aggregate watts (N, L) -> one number per row).

- "ig": Integrated Gradients (Sundararajan et al. 2017) on the straight path from the baseline to the input,
  integrated piecewise: Captum's IG on each segment [a_k, a_(k+1)] of IG_EDGES (Gauss-Legendre, `ig_steps`
  points each) and summed. The straight path and the IG definition are unchanged (IG is additive over the
  segments of a path); only the quadrature is finer near the baseline. Why: the model normalises the aggregate
  per window (instance norm, stage 1), so along baseline + a (x - baseline) the normalised signal is already
  the input's own shape for a >~ 1e-4 and the output jumps for tiny a (measured in docs/attributions.md): one
  uniform grid over [0, 1] misses that jump and breaks completeness.
- "occlusion": Captum's Occlusion with sliding windows of `occlusion_window` steps, stride `occlusion_stride`,
  each window replaced by the baseline; forward passes only (no gradients), so it explains the hard-gate output
  exactly as it is.
- "saliency": the gradient (Captum's Saliency, signed) times (input - baseline): the one-step, first-order
  cousin of IG, the cheap baseline to compare against.

Attributions are in the target's unit (Wh or W) per step of the aggregate: how much of f(x) - f(baseline) each
step accounts for.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

METHODS = ("ig", "occlusion", "saliency")
#: Segment edges of IG's path parameter a in [0, 1]: geometric near the baseline (see module docstring).
IG_EDGES = (0.0, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 0.5, 1.0)


@dataclass(frozen=True)
class Settings:
    """Cost knobs (docs/attributions.md has their timings on 2 cores)."""

    ig_steps: int = 8  # Gauss-Legendre points per IG segment: len(IG_EDGES) - 1 segments
    occlusion_window: int = 16  # steps replaced at once (16 min at 60 s)
    occlusion_stride: int = 8
    batch: int = 16  # inputs per forward pass inside Captum


DEFAULT = Settings()


def attribute(
    target, x: torch.Tensor, baseline: torch.Tensor, method: str, settings: Settings = DEFAULT, bar=None, column=None
):
    """(N, L) attributions of `target` at x (N, L) watts against baseline (N, L) watts. column: None when `target`
    gives one number per row; else Captum's `target`, the output column explained for each row (N,) when it gives
    several (N, K) (the Why page explains every device at once: nilmbuild/explain/served.py)."""
    if method == "ig":
        return integrated_gradients(target, x, baseline, settings, bar, column)
    if method == "occlusion":
        return occlusion(target, x, baseline, settings, column)
    if method == "saliency":
        return gradient_times_delta(target, x, baseline, column)
    raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")


def integrated_gradients(target, x, baseline, settings: Settings = DEFAULT, bar=None, column=None) -> torch.Tensor:
    """IG over the path baseline -> x, summed over the segments of IG_EDGES (Captum IntegratedGradients each)."""
    from captum.attr import IntegratedGradients

    ig, total = IntegratedGradients(target), torch.zeros_like(x)
    for a0, a1 in zip(IG_EDGES[:-1], IG_EDGES[1:]):
        lo, hi = baseline + a0 * (x - baseline), baseline + a1 * (x - baseline)
        total += ig.attribute(
            hi, lo, target=column, n_steps=settings.ig_steps, internal_batch_size=settings.batch * x.shape[0]
        )
        if bar is not None:
            bar.update()
    return total.detach()


def occlusion(target, x, baseline, settings: Settings = DEFAULT, column=None) -> torch.Tensor:
    """Captum Occlusion: each window of steps replaced by the baseline; a step's value is the mean drop of the
    target over the windows that cover it."""
    from captum.attr import Occlusion

    return (
        Occlusion(target)
        .attribute(
            x,
            sliding_window_shapes=(settings.occlusion_window,),
            strides=(settings.occlusion_stride,),
            baselines=baseline,
            target=column,
            perturbations_per_eval=settings.batch,
        )
        .detach()
    )


def gradient_times_delta(target, x, baseline, column=None) -> torch.Tensor:
    """Captum Saliency (signed gradient at x) times (x - baseline)."""
    from captum.attr import Saliency

    return (Saliency(target).attribute(x, target=column, abs=False) * (x - baseline)).detach()


def steps_for(method: str, settings: Settings = DEFAULT) -> int:
    """Units of progress `attribute` reports for a method (IG: one per segment)."""
    return len(IG_EDGES) - 1 if method == "ig" else 1
