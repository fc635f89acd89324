"""How many worker threads a build step may use: its own cap, and no more than the CPUs this process may run on."""

from __future__ import annotations

import os


def usable_threads(at_most: int) -> int:
    """min(at_most, the CPUs in this process' affinity mask), at least 1."""
    return max(1, min(at_most, len(os.sched_getaffinity(0))))
