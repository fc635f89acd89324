"""The playground's appliance events, drawn from the built-in simulator's appliance models
(nilmbuild/data/simulate.py) with a fixed seed and averaged to the model's time step, so the shapes the
reader drops on the signal are the ones the checkpoint was trained on, not made up."""

from __future__ import annotations

import numpy as np

from nilmbuild.data import simulate as sim

SEED = 11


def _to_step(watts: np.ndarray, step_s: int) -> list[float]:
    """Native-rate samples -> means over each model step (a partial last step averages what it has)."""
    k = max(1, step_s // sim.RATE_S)
    n = -(-watts.size // k)
    pad = np.full(n * k, np.nan)
    pad[: watts.size] = watts
    return [round(float(v), 1) for v in np.nanmean(pad.reshape(n, k), axis=1)]


def _fridge_cycle(rng) -> np.ndarray:
    """The first full compressor cycle of a simulated fridge (ON run, bounded by zeros)."""
    series = sim._fridge(rng, 4 * 3600 // sim.RATE_S, np.zeros(1))
    on = np.flatnonzero(series > 0)
    start = on[0]
    end = start + np.argmax(series[start:] <= 0)
    return series[start:end]


def palette(step_s: int) -> list[dict]:
    """[{name, label, watts: [one value per model step]}] for the kettle, the washing machine and the fridge."""
    rng = np.random.default_rng(SEED)
    events = [
        ("kettle", "Kettle boil", sim._kettle(rng)),
        ("washing_machine", "Washing cycle", sim._washing_machine(rng)),
        ("fridge", "Fridge cycle", _fridge_cycle(rng)),
    ]
    return [{"name": n, "label": label, "watts": _to_step(np.asarray(w, float), step_s)} for n, label, w in events]
