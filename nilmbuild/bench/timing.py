"""Small timing helpers: median of repeats after a warm-up, and peak RSS of a function in a fresh process."""

from __future__ import annotations

import multiprocessing as mp
import resource
import statistics
import time


def median_time(fn, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time of fn() in seconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def torch_baseline() -> None:
    """What every measured child also does: import torch and run one op."""
    import torch

    torch.zeros(1) + 1


def _hwm_mb() -> float | None:
    """Peak resident memory of this process (VmHWM) in MiB, or None without /proc."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _child(target, args, q):
    # A child started by fork+exec inherits its parent's RSS high-water mark (ru_maxrss), so a big parent
    # would hide the child's own peak: reset the mark first (Linux: writing 5 to clear_refs), then read VmHWM.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    target(*args)
    hwm = _hwm_mb()
    q.put(hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)


def _peak(target, args) -> float:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(target, args, q))
    p.start()
    value = q.get()
    p.join()
    return value if p.exitcode == 0 else float("nan")


def peak_rss_mb(target, *args) -> float:
    """Peak resident memory (MiB) that target(*args) adds, in a fresh spawned process, over a child that
    only imports torch and runs one op."""
    return _peak(target, args) - _peak(torch_baseline, ())
