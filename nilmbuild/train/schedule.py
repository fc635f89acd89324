"""The training recipe's schedules (architecture.md 10.4): the learning rate over the steps, and per epoch the
crops, anti-collapse and output-stats weights."""

from __future__ import annotations

import math


def lr_factor(step: int, total: int, warmup_frac: float, min_ratio: float) -> float:
    """Linear warm-up over warmup_frac of the steps, then cosine decay to min_ratio at the last step."""
    warm = max(1, int(round(warmup_frac * total)))
    if step < warm:
        return (step + 1) / warm
    t = min(1.0, (step - warm) / max(1, total - warm))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * t))


def schedule(epoch: int, frac: float, epochs: int, warmup: int) -> dict:
    """10.4: warm-up (no crops, anti-collapse 1, output-stats alpha ramps 0 -> 1), then crops, alpha 1 and
    anti-collapse decaying linearly 1 -> 0.2 by the last epoch. frac in [0, 1): progress inside the epoch."""
    if epoch < warmup:
        return {"crops": False, "anti_collapse": 1.0, "out_stats_alpha": min(1.0, (epoch + frac) / warmup)}
    n = max(1, epochs - warmup)
    t = min(1.0, (epoch - warmup + frac + 1e-9) / n) if n > 1 else 1.0
    return {"crops": True, "anti_collapse": 1.0 - 0.8 * t, "out_stats_alpha": 1.0}
