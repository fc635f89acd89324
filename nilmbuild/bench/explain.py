"""Attribution benchmarks (`nilmbuild explain`): one captured-batch-like window of the shipped checkpoint explained
by each method, timed beside one forward + backward pass of the same window (the reference of the ratio)."""

from __future__ import annotations

import numpy as np
import torch

from .timing import median_time

START = "2024-06-20T04:00"


def _window(window: int) -> np.ndarray:
    """A kettle-like boil and fridge-like cycling on a 150 W base (seeded): the methods' cost does not depend on
    the values, so no data source is loaded."""
    rng = np.random.default_rng(0)
    agg = 150 + 40 * rng.random(window)
    agg[100:104] += 2800.0
    agg[300:360] += 120.0 * (np.arange(60) % 20 < 12)
    return agg.astype(np.float32)


def bench_explain(repeats: int = 3) -> list[dict]:
    """Rows: seconds per explanation (kettle, whole-window energy) and its ratio to one forward + backward."""
    from nilmbuild.api import load_model
    from nilmbuild.explain import METHODS, explain_window
    from nilmbuild.explain.api import make_target
    from nilmbuild.explain.wrapper import Interval

    loaded = load_model().loaded
    agg = _window(int(loaded.cfg.window))
    target = make_target(loaded, START, "kettle", Interval(0, agg.shape[0]), "soft")

    def fwd_bwd():
        x = torch.from_numpy(agg)[None].requires_grad_()
        target(x).sum().backward()

    ref = median_time(fwd_bwd, repeats=repeats)
    rows = [{"group": "explain (one window)", "name": "forward + backward (reference)", "s": ref, "x_ref": 1.0}]
    for method in METHODS:
        t = median_time(lambda m=method: explain_window(loaded, agg, START, "kettle", method=m), repeats=repeats)
        rows.append({"group": "explain (one window)", "name": f"explain --method {method}", "s": t, "x_ref": t / ref})
    return rows
