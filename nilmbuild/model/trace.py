"""Trace: the model's record of every intermediate tensor, with its axis names and spec stage.

The model calls `trace.put(...)` at each stage when a Trace is passed to forward(). This is the single
source of truth for tensor names, shapes and axis order: capture serialises it, the pages read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from .buffers import BufferPool
from .names import param


@dataclass
class TraceRecord:
    tensor: torch.Tensor  # detached float32 on CPU
    axes: tuple[str, ...]  # one name per dimension, e.g. ("batch", "head", "query", "key")
    stage: str  # forward-pass.md stage, e.g. "7b"
    section: str  # spec file and section, e.g. "attention.md 7.6"
    doc: str  # one line: what this tensor is
    derive: dict | None = None  # how it follows from other records (the ops below), or None: store it


# ---- derivations: how a traced tensor follows from other records (ops of nilmbuild.capture.format) ----------
# The model declares them where it makes the tensor; capture verifies each against the true tensor and
# stores the tensor instead when the rebuild misses its bound. Weights are named names.param("encoder.0.attn.wq").


def alias(src: str) -> dict:
    return {"op": "alias", "src": src}


def permute(src: str, perm) -> dict:
    return {"op": "permute", "src": src, "perm": list(perm)}


def select(src: str, axis: int, index: int) -> dict:
    return {"op": "select", "src": src, "axis": int(axis), "index": int(index)}


def add(a: str, b: str) -> dict:
    return {"op": "add", "a": a, "b": b}


def mul(a: str, b: str) -> dict:
    return {"op": "mul", "a": a, "b": b}


def gelu(src: str) -> dict:
    return {"op": "gelu", "src": src}


def layernorm(src: str, module: str, eps: float) -> dict:
    """LayerNorm of `src` with the gain/bias of `module` (e.g. "encoder.0.norm1")."""
    return {
        "op": "layernorm",
        "src": src,
        "weight": param(f"{module}.weight"),
        "bias": param(f"{module}.bias"),
        "eps": float(eps),
    }


def linear(src: str, w: str, bias: str | None = None, *, axis: int | None = None, heads: int | None = None) -> dict:
    """src @ w^T (+ bias); axis=1: channels-first (B, C, L) input (a 1x1 conv); heads: split into (B, H, L, E)."""
    d = {"op": "linear", "src": src, "weight": w, "bias": bias}
    if axis is not None:
        d["axis"] = int(axis)
    if heads is not None:
        d["heads"] = int(heads)
    return d


def film(src: str, gamma: str, beta: str, index: int) -> dict:
    return {"op": "film", "src": src, "gamma": gamma, "beta": beta, "index": int(index)}


def attention_scores(q: str, k: str, scale: float) -> dict:
    return {"op": "attention_scores", "q": q, "k": k, "scale": float(scale)}


def attention_masked_scores(q: str, k: str, scale: float, mask_value: float) -> dict:
    return {**attention_scores(q, k, scale), "op": "attention_masked_scores", "mask_value": float(mask_value)}


def attention_weights(q: str, k: str, lse: str, scale: float, mask_diagonal: bool, mask_value: float) -> dict:
    return {
        "op": "attention_weights",
        "q": q,
        "k": k,
        "lse": lse,
        "scale": float(scale),
        "mask_diagonal": bool(mask_diagonal),
        "mask_value": float(mask_value),
    }


class Trace:
    """Records of one forward pass, in the order the model put them.

    keep: only names for which keep(name) is true are recorded (a run that needs a few tensors holds no others).
    copy: clone each tensor (default). copy=False keeps the model's own tensor, for callers that read it before
        anything could change it (the forward pass does no in-place op on a traced tensor).
    on_put: called with the trace and each kept name right after it is recorded (capture plans attention layer
        by layer and drops the (B, H, L, L) tensors at once, with `drop`).
    pool: where the model may get the memory of big records (`buffer`) and temporaries (`scratch`) from, for a
        caller that drops each such record before the next one of its shape is made (capture's chunked runs).
    """

    def __init__(
        self,
        keep: Callable[[str], bool] | None = None,
        copy: bool = True,
        on_put: Callable[[Trace, str], None] | None = None,
        pool: BufferPool | None = None,
    ) -> None:
        self.records: dict[str, TraceRecord] = {}
        self.order: list[str] = []
        self._keep, self._copy, self._on_put = keep, copy, on_put
        self._pool, self._lent = pool, {}

    def put(
        self,
        name: str,
        tensor: torch.Tensor,
        axes: tuple[str, ...],
        stage: str,
        section: str,
        doc: str,
        derive: dict | None = None,
    ) -> None:
        if tensor.dim() != len(axes):
            raise ValueError(f"trace {name}: {tensor.dim()} dims but axes {axes}")
        if name in self.order:
            raise ValueError(f"trace {name} recorded twice")
        self.order.append(name)
        if self._keep is not None and not self._keep(name):
            return
        t = tensor.detach().float().cpu()
        self.records[name] = TraceRecord(t.clone() if self._copy else t, tuple(axes), stage, section, doc, derive)
        if self._on_put is not None:
            self._on_put(self, name)

    def wants(self, name: str) -> bool:
        """Whether put(name, ...) would record it: a model may skip work whose only use is a record nobody keeps."""
        return self._keep is None or self._keep(name)

    @property
    def pooled(self) -> bool:
        """Whether this trace lends memory from a pool (`buffer`, `scratch`)."""
        return self._pool is not None

    def buffer(self, name: str, shape) -> torch.Tensor | None:
        """A pooled float32 tensor of `shape` (values undefined) to compute record `name` into, or None (allocate
        as usual) when this trace has no pool or does not keep `name`. It goes back to the pool when `name` is
        dropped, so the model must not use the tensor after putting `name` once a later buffer may be taken."""
        if self._pool is None or not self.wants(name) or name in self._lent:
            return None
        self._lent[name] = t = self._pool.take(shape)
        return t

    @contextmanager
    def scratch(self, shape) -> Iterator[torch.Tensor]:
        """A pooled float32 tensor of `shape` (values undefined) for a temporary, back in the pool after the block
        (a trace with a pool only: see `pooled`)."""
        if self._pool is None:
            raise ValueError("Trace.scratch: this trace has no pool")
        t = self._pool.take(shape)
        try:
            yield t
        finally:
            self._pool.give(t)

    def drop(self, name: str) -> None:
        """Forget a record's tensor (its name stays in `order`); a pooled buffer it was made in goes back."""
        self.records.pop(name, None)
        t = self._lent.pop(name, None)
        if t is not None:
            self._pool.give(t)

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.records[name].tensor

    def __contains__(self, name: str) -> bool:
        return name in self.records

    def names(self) -> list[str]:
        """Every name put, in order (kept or not)."""
        return list(self.order)


def put(
    trace: Trace | None,
    name: str,
    tensor: torch.Tensor,
    axes,
    stage: str,
    section: str,
    doc: str,
    derive: dict | None = None,
) -> None:
    """Record `tensor` when tracing; a no-op (and free) otherwise. derive: how it follows from other records."""
    if trace is not None:
        trace.put(name, tensor, tuple(axes), stage, section, doc, derive)
