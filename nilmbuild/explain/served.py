"""The Why page's explanations (issue 32 item 3): every device and method on one served window of the site, with
the quality numbers of quality.py, computed once per checkpoint, window and code (cached: served_cache.py).

For the window (aggregate watts x (L,), start t0), with the site's settings `SITE` (cheaper than `nilmbuild
explain`'s defaults; the page states them):
- targets: each device's energy over the whole window (sequence level, Wh) and its power at the step where its
  hard-gate output peaks (point level, W), K = 2 D of them, explained in one Captum call per method (x repeated K
  times, Captum's `target` = the column each row explains);
- "ig" and "saliency" follow the gradients of the soft-gate twin (api.gradient_output), "occlusion" runs the hard
  output; every occluded copy's watts of every device are kept (`passes`, (1 + P, D, L) in Captum's window order,
  row 0 the signal itself), so the page derives the occlusion attribution of any interval or step from them
  exactly as Captum does (static/js/occlusion.js), without the model;
- deletion curves (hard output) of every method and target; for the sequence-level targets also the insertion
  curves, a random ranking's curves and the quality table's other numbers (max-sensitivity, effective
  complexity, the model-randomisation check, the rank correlation with |input - baseline|, completeness gaps).

Forward passes without gradients go through one memo per model (`AllDevices`): a row (an input window) is run
once, whichever method, device or curve asks for it, so Captum's Occlusion for K targets costs its P passes once.

An imported upstream checkpoint (wrapper.py's module doc) has one output, "hard" in `outputs_of`: CondiNILM's
evaluation output (its external soft gate, differentiable) or the original NILMFormer's (no gate). Every method
and curve explains it, ig and saliency follow its own gradients, and the quality rows have one completeness gap,
`completeness_hard`; the model-randomisation twin re-initialises every weight of the network (CondiNILM's stored
gate scale, floor and bias are buffers of its evaluation, not weights, and stay).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from torch import nn

from . import quality as q
from .api import gradient_output
from .methods import METHODS, Settings, attribute
from .wrapper import Interval, WattsToDevice, outputs_of, window_baseline


@dataclass(frozen=True)
class SiteSettings:
    """The Why page's cost knobs (docs/attributions.md, "The Why page")."""

    methods: Settings = Settings(ig_steps=1, occlusion_window=16, occlusion_stride=8, batch=32)
    fractions: int = 6  # deletion / insertion points: 0 %, 20 %, ... 100 % of the steps
    point_methods: tuple = ("occlusion", "saliency")  # also explained at each device's peak step (ig: one costs 7
    # segments x ig_steps backward passes per device; occlusion of any step comes from its passes anyway)
    sensitivity_samples: int = 1  # perturbations of max-sensitivity (nilmbuild explain --quality: 3)
    chunk: int = 64  # rows per forward pass of the memo


SITE = SiteSettings()


class AllDevices(nn.Module):
    """aggregate watts (N, L) -> every device's output watts (N, D, L) (WattsToDevice for all devices at once).
    Without gradients each distinct row runs once (memo by its bytes), in chunks of `chunk` rows."""

    def __init__(self, loaded, start, gate: str, model=None, chunk: int = SITE.chunk) -> None:
        from nilmbuild.data.preprocess import scaler_affines

        super().__init__()
        self.f = WattsToDevice(loaded, start, loaded.devices[0], gate)
        if model is not None:
            self.f.model = model
        aff = scaler_affines(loaded.scalers)["appliances"]
        self.a_out = torch.tensor([aff[d]["a"] for d in loaded.devices], dtype=torch.float64)[:, None]
        self.b_out = torch.tensor([aff[d]["b"] for d in loaded.devices], dtype=torch.float64)[:, None]
        self.chunk, self.memo, self.runs = int(chunk), {}, 0

    def run(self, agg_w: torch.Tensor) -> torch.Tensor:
        f = self.f
        x = f.model_input(agg_w)
        out = f.model(x, gate_mode=f.gate) if f.architecture == "spec" else f.model(x)
        watts = (out.power.double() * self.a_out + self.b_out).float()  # (N, D, L), as WattsToDevice per device
        return watts.clamp(min=0.0) if f.architecture == "condinilm" else watts

    def forward(self, agg_w: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and agg_w.requires_grad:
            return self.run(agg_w)
        rows = agg_w.detach().contiguous()
        keys = [r.numpy().tobytes() for r in rows]
        first: dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k not in self.memo:
                first.setdefault(k, i)
        todo = list(first.items())
        for at in range(0, len(todo), self.chunk):
            part = todo[at : at + self.chunk]
            with torch.no_grad():
                out = self.run(rows[[i for _, i in part]])
            self.runs += len(part)
            self.memo.update(zip([k for k, _ in part], out))
        return torch.stack([self.memo[k] for k in keys])


class Targets(nn.Module):
    """aggregate watts (N, L) -> (N, K): the K explained numbers, one (device index, Interval) each, as
    wrapper.Target computes them (Wh over [lo, hi), or W at a point)."""

    def __init__(self, watts: AllDevices, targets, step_s: float) -> None:
        super().__init__()
        self.watts, self.targets, self.scale = watts, list(targets), float(step_s) / 3600.0

    def forward(self, agg_w: torch.Tensor) -> torch.Tensor:
        w = self.watts(agg_w)
        cols = [w[:, d, iv.lo : iv.hi].sum(dim=1) * (1.0 if iv.point else self.scale) for d, iv in self.targets]
        return torch.stack(cols, dim=1)

    def column(self, k: int):
        """The k-th target alone, (N, L) -> (N,) (what quality.py's curves take)."""
        return lambda agg_w: self(agg_w)[:, k]


def occlusion_windows(n: int, size: int, stride: int) -> list[tuple[int, int]]:
    """Captum Occlusion's windows over n steps, [lo, hi): ceil((n - size) / stride) + 1 of them, the last one cut
    at the end (static/js/occlusion.js `windows`, the page's copy of this rule)."""
    count = -(-(n - size) // stride) + 1
    return [(k * stride, min(n, k * stride + size)) for k in range(count)]


def occlusion_passes(hard: AllDevices, x: torch.Tensor, base: torch.Tensor, settings: Settings) -> np.ndarray:
    """(1 + P, D, L) watts: the signal x (L,), then x with each occlusion window replaced by the baseline."""
    L = x.shape[-1]
    rows = [x]
    for lo, hi in occlusion_windows(L, settings.occlusion_window, settings.occlusion_stride):
        keep = torch.ones(L, dtype=torch.bool)
        keep[lo:hi] = False
        rows.append(torch.where(keep, x, base))
    return hard(torch.stack(rows)).numpy()


PROGRESS_UNITS = 1 + 2 * len(METHODS)  # explain_served's calls of `progress`: the passes, then two per method


def explain_served(loaded, aggregate_w, start, settings: SiteSettings = SITE, progress=None) -> dict:
    """Everything the Why page shows for one window (see the module doc); plain arrays, lists and numbers.
    progress: called with 1 after each of PROGRESS_UNITS parts (a progress bar's `update`), or None."""
    from .api import _step_s

    tick = progress or (lambda n: None)

    agg = np.asarray(aggregate_w, dtype=np.float32).reshape(-1)
    x, base = torch.from_numpy(agg), torch.from_numpy(window_baseline(agg))
    D, L, step_s = len(loaded.devices), agg.shape[0], _step_s(loaded)
    hard = AllDevices(loaded, start, "hard", chunk=settings.chunk)
    passes = occlusion_passes(hard, x, base, settings.methods)
    tick(1)
    peaks = [int(p) for p in np.argmax(passes[0], axis=1)]
    targets = [(d, Interval(0, L)) for d in range(D)] + [(d, Interval(p, p + 1, True)) for d, p in enumerate(peaks)]
    models = {
        g: hard if g == "hard" else AllDevices(loaded, start, g, chunk=settings.chunk) for g in outputs_of(loaded)
    }
    explained = Targets(hard, targets, step_s)
    active = active_devices(explained, x, base, D)
    fr = np.linspace(0.0, 1.0, settings.fractions)
    attr, curves = {}, {}
    for m in METHODS:
        ks = [k for k, (d, iv) in enumerate(targets) if active[d] and (not iv.point or m in settings.point_methods)]
        attr[m] = _stored(models, loaded, targets, ks, x, base, m, settings)
        curves[m] = [
            _curves(explained, k, x, base, attr[m][k], fr, k < D) if k in ks else None for k in range(len(targets))
        ]
        tick(1)
    rand = [q.random_order(explained.column(d), x, base, 0, fr) if active[d] else None for d in range(D)]
    quality = _quality(loaded, start, models, targets[:D], active, x, base, attr, curves, rand, settings, tick)
    return {
        "settings": {**asdict(settings.methods), **{k: v for k, v in asdict(settings).items() if k != "methods"}},
        "aggregate_w": agg,
        "baseline_w": base.numpy(),
        "passes": passes,
        "windows": occlusion_windows(L, settings.methods.occlusion_window, settings.methods.occlusion_stride),
        "targets": [{"device": d, "lo": iv.lo, "hi": iv.hi, "point": iv.point} for d, iv in targets],
        "active": [bool(a) for a in active],
        "attributions": {m: attr[m].astype(np.float32) for m in METHODS},
        "curves": curves,
        "fractions": fr.tolist(),
        "random_curves": {loaded.devices[d]: rand[d]["deletion"] for d in range(D) if rand[d]},
        "quality": quality,
        "forward_rows": sum(m.runs for m in models.values()),
    }


def active_devices(explained: Targets, x, base, D: int) -> list[bool]:
    """Which devices the model predicts in the window: the hard output's energy at the input is at least twice its
    energy at the baseline (a closed gate still gives the output FiLM's small constant, so an OFF device's
    f(x) - f(baseline) is a near-zero difference of two offsets, and curves normalised by it mean nothing)."""
    with torch.no_grad():
        v = explained(torch.stack([x, base]))[:, :D].double().numpy()
    return [bool(v[0, d] > 0 and v[0, d] - v[1, d] >= 0.5 * v[0, d]) for d in range(D)]


def _stored(models, loaded, targets, ks, x, base, method, settings: SiteSettings) -> np.ndarray:
    """(K, L) attributions of targets `ks` by `method`, NaN rows for the others (not computed: a device the model
    does not predict here, or a point target of a method outside `settings.point_methods`). Occlusion explains
    every target (its passes are run anyway)."""
    from .api import _step_s

    ks = range(len(targets)) if method == "occlusion" else ks
    out = np.full((len(targets), x.shape[-1]), np.nan)
    if ks:
        rows = [targets[k] for k in ks]
        out[list(ks)] = _attribute(models, loaded, rows, x, base, method, settings, _step_s(loaded))
    return out


def _curves(explained, k, x, base, attribution, fr, insertion: bool) -> dict:
    """Target k's deletion curve (and insertion, for the sequence-level ones) for an attribution."""
    c = q.deletion_insertion(explained.column(k), x, base, attribution, fr, insertion)
    return {"deletion": c["deletion"], "insertion": c["insertion"]}


def _attribute(models, loaded, targets, x, base, method, settings: SiteSettings, step_s) -> np.ndarray:
    """(K, L) attributions of the K targets by `method` (the model whose output its gradients follow)."""
    gate = gradient_output(method, loaded) or "hard"
    K = len(targets)
    xs, bs = x.expand(K, -1).clone().requires_grad_(method == "saliency"), base.expand(K, -1).contiguous()
    tgt = Targets(models[gate], targets, step_s)
    return attribute(tgt, xs, bs, method, per_rows(settings, K, method), column=torch.arange(K)).double().numpy()


def per_rows(settings: SiteSettings, rows: int, method: str) -> Settings:
    """The method settings for `rows` inputs at once: IG's batches then hold about `batch` windows in all (Captum
    multiplies its internal batch by the rows), not `batch` per row (memory under autograd). Occlusion keeps
    `batch` perturbations per evaluation: its rows repeat one window per perturbation, which the memo runs once."""
    if method == "occlusion":
        return settings.methods
    return replace(settings.methods, batch=max(1, settings.methods.batch // rows))


def _quality(loaded, start, models, seq_targets, active, x, base, attr, curves, rand, settings, tick) -> list[dict]:
    """quality.py's numbers for the sequence-level targets of the devices the model predicts here (one row per
    method and device; a device it does not predict gets a row with `active` False and no numbers)."""
    from .api import _step_s

    on = [d for d in range(len(seq_targets)) if active[d]]
    step_s, fr = _step_s(loaded), np.linspace(0.0, 1.0, settings.fractions)
    mine = [seq_targets[d] for d in on]
    twin = q.randomised_model(loaded.model)
    twins = {g: AllDevices(loaded, start, g, model=twin, chunk=settings.chunk) for g in models}
    gaps = _gap_ends(models, mine, x, base, step_s) if on else {}
    rows = []
    for m in METHODS:
        rnd = _attribute(twins, loaded, mine, x, base, m, settings, step_s) if on else []
        sens = _sensitivity(models, loaded, mine, x, m, settings, step_s) if on else []
        for d in range(len(seq_targets)):
            row = {"device": loaded.devices[d], "method": m, "active": bool(active[d])}
            if active[d]:
                i, a = on.index(d), attr[m][d]
                row.update(
                    {
                        "deletion_area": _area(curves[m][d]["deletion"], fr),
                        "insertion_area": _area(curves[m][d]["insertion"], fr),
                        "random_deletion_area": rand[d]["deletion_area"],
                        "random_insertion_area": rand[d]["insertion_area"],
                        "max_sensitivity": float(sens[i]),
                        "effective_steps": q.effective_steps(a),
                        "randomised_spearman": q.spearman(a, rnd[i]),
                        "input_spearman": q.spearman(a, (x - base).numpy()),
                        **_gaps(gaps, a.sum(), i, m),
                    }
                )
            rows.append(row)
        tick(1)
    return rows


def _area(curve, fr) -> float:
    return float(np.trapezoid(np.asarray(curve, dtype=np.float64), fr))


def _gap_ends(models, seq_targets, x, base, step_s) -> dict:
    """{gate: (D,) f(x) - f(baseline)} of the sequence-level targets, for each output in `models`."""
    out = {}
    for gate, model in models.items():
        with torch.no_grad():
            v = Targets(model, seq_targets, step_s)(torch.stack([x, base])).double().numpy()
        out[gate] = v[0] - v[1]
    return out


def _gaps(ends: dict, total: float, d: int, method: str) -> dict:
    """completeness gaps (api.completeness), one per output of the model: none for occlusion (its values are means
    over windows)."""
    if method == "occlusion":
        return {f"completeness_{g}": float("nan") for g in ends}
    return {f"completeness_{g}": float(total - ends[g][d]) for g in ends}


def _sensitivity(models, loaded, seq_targets, x, method, settings: SiteSettings, step_s) -> np.ndarray:
    """(D,) max-sensitivity of each device's sequence-level attribution (quality.max_sensitivities)."""
    gate = gradient_output(method, loaded) or "hard"
    tgt = Targets(models[gate], seq_targets, step_s)

    def explain(inputs, target=None):
        b = inputs.min(dim=1, keepdim=True).values.expand_as(inputs).contiguous()
        xs = inputs.detach().requires_grad_(method == "saliency")  # as Captum's Saliency sets it (no warning)
        return attribute(tgt, xs, b, method, per_rows(settings, inputs.shape[0], method), column=target)

    D = len(seq_targets)
    xs = x.expand(D, -1).contiguous()
    return q.max_sensitivities(explain, xs, samples=settings.sensitivity_samples, target=torch.arange(D))
