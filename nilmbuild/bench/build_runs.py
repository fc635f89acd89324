"""`nilmbuild site` as a user runs it: a cold build, a rebuild with nothing changed (the site cache), a
rebuild after a page-code change (the capture cache only: the site cache emptied) and a cold build of a checkpoint
without stored Why-page explanations (as a user's own checkpoint before `nilmbuild explain --store`), each in its own
process (wall time, peak RSS from /proc/self/status VmHWM), and the size of the site (all of it, its HTML pages,
and the shared sibling files the pages load on demand: bench/site.py site_sizes); compared with
bench/baseline.json, which records the same figures with the machine they were measured on."""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BASELINE = Path("bench/baseline.json")

_CHILD = """
import json, sys
from nilmbuild import cli

out, report = sys.argv[1], sys.argv[2]

def hard_exit(code, _exit=cli._hard_exit):   # the command's own exit, after recording the peak RSS
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
    with open(report, "w") as f:   # closed (flushed) before the hard exit
        f.write(json.dumps({"peak_rss_mb": hwm / 1024}))
    _exit(code)

cli._hard_exit = hard_exit
sys.argv = ["nilmbuild", "site", "--out", out, "--quiet"] + sys.argv[3:]
cli.run()
"""


def run_site(out: Path, cache_home: Path, extra=()) -> dict:
    """One `nilmbuild site` in a fresh Python process, run as the command runs (cli.run) -> {"seconds": wall time
    from starting the process to its exit, as a user times `python -m nilmbuild site`, "peak_rss_mb",
    "tree_peak_rss_mb" (the process and its children, summed and sampled every 20 ms)}."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        result = Path(f.name)
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
    try:
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(out), str(result), *extra], env=env)
        tree_kib = 0
        while proc.poll() is None:
            tree_kib = max(tree_kib, _tree_rss_kib(proc.pid))
            time.sleep(0.02)
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, "nilmbuild site")
        seconds = time.perf_counter() - t  # to within the 20 ms poll
        return {**json.loads(result.read_text()), "seconds": seconds, "tree_peak_rss_mb": tree_kib / 1024}
    finally:
        result.unlink(missing_ok=True)


def _tree_rss_kib(pid: int) -> int:
    """VmRSS of `pid` and all its descendants, KiB (0 for a process that has just exited)."""
    try:
        rss = next((int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")), 0)
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    return rss + sum(_tree_rss_kib(int(k)) for k in kids)


def site_bytes(site_dir: Path) -> int:
    return sum(f.stat().st_size for f in site_dir.rglob("*") if f.is_file())


def without_stored_explanations(out: Path) -> Path:
    """A copy of the shipped checkpoint without its stored Why-page explanations (extra["why"], `nilmbuild explain
    --store`): what a user's own checkpoint costs a cold build (Captum runs at build time)."""
    import torch

    from nilmbuild.explain.served_store import KEY
    from nilmbuild.model.checkpoint import atomic_write_bytes
    from nilmbuild.provenance import default_checkpoint_path

    payload = torch.load(default_checkpoint_path(), map_location="cpu", weights_only=True)
    payload["extra"] = {k: v for k, v in (payload.get("extra") or {}).items() if k != KEY}
    atomic_write_bytes(out, lambda f: torch.save(payload, f))
    return out


def measure(repeats: int = 2) -> tuple[dict, Path]:
    """Median over `repeats` of: cold build (empty caches), rebuild (caches filled by the cold one), rebuild with
    only the capture cache (as after an edit to a page's code, which changes the site cache's key), and a cold build
    of the shipped checkpoint without its stored explanations (without_stored_explanations)."""
    from nilmbuild.bench.site import site_sizes

    work = Path(tempfile.mkdtemp(prefix="nilmbuild-bench-build-"))
    bare = without_stored_explanations(work / "no-stored-explanations.pt")
    cold, warm, code, unstored = [], [], [], []
    for i in range(repeats):
        cache = work / f"cache{i}"
        cold.append(run_site(work / "site", cache))
        warm.append(run_site(work / "site", cache))
        shutil.rmtree(cache / "nilmbuild" / "sites", ignore_errors=True)
        code.append(run_site(work / "site", cache))
        shutil.rmtree(cache, ignore_errors=True)
        unstored.append(run_site(work / "site-unstored", cache, ["--checkpoint", str(bare)]))
        shutil.rmtree(cache, ignore_errors=True)
    figures = {
        "build_s": statistics.median(r["seconds"] for r in cold),
        "rebuild_cached_s": statistics.median(r["seconds"] for r in warm),
        "rebuild_code_changed_s": statistics.median(r["seconds"] for r in code),
        "build_no_stored_explanations_s": statistics.median(r["seconds"] for r in unstored),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in cold),
        "tree_peak_rss_mb": max(r["tree_peak_rss_mb"] for r in cold),
        "rebuild_peak_rss_mb": max(r["peak_rss_mb"] for r in warm),
        "rebuild_code_changed_peak_rss_mb": max(r["peak_rss_mb"] for r in code),
        "build_no_stored_explanations_peak_rss_mb": max(r["peak_rss_mb"] for r in unstored),
        "site_mb": site_bytes(work / "site") / 1e6,
        **{f"{k}_mb": sum(v.values()) / 1e6 for k, v in site_sizes(work / "site").items() if k != "bookkeeping"},
    }
    return figures, work / "site"


def machine() -> dict:
    """Cores, CPU model, Python, torch and Chromium versions: what a figure means depends on them."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    chromium = os.environ.get("NILMBUILD_CHROMIUM") or shutil.which("chromium") or ""
    try:
        version = subprocess.run([chromium, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        version = None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {
        "cores": cores,
        "cpu": cpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "chromium": version,
        "load_avg_1m": os.getloadavg()[0],
        "date": time.strftime("%Y-%m-%d"),
    }


def compare_rows(figures: dict, baseline: dict | None) -> list[dict]:
    """One row per figure: this run, the baseline's, and this / baseline (below 1 = smaller = better)."""
    base = (baseline or {}).get("figures", {})
    rows = []
    for k, v in figures.items():
        b = base.get(k)
        rows.append(
            {
                "group": "nilmbuild site, as run (vs bench/baseline.json)",
                "name": k,
                "now": v,
                "baseline": b,
                "ratio": (v / b) if b else None,
            }
        )
    return rows


def bench_build_runs(repeats: int = 2, write_baseline: bool = False) -> list[dict]:
    figures, _ = measure(repeats)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else None
    if write_baseline:
        BASELINE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE.write_text(
            json.dumps({"machine": machine(), "repeats": repeats, "figures": figures}, indent=1, sort_keys=True) + "\n"
        )
    return compare_rows(figures, baseline)
