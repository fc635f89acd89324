"""BufferPool: float32 CPU tensors handed out again once the record written into them is dropped.

A traced run of the example batch makes (chunk, H, L, L) attention matrices (59 MB each for 8 windows of the
shipped model) several times per layer and chunk. Each fresh one is a new mmap whose pages the kernel faults in
and zeroes again (a third of a site build's ~0.9 M page faults). A pool hands the same pages out again.
Trace lends its buffers (Trace.buffer, Trace.scratch) and takes them back (Trace.drop).
"""

from __future__ import annotations

import torch


class BufferPool:
    """Free float32 CPU tensors by shape; their values are whatever the last user left."""

    def __init__(self) -> None:
        self._free: dict[tuple[int, ...], list[torch.Tensor]] = {}

    def take(self, shape) -> torch.Tensor:
        """A free buffer of `shape`, or a new one."""
        free = self._free.get(tuple(shape))
        return free.pop() if free else torch.empty(tuple(shape), dtype=torch.float32)

    def give(self, t: torch.Tensor) -> None:
        """Take `t` back: its holder no longer reads or writes it."""
        self._free.setdefault(tuple(t.shape), []).append(t)
