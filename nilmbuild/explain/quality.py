"""How good an attribution is, measured (Batic, Stankovic & Stankovic 2024; Adebayo et al. 2018).

- faithfulness: `deletion_insertion`. Deletion replaces the most-attributed steps of x by the baseline, a
  growing fraction at a time, and tracks the target; insertion starts from the baseline and puts the
  most-attributed steps of x back. Both curves are normalised as (f(x_k) - f(baseline)) / (f(x) - f(baseline)):
  1 = the whole explained output, 0 = none of it. Areas under the curves over the fraction axis [0, 1]: a
  faithful attribution has a low deletion area and a high insertion area. `random_order` gives the same curves
  for a random ranking of the steps, the reference an attribution must beat.
- robustness: `max_sensitivity` (Captum's sensitivity_max, Yeh et al. 2019): the largest relative change
  ||a(x + d) - a(x)|| / ||a(x)|| over a few perturbations d uniform in [-radius, radius] watts per step.
- effective complexity: `effective_steps`, the smallest number of steps that carry `mass` (90 %) of the total
  absolute attribution.
- the model-randomisation sanity check: `randomised_model` re-initialises every weight; `spearman` is the rank
  correlation of two attribution maps (of their absolute values). An explanation that does not change when
  the weights are random explains the input, not the model.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

FRACTIONS = np.linspace(0.0, 1.0, 21)  # deletion / insertion points: 0 %, 5 %, ... 100 % of the steps
SENSITIVITY_RADIUS_W = 5.0  # watts: about a household meter's noise at 1-minute resolution
SENSITIVITY_SAMPLES = 3
MASS = 0.9


def ranked_curves(
    target, x: torch.Tensor, baseline: torch.Tensor, order: np.ndarray, fractions=FRACTIONS, insertion: bool = True
) -> dict:
    """Deletion and insertion curves for one input x (L,) with the steps ranked by `order` (most important
    first) at `fractions` of the steps -> {"fractions", "deletion", "insertion", "deletion_area", "insertion_area"}
    (insertion False: its curve and area are None, and its forward passes are not run)."""
    L = x.shape[-1]
    fractions = np.asarray(fractions, dtype=np.float64)
    counts = np.round(fractions * L).astype(int)
    keep_top = torch.zeros((len(counts), L), dtype=torch.bool)
    for i, k in enumerate(counts):
        keep_top[i, torch.as_tensor(order[:k], dtype=torch.long)] = True
    deleted = torch.where(keep_top, baseline, x)  # top-k steps replaced by the baseline
    inserted = torch.where(keep_top, x, baseline)  # only the top-k steps of x
    with torch.no_grad():
        ends = target(torch.stack([x, baseline])).double().numpy()
        dele = target(deleted).double().numpy()
        ins = target(inserted).double().numpy() if insertion else None
    span = ends[0] - ends[1]
    span = span if abs(span) > 1e-9 else np.nan
    dele = (dele - ends[1]) / span
    ins = None if ins is None else (ins - ends[1]) / span
    return {
        "fractions": fractions.tolist(),
        "deletion": dele.tolist(),
        "insertion": None if ins is None else ins.tolist(),
        "deletion_area": float(np.trapezoid(dele, fractions)),
        "insertion_area": None if ins is None else float(np.trapezoid(ins, fractions)),
    }


def deletion_insertion(target, x, baseline, attribution, fractions=FRACTIONS, insertion: bool = True) -> dict:
    """Curves for the ranking by attribution (largest positive first), x, baseline, attribution (L,)."""
    order = np.argsort(-np.asarray(attribution, dtype=np.float64), kind="stable")
    return ranked_curves(target, x, baseline, order, fractions, insertion)


def random_order(target, x, baseline, seed: int = 0, fractions=FRACTIONS) -> dict:
    """Curves for a random ranking: the reference area an attribution has to beat."""
    return ranked_curves(target, x, baseline, np.random.default_rng(seed).permutation(x.shape[-1]), fractions)


def effective_steps(attribution, mass: float = MASS) -> int:
    """Smallest number of steps whose |attribution| sums to at least `mass` of the total (0 for all-zero)."""
    a = np.sort(np.abs(np.asarray(attribution, dtype=np.float64)))[::-1]
    total = a.sum()
    if total <= 0:
        return 0
    return int(np.searchsorted(np.cumsum(a), mass * total - 1e-12 * total) + 1)


def max_sensitivity(
    explain_fn, x: torch.Tensor, radius: float = SENSITIVITY_RADIUS_W, samples: int = SENSITIVITY_SAMPLES, seed: int = 0
) -> float:
    """Captum sensitivity_max of explain_fn (x (N, L) -> attributions (N, L)) at x (1, L): perturbations uniform
    in [-radius, radius] watts per step, seeded."""
    return float(max_sensitivities(explain_fn, x, radius, samples, seed)[0])


def max_sensitivities(
    explain_fn,
    x: torch.Tensor,
    radius: float = SENSITIVITY_RADIUS_W,
    samples: int = SENSITIVITY_SAMPLES,
    seed: int = 0,
    **kwargs,
) -> np.ndarray:
    """max_sensitivity for every row of x (N, L) -> (N,): each row gets the perturbations max_sensitivity of that
    row alone would (the same seeded noise), so rows that repeat one window (one per explained device) stay equal
    and a memoised forward runs them once. kwargs go to explain_fn, expanded by Captum per perturbation (e.g.
    `target`: the output column each row explains)."""
    from captum.metrics import sensitivity_max

    gen = torch.Generator().manual_seed(seed)

    def perturb(inputs, perturb_radius=radius):  # (N * samples, L), each row of x repeated `samples` times
        shape = (samples, *inputs.shape[1:])
        noise = (torch.rand(shape, generator=gen, dtype=inputs.dtype) * 2 - 1) * perturb_radius
        return inputs + noise.repeat(inputs.shape[0] // samples, *([1] * (inputs.dim() - 1)))

    def explain(inputs, **kw):  # Captum passes (and expects back) a tuple of tensors
        return (explain_fn(inputs[0] if isinstance(inputs, tuple) else inputs, **kw),)

    value = sensitivity_max(
        explain, x, perturb_func=perturb, perturb_radius=radius, n_perturb_samples=samples, **kwargs
    )
    return value.reshape(-1).double().numpy()


def spearman(a, b) -> float:
    """Spearman rank correlation of |a| and |b| (average ranks for ties); nan when either is constant."""
    ra, rb = _ranks(np.abs(np.asarray(a, np.float64).ravel())), _ranks(np.abs(np.asarray(b, np.float64).ravel()))
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _ranks(v: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties sharing their average rank."""
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v), np.float64)
    ranks[order] = np.arange(1, len(v) + 1)
    uniq, inverse = np.unique(v, return_inverse=True)
    sums = np.bincount(inverse, weights=ranks)
    return (sums / np.bincount(inverse))[inverse]


def randomised_model(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """A copy of `model` with every parameter re-initialised under a seed: PyTorch's reset_parameters where a
    module has one (convolutions, linear layers, norms), N(0, 0.02^2) for the parameters other modules hold
    themselves (the positional encoding as at construction, a head's softplus amplitude)."""
    torch.manual_seed(seed)
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for module in twin.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
            else:  # parameters a module holds itself (the positional encoding, a head's amplitude)
                for p in module.parameters(recurse=False):
                    p.normal_(0.0, 0.02)
    return twin.eval()
