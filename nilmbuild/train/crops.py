"""Event-biased multi-crop as loss masks (architecture.md 10.4).

The model's positional encoding is (1, 8, 480), so its input length is fixed. Instead of cutting
sequences (and re-padding to 480), a "crop" is a sub-range of the window over which the loss is
computed: the model still sees the full window (full context), and the loss mask is the union of
2-4 crops per sequence. Each crop's length is uniform in [min_frac, max_frac] * L; its centre is, with
probability p_event, a random time step where some device is ON (event-biased), otherwise uniform.
During warm-up the mask is all ones (full-sequence training).
"""

from __future__ import annotations

import torch


def crop_mask(states: torch.Tensor, generator: torch.Generator, n_min: int = 2, n_max: int = 4,
              min_frac: float = 0.125, max_frac: float = 0.5, p_event: float = 0.7) -> torch.Tensor:
    """states: (B, D, L) 0/1 -> (B, 1, L) float mask (1 inside the union of the crops)."""
    B, D, L = states.shape
    any_on = states.amax(1) > 0.5                                          # (B, L)
    mask = torch.zeros(B, 1, L)
    for b in range(B):
        k = int(torch.randint(n_min, n_max + 1, (1,), generator=generator))
        on_idx = torch.nonzero(any_on[b]).flatten()
        for _ in range(k):
            length = int(L * (min_frac + (max_frac - min_frac) * float(torch.rand((), generator=generator))))
            length = max(2, min(L, length))
            u = float(torch.rand((), generator=generator))
            if on_idx.numel() and u < p_event:
                c = int(on_idx[int(torch.randint(on_idx.numel(), (1,), generator=generator))])
            else:
                c = int(torch.randint(L, (1,), generator=generator))
            s = max(0, min(L - length, c - length // 2))
            mask[b, 0, s: s + length] = 1.0
    return mask
