"""Dev script: draw one simulated day (aggregate + the five appliances, stacked) to docs/simulator-day.png.

    python -m nilmbuild.data.plot_day [--seed 0] [--day 3] [--out docs/simulator-day.png]

Needs matplotlib, which is not a nilmbuild dependency: `pip install matplotlib` first.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES
from nilmbuild.data.simulate import STEPS_PER_DAY, simulate_household


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--day",
        type=int,
        default=None,
        help="day of a 14-day simulation to draw (default: the first with all five appliances used)",
    )
    ap.add_argument("--out", default="docs/simulator-day.png")
    a = ap.parse_args(argv)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: matplotlib is needed for this dev script; run `pip install matplotlib`", file=sys.stderr)
        return 2
    hh = simulate_household(days=max(14, (a.day or 0) + 1), seed=a.seed)
    if a.day is None:
        used = np.stack(
            [hh.appliances[d].reshape(-1, STEPS_PER_DAY).max(axis=1) > 500 for d in DEVICE_NAMES if d != "fridge"]
        )  # (4, days)
        a.day = int(np.argmax(used.all(axis=0)))
    sl = slice(a.day * STEPS_PER_DAY, (a.day + 1) * STEPS_PER_DAY)
    hours = np.arange(STEPS_PER_DAY) * hh.rate_s / 3600.0
    rows = [("aggregate", hh.aggregate[sl])] + [(d, hh.appliances[d][sl]) for d in DEVICE_NAMES]
    fig, axes = plt.subplots(
        len(rows), 1, figsize=(11, 10), sharex=True, gridspec_kw={"height_ratios": [2.2] + [1] * len(DEVICE_NAMES)}
    )
    colors = ["#333333", "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]
    for ax, (name, y), c in zip(axes, rows, colors):
        ax.plot(hours, y, lw=0.6, color=c)
        ax.fill_between(hours, y, color=c, alpha=0.15, lw=0)
        ax.set_ylabel(f"{name}\nW", fontsize=8, rotation=0, ha="right", va="center")
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.25, lw=0.5)
    axes[-1].set_xlim(0, 24)
    axes[-1].set_xticks(range(0, 25, 2))
    axes[-1].set_xlabel("hour of day (UTC)")
    day = str(hh.timestamps[sl][0])[:10]
    axes[0].set_title(
        f"nilmbuild simulator, seed {a.seed}, {day} ({hh.rate_s} s samples): "
        "aggregate and the five sub-metered appliances",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
