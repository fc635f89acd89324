"""Threads of a build: how many workers a step may use (its own cap, and no more than the CPUs this process may run
on), and slow products started once in a thread of their own and read later (start_once)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

_STARTED: list[Future] = []  # every start_once job, for wait_started


def usable_threads(at_most: int) -> int:
    """min(at_most, the CPUs in this process' affinity mask), at least 1."""
    return max(1, min(at_most, len(os.sched_getaffinity(0))))


def one_blas_thread():
    """A context in which numpy's BLAS (OpenBLAS, MKL, ...: threadpoolctl) runs in the calling thread only, for the
    build's numpy work (capture's exact rebuilds, the pages' derivations). Its products there are small, and its
    worker threads spin while they wait for the next one: on 2 cores they took ~1.4 of a site build's ~16 CPU
    seconds from torch's threads and ours. The previous limits come back at the end of the block."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def start_once(started: dict, key, name: str, fn: Callable, *args) -> Future:
    """fn(*args) in a thread of its own (named `name`), once per key of `started` (key -> its Future): a later call
    gets the same Future. For a slow product that overlaps other work and is read later with .result()."""
    if key not in started:
        pool = ThreadPoolExecutor(1, thread_name_prefix=name)
        started[key] = pool.submit(fn, *args)
        pool.shutdown(wait=False)  # the submitted job still runs; its thread ends with it
        _STARTED.append(started[key])
    return started[key]


def wait_started() -> None:
    """Wait until every job start_once started has finished (before a hard exit: cli.run)."""
    wait(_STARTED)
