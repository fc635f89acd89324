"""Trace: the model's record of every intermediate tensor, with its axis names and spec stage.

The model calls `trace.put(...)` at each stage when a Trace is passed to forward(). This is the single
source of truth for tensor names, shapes and axis order: capture serialises it, the pages read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class TraceRecord:
    tensor: torch.Tensor          # detached float32 on CPU
    axes: tuple[str, ...]         # one name per dimension, e.g. ("batch", "head", "query", "key")
    stage: str                    # forward-pass.md stage, e.g. "7b"
    section: str                  # spec file and section, e.g. "attention.md 7.6"
    doc: str                      # one line: what this tensor is


class Trace:
    def __init__(self) -> None:
        self.records: dict[str, TraceRecord] = {}

    def put(self, name: str, tensor: torch.Tensor, axes: tuple[str, ...], stage: str, section: str, doc: str) -> None:
        if tensor.dim() != len(axes):
            raise ValueError(f"trace {name}: {tensor.dim()} dims but axes {axes}")
        if name in self.records:
            raise ValueError(f"trace {name} recorded twice")
        self.records[name] = TraceRecord(tensor.detach().float().cpu().clone(), tuple(axes), stage, section, doc)

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.records[name].tensor

    def __contains__(self, name: str) -> bool:
        return name in self.records

    def names(self) -> list[str]:
        return list(self.records)


def put(trace: Trace | None, name: str, tensor: torch.Tensor, axes, stage: str, section: str, doc: str) -> None:
    """Record `tensor` when tracing; a no-op (and free) otherwise."""
    if trace is not None:
        trace.put(name, tensor, tuple(axes), stage, section, doc)
