"""`nilmbuild disaggregate` peak memory at 1x and 4x the series length (issue 34: flat, within 10 %).

A simulated household (6-s samples, 5 devices) is written as a NILMTK store of `days` and of 4 x `days`, and
`nilmbuild disaggregate -s nilmtk:STORE` runs on each in a fresh process, as a user runs it (cli.run); the peak
RSS is the process's VmHWM at the command's exit, the median of `repeats` runs (one run's figure moves by about
+-40 MB from run to run: 0.93-1.11 for the ratio of single runs of the same code). Before streaming, the same command grew with the series
(0.45 GB for 3 months and 0.91 GB for 15 months of a 1-min REFIT house, measured for issue 34)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import json, sys
from nilmbuild import cli

report = sys.argv[1]

def hard_exit(code, _exit=cli._hard_exit):
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
    with open(report, "w") as f:
        f.write(json.dumps({"peak_rss_mb": hwm / 1024, "code": code}))
    _exit(code)

cli._hard_exit = hard_exit
sys.argv = ["nilmbuild", "disaggregate"] + sys.argv[2:]
cli.run()
"""


def _run(store: Path, out: Path, report: Path) -> dict:
    t = time.perf_counter()
    args = [sys.executable, "-c", _CHILD, str(report), "-s", f"nilmtk:{store}", "--out", str(out)]
    subprocess.run(args, check=True, stderr=subprocess.DEVNULL)
    res = json.loads(report.read_text())
    return {**res, "seconds": time.perf_counter() - t, "rows": sum(1 for _ in open(out)) - 1}


def bench_disaggregate_memory(days: int = 30, repeats: int = 3) -> list[dict]:
    """Rows: peak RSS of `nilmbuild disaggregate` on `days` and 4 x `days` of simulated data (median of `repeats`
    fresh processes each, with the range), and the ratio of the medians."""
    import statistics
    import warnings

    from nilmbuild.bench.nilmtk_writer import store_from_household
    from nilmbuild.data.simulate import simulate_household

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mult in (1, 4):
            store = Path(tmp) / f"sim{mult}.h5"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                store_from_household(store, simulate_household(days=days * mult, seed=0))
            runs = [_run(store, Path(tmp) / "p.csv", Path(tmp) / "r.json") for _ in range(repeats)]
            rss = [r["peak_rss_mb"] for r in runs]
            rows.append(
                {
                    "group": "disaggregate memory (nilmtk store, streamed)",
                    "name": f"{days * mult} days ({mult}x)",
                    "rows": runs[0]["rows"],
                    "peak_rss_mb": statistics.median(rss),
                    "rss_range_mb": f"{min(rss):.0f}-{max(rss):.0f}",
                    "seconds": statistics.median(r["seconds"] for r in runs),
                }
            )
    rows.append(
        {
            "group": "disaggregate memory (nilmtk store, streamed)",
            "name": "4x / 1x median peak RSS (target <= 1.10)",
            "ratio": rows[1]["peak_rss_mb"] / rows[0]["peak_rss_mb"],
        }
    )
    return rows


if __name__ == "__main__":
    from nilmbuild.bench.table import print_table

    print_table(bench_disaggregate_memory(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
