"""Multi-task adaptive loss (architecture.md 10.1), computed for all devices at once on scaled targets.

Every component is a (D,) tensor (one value per device) so the trainer can log each one separately and
PCGrad can treat each device's weighted sum as its own task loss. Inputs:

    power, gate_logit: (B, D, L) model outputs (`out.power`, `out.gate_logit`)
    target:            (B, D, L) scaled target power (y[:, :, 0])
    state:             (B, D, L) ON/OFF 0/1 (y[:, :, 1], duration-filtered by prepare())
    mask:              (B, 1, L) or (B, D, L) 0/1 loss mask (multi-crop sub-ranges; 1 everywhere otherwise)
    long_off:          (B, D, L) 0/1, inside OFF runs longer than the device's `long_off_steps` (long_off_mask)

Components (masked means; eps avoids 0/0 where a window has no ON or no OFF sample):

    mae_on      mean |p - y| over ON samples
    mae_off     mean |p - y| over OFF samples
    peak        mean over windows of |max_t p - max_t y|
    grad        mean |dp/dt - dy/dt| (first differences, both ends inside the mask)
    energy      mean over windows of |mean_t p - mean_t y| (window energy per step)
    zero        mean relu(p) over OFF samples (any predicted power while OFF)
    long_off    mean relu(p) over samples inside long OFF runs (false activations)
    gate_bce    BCE(gate_logit, state), ON samples weighted by the device's pos_weight
    anti_collapse  relu(1 - sum(p * on) / sum(y * on)) over the batch: the predicted ON energy collapsing
                below the target's (0 when the batch has no ON sample); weight from the schedule
    out_stats   mean over windows of |mean p - mean y| + |std p - std y|; weight alpha from the schedule
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

COMPONENTS = (
    "mae_on",
    "mae_off",
    "peak",
    "grad",
    "energy",
    "zero",
    "long_off",
    "gate_bce",
    "anti_collapse",
    "out_stats",
)
EPS = 1e-6


@dataclass(frozen=True)
class LossWeights:
    """Per-device weights of the 10.1 components (the device type picks them, device_types.TYPE_WEIGHTS)."""

    alpha_on: float = 1.0
    alpha_off: float = 1.0
    w_peak: float = 0.1
    w_grad: float = 0.2
    w_energy: float = 0.5
    lambda_zero: float = 0.1
    lambda_off: float = 0.2
    w_gate: float = 0.5
    pos_weight: float = 1.0  # BCE weight of ON samples (rare devices: > 1)
    long_off_steps: int = 30  # an OFF run longer than this (steps) is "long OFF"

    def to_dict(self) -> dict:
        return asdict(self)


def _mmean(v: torch.Tensor, m: torch.Tensor, dims=(0, 2)) -> torch.Tensor:
    """Masked mean over `dims` -> (D,)."""
    return (v * m).sum(dims) / (m.sum(dims) + EPS)


def loss_components(
    power, gate_logit, target, state, mask=None, long_off=None, pos_weight=None
) -> dict[str, torch.Tensor]:
    """All components, each (D,) (unweighted). pos_weight: (D,) tensor or None (= 1)."""
    B, D, L = power.shape
    m = torch.ones(B, 1, L, dtype=power.dtype, device=power.device) if mask is None else mask.to(power.dtype)
    m = m.expand(B, D, L)
    on = state.to(power.dtype)
    off = 1.0 - on
    err = (power - target).abs()
    c = {}
    c["mae_on"] = _mmean(err, m * on)
    c["mae_off"] = _mmean(err, m * off)
    # peak: masked maxima per window (targets >= 0, so masked-out samples as -inf never win)
    neg = torch.finfo(power.dtype).min
    has = m.sum(2) > 0  # (B, D)
    pk_p = power.masked_fill(m == 0, neg).amax(2)
    pk_y = target.masked_fill(m == 0, neg).amax(2)
    c["peak"] = torch.where(has, (pk_p - pk_y).abs(), torch.zeros_like(pk_p)).sum(0) / (has.sum(0) + EPS)
    m2 = m[..., 1:] * m[..., :-1]
    c["grad"] = _mmean((power.diff(dim=2) - target.diff(dim=2)).abs(), m2)
    n = m.sum(2) + EPS  # (B, D)
    mu_p, mu_y = (power * m).sum(2) / n, (target * m).sum(2) / n
    c["energy"] = (mu_p - mu_y).abs().mean(0)
    relu_p = F.relu(power)
    c["zero"] = _mmean(relu_p, m * off)
    lo = torch.zeros_like(power) if long_off is None else long_off.to(power.dtype)
    c["long_off"] = _mmean(relu_p, m * lo)
    pw = (
        torch.ones(D, dtype=power.dtype, device=power.device)
        if pos_weight is None
        else pos_weight.to(power.device, power.dtype)
    )
    bce = -(pw.view(1, D, 1) * on * F.logsigmoid(gate_logit) + off * F.logsigmoid(-gate_logit))
    c["gate_bce"] = _mmean(bce, m)
    e_y = (target * on * m).sum((0, 2))
    e_p = (power * on * m).sum((0, 2))
    c["anti_collapse"] = torch.where(e_y > EPS, F.relu(1.0 - e_p / (e_y + EPS)), torch.zeros_like(e_y))
    sd_p = (((power - mu_p[..., None]) ** 2 * m).sum(2) / n).clamp_min(EPS).sqrt()
    sd_y = (((target - mu_y[..., None]) ** 2 * m).sum(2) / n).clamp_min(EPS).sqrt()
    c["out_stats"] = ((mu_p - mu_y).abs() + (sd_p - sd_y).abs()).mean(0)
    return c


def weight_matrix(weights: list[LossWeights], anti_collapse: float, out_stats_alpha: float) -> dict[str, torch.Tensor]:
    """component -> (D,) weight tensor for the given per-device weights and schedule values."""
    w = {
        "mae_on": [x.alpha_on for x in weights],
        "mae_off": [x.alpha_off for x in weights],
        "peak": [x.w_peak for x in weights],
        "grad": [x.w_grad for x in weights],
        "energy": [x.w_energy for x in weights],
        "zero": [x.lambda_zero for x in weights],
        "long_off": [x.lambda_off for x in weights],
        "gate_bce": [x.w_gate for x in weights],
        "anti_collapse": [anti_collapse] * len(weights),
        "out_stats": [out_stats_alpha] * len(weights),
    }
    return {k: torch.tensor(v, dtype=torch.float32) for k, v in w.items()}


def device_losses(comps: dict[str, torch.Tensor], wmat: dict[str, torch.Tensor]) -> torch.Tensor:
    """Weighted sum of the components per device -> (D,) task losses (PCGrad's tasks)."""
    return sum(wmat[k].to(v.device) * v for k, v in comps.items())


def uncertainty_weighted(losses: torch.Tensor, log_vars: torch.Tensor) -> torch.Tensor:
    """Homoscedastic-uncertainty task weighting (Kendall, Gal & Cipolla 2018): (D,) task losses L_i and learned
    s_i = log sigma_i^2 -> (D,) exp(-s_i) L_i + s_i. At the optimum over s_i, exp(-s_i) = 1 / L_i: a task whose
    loss is large gets a small weight, so no device's loss scale dominates the shared trunk."""
    return torch.exp(-log_vars) * losses + log_vars


def long_off_mask(states: np.ndarray, long_off_steps) -> np.ndarray:
    """(N, D, L) 0/1 states -> (N, D, L) uint8, 1 inside OFF runs longer than long_off_steps[d] steps
    (runs are measured inside each window)."""
    s = np.asarray(states) > 0.5
    N, D, L = s.shape
    off = ~s
    fwd = np.zeros((N, D, L), np.int32)
    bwd = np.zeros((N, D, L), np.int32)
    run = np.zeros((N, D), np.int32)
    for t in range(L):
        run = (run + 1) * off[:, :, t]
        fwd[:, :, t] = run
    run[:] = 0
    for t in range(L - 1, -1, -1):
        run = (run + 1) * off[:, :, t]
        bwd[:, :, t] = run
    length = fwd + bwd - 1  # run length at OFF samples
    thr = np.asarray(long_off_steps, dtype=np.int32).reshape(1, D, 1)
    return (off & (length > thr)).astype(np.uint8)
