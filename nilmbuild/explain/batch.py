"""The quality table: every method measured per device on the captured batch (the site's example windows).

Windows: the example batch of `nilmbuild site` (nilmbuild.data.preprocess.example_batch: the test split, seed 0,
32 windows drawn round-robin over devices from windows where each device is ON). Per device, the `windows`
windows where the explained (hard-gate) output's energy rises most above its value at the baseline are
explained, sequence level (the device's energy over the whole window, Wh): a window where the model predicts
the device OFF has nothing to explain. Each row averages over those windows.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from . import quality as q
from .api import completeness, gradient_output, make_target
from .methods import DEFAULT, METHODS, Settings, attribute
from .wrapper import Interval, window_baseline

COLUMNS = (
    ("deletion_area", "deletion AUC (lower = more faithful)"),
    ("insertion_area", "insertion AUC (higher = more faithful)"),
    ("random_deletion_area", "deletion AUC of a random ranking (reference)"),
    ("random_insertion_area", "insertion AUC of a random ranking (reference)"),
    ("max_sensitivity", "max relative change under +-5 W noise (lower = more robust)"),
    ("effective_steps", "steps holding 90 % of |attribution| (lower = simpler)"),
    ("randomised_spearman", "rank correlation with a randomised model's attribution (lower = passes)"),
    ("input_spearman", "rank correlation of |attribution| with |input - baseline| (reference)"),
    ("completeness_hard", "sum(attr) - (f(x) - f(baseline)), hard output, Wh"),
    ("completeness_soft", "the same for the soft-gate output, Wh"),
    ("seconds", "seconds per explanation (this machine)"),
)


def captured_windows(
    loaded, source: str | None = None, house: int | None = None, unit: str | None = None, batch: int = 32, seed: int = 0
):
    """The site's example batch as aggregate watts (B, L) and window starts (B,) datetime64[s]."""
    from nilmbuild.data.preprocess import example_batch, scaler_affines
    from nilmbuild.pipeline import load_household_for, prepare_for

    prepared = prepare_for(loaded, load_household_for(loaded, source, house, unit=unit))
    x, _, t0 = example_batch(prepared, split="test", batch_size=batch, seed=seed)
    ab = scaler_affines(loaded.scalers)["aggregate"]
    return (x[:, 0].astype(np.float64) * ab["a"] + ab["b"]).astype(np.float32), t0.astype("datetime64[s]")


def pick_windows(loaded, aggw: np.ndarray, t0: np.ndarray, device: str, k: int) -> list[int]:
    """Indices of the k windows whose hard-gate energy of `device` is furthest above its baseline value."""
    gain = []
    for b in range(aggw.shape[0]):
        target = make_target(loaded, t0[b], device, Interval(0, aggw.shape[1]), "hard")
        x = torch.from_numpy(np.stack([aggw[b], window_baseline(aggw[b])]))
        with torch.no_grad():
            v = target(x).double().numpy()
        gain.append(v[0] - v[1])
    return [int(i) for i in np.argsort(-np.asarray(gain), kind="stable")[:k]]


def measure(loaded, twin, agg: np.ndarray, start, device: str, method: str, settings: Settings) -> dict:
    """Every quality number of one method on one window (sequence level, hard output explained)."""
    interval = Interval(0, agg.shape[0])
    explained = make_target(loaded, start, device, interval, "hard")
    gate = gradient_output(method, loaded) or "hard"
    attributed = make_target(loaded, start, device, interval, gate)
    x, base = torch.from_numpy(agg)[None], torch.from_numpy(window_baseline(agg))[None]
    t = time.perf_counter()
    attr = attribute(attributed, x, base, method, settings)
    seconds = time.perf_counter() - t
    a = attr[0].double().numpy()
    curves = q.deletion_insertion(explained, x[0], base[0], a)
    rand = q.random_order(explained, x[0], base[0])
    gaps = completeness(loaded, start, device, interval, x, base, a, method)
    randomised = attribute(make_target(loaded, start, device, interval, gate, model=twin), x, base, method, settings)
    return {
        "deletion_area": curves["deletion_area"],
        "insertion_area": curves["insertion_area"],
        "random_deletion_area": rand["deletion_area"],
        "random_insertion_area": rand["insertion_area"],
        "max_sensitivity": q.max_sensitivity(_explainer(attributed, method, settings), x),
        "effective_steps": q.effective_steps(a),
        "randomised_spearman": q.spearman(a, randomised[0].numpy()),
        "input_spearman": q.spearman(a, (x - base)[0].numpy()),
        **{f"completeness_{g}": gaps.get(g, float("nan")) for g in ("hard", "soft")},
        "seconds": seconds,
        "curves": curves,
    }


def _explainer(target, method: str, settings: Settings):
    """inputs (N, L) -> attributions (N, L), each row against its own window-minimum baseline (for sensitivity)."""

    def fn(x):
        base = x.min(dim=1, keepdim=True).values.expand_as(x).contiguous()
        return attribute(target, x.detach(), base, method, settings)

    return fn


def quality_table(
    loaded,
    aggw: np.ndarray,
    t0: np.ndarray,
    devices=None,
    methods=METHODS,
    windows: int = 2,
    settings: Settings = DEFAULT,
    progress: bool = False,
) -> list[dict]:
    """One row per (device, method): the mean of `measure` over the device's picked windows, with the windows'
    starts and the first window's curves."""
    twin = q.randomised_model(loaded.model)
    devices = list(devices or loaded.devices)
    bar = _progress(progress, len(devices) * windows * len(methods))
    rows = []
    for device in devices:
        picked = pick_windows(loaded, aggw, t0, device, windows)
        for method in methods:
            per = []
            for b in picked:
                per.append(measure(loaded, twin, aggw[b], t0[b], device, method, settings))
                bar.update()
            rows.append(_row(device, method, per, [str(t0[b]) for b in picked]))
    bar.close()
    return rows


def _row(device: str, method: str, per: list[dict], starts: list[str]) -> dict:
    row = {"device": device, "method": method, "windows": starts}
    for key, _ in COLUMNS:
        vals = np.asarray([m[key] for m in per], dtype=np.float64)
        row[key] = float(np.nanmean(vals)) if np.isfinite(vals).any() else float("nan")
    row["curves"] = per[0]["curves"]
    return row


def _progress(progress: bool, total: int):
    import sys

    from tqdm import tqdm

    return tqdm(total=total, desc="measuring attributions", unit="explanation", file=sys.stderr, disable=not progress)
