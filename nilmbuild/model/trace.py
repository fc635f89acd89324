"""Trace: the model's record of every intermediate tensor, with its axis names and spec stage.

The model calls `trace.put(...)` at each stage when a Trace is passed to forward(). This is the single
source of truth for tensor names, shapes and axis order: capture serialises it, the pages read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class TraceRecord:
    tensor: torch.Tensor          # detached float32 on CPU
    axes: tuple[str, ...]         # one name per dimension, e.g. ("batch", "head", "query", "key")
    stage: str                    # forward-pass.md stage, e.g. "7b"
    section: str                  # spec file and section, e.g. "attention.md 7.6"
    doc: str                      # one line: what this tensor is


class Trace:
    """Records of one forward pass, in the order the model put them.

    keep: only names for which keep(name) is true are recorded (a run that needs a few tensors holds no others).
    copy: clone each tensor (default). copy=False keeps the model's own tensor, for callers that read it before
        anything could change it (the forward pass does no in-place op on a traced tensor).
    on_put: called with each kept name right after it is recorded (capture plans attention layer by layer and
        drops the (B, H, L, L) tensors at once, with `drop`).
    """

    def __init__(self, keep: Callable[[str], bool] | None = None, copy: bool = True,
                 on_put: Callable[[str], None] | None = None) -> None:
        self.records: dict[str, TraceRecord] = {}
        self.order: list[str] = []
        self._keep, self._copy, self._on_put = keep, copy, on_put

    def put(self, name: str, tensor: torch.Tensor, axes: tuple[str, ...], stage: str, section: str, doc: str) -> None:
        if tensor.dim() != len(axes):
            raise ValueError(f"trace {name}: {tensor.dim()} dims but axes {axes}")
        if name in self.order:
            raise ValueError(f"trace {name} recorded twice")
        self.order.append(name)
        if self._keep is not None and not self._keep(name):
            return
        t = tensor.detach().float().cpu()
        self.records[name] = TraceRecord(t.clone() if self._copy else t, tuple(axes), stage, section, doc)
        if self._on_put is not None:
            self._on_put(name)

    def drop(self, name: str) -> None:
        """Forget a record's tensor (its name stays in `order`)."""
        self.records.pop(name, None)

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.records[name].tensor

    def __contains__(self, name: str) -> bool:
        return name in self.records

    def names(self) -> list[str]:
        """Every name put, in order (kept or not)."""
        return list(self.order)


def put(trace: Trace | None, name: str, tensor: torch.Tensor, axes, stage: str, section: str, doc: str) -> None:
    """Record `tensor` when tracing; a no-op (and free) otherwise."""
    if trace is not None:
        trace.put(name, tensor, tuple(axes), stage, section, doc)
