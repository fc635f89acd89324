"""Event-biased multi-crop (architecture.md 10.4 and 13.6): k crops of crop_len per training sequence.

After warm-up every sequence of the batch gives k crops (k uniform in [n_min, n_max] per step) of
`crop_len` steps. A crop's centre is, with probability p_event, a random step where some device is ON
(event-biased), otherwise uniform; the crop is then shifted to lie inside the window. The model sees
the crop itself (B * k, 7, crop_len) and slices its positional encoding at the crop's positions
(`NILMFormer.forward(..., pos_start=)`), so a crop keeps the time position it had in the window.
"""

from __future__ import annotations

import torch


def sample_crops(
    states: torch.Tensor,
    generator: torch.Generator,
    crop_len: int,
    n_min: int = 2,
    n_max: int = 4,
    p_event: float = 0.7,
) -> tuple[torch.Tensor, torch.Tensor]:
    """states: (B, D, L) 0/1 -> (rows (B * k,) sequence index, starts (B * k,) first step of each crop)."""
    B, D, L = states.shape
    crop_len = min(crop_len, L)
    k = int(torch.randint(n_min, n_max + 1, (1,), generator=generator))
    any_on = states.amax(1) > 0.5  # (B, L)
    rows, starts = [], []
    for b in range(B):
        on_idx = torch.nonzero(any_on[b]).flatten()
        for _ in range(k):
            if on_idx.numel() and float(torch.rand((), generator=generator)) < p_event:
                c = int(on_idx[int(torch.randint(on_idx.numel(), (1,), generator=generator))])
            else:
                c = int(torch.randint(L, (1,), generator=generator))
            rows.append(b)
            starts.append(max(0, min(L - crop_len, c - crop_len // 2)))
    return torch.tensor(rows), torch.tensor(starts)


def take_crops(t: torch.Tensor, rows: torch.Tensor, starts: torch.Tensor, crop_len: int) -> torch.Tensor:
    """(B, C, L) -> (B * k, C, crop_len): row rows[i], steps starts[i] .. starts[i] + crop_len."""
    idx = (starts[:, None] + torch.arange(crop_len))[:, None, :].expand(-1, t.shape[1], -1)  # (B * k, C, l)
    return torch.gather(t[rows], 2, idx)
