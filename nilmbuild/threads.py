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
