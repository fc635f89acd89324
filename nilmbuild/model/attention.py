"""Stage 7b: diagonally masked multi-head self-attention (attention.md, architecture.md section 7).

One set of weights, two paths:
- explicit: einsum scores -> -1e4 on the diagonal -> softmax -> diagonal set to exactly 0; returns the
  weights (used when tracing, i.e. for capture);
- fast: torch scaled_dot_product_attention with the same additive diagonal mask (used otherwise).
exp(-1e4 - max) underflows to exactly 0 in float32, so both paths agree (tested to 1e-5).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .names import param
from .trace import Trace, attention_masked_scores, attention_scores, attention_weights, linear, permute, put

MASK_VALUE = -1e4
#: What the explicit path traces: a run whose trace keeps none of these takes the fused kernel instead.
_EXPLICIT_PARTS = ("q", "k", "v", "scores", "masked_scores", "weights", "lse", "context")


def diagonal_mask(L: int, device: torch.device, flag: torch.Tensor | None = None) -> torch.Tensor:
    """(L, L) bool, True on the diagonal: query t may not attend to key t. flag: a () bool tensor (the live
    graph's mask_diagonal input, model/whatif.py): the mask is all False when it is False."""
    t = torch.arange(L, device=device)
    eye = t[:, None] == t[None, :]  # not torch.eye(bool): in ONNX an EyeLike on bool, which onnxruntime cannot run
    return eye if flag is None else eye & flag


def _static(flag: torch.Tensor | None, derive: dict) -> dict | None:
    """A record's derivation, or None (store it) when a run-time mask flag decides what it holds."""
    return derive if flag is None else None


def _overwritable(t: torch.Tensor, trace=None, recorded_as: str | None = None) -> bool:
    """Whether `t` may be changed in place: no trace record keeps it (as `recorded_as`, if it is recorded) and no
    autograd graph needs it. Saves a (B, H, L, L) copy per step of a traced run."""
    if trace is not None and recorded_as is not None and trace.wants(recorded_as):
        return False
    return not (torch.is_grad_enabled() and t.requires_grad)


def _row_logsumexp(scores: torch.Tensor, trace: Trace) -> torch.Tensor:
    """(B, H, L, S) -> (B, H, L) log-sum-exp over keys, a few samples at a time: logsumexp holds two temporaries
    of its input's size (rows are independent, so this is bit-identical to one call). A pooled trace lends the
    temporary (_logsumexp_in)."""
    parts = scores.split(4)
    if not trace.pooled:
        return torch.cat([torch.logsumexp(part, dim=-1) for part in parts])
    with trace.scratch(parts[0].shape) as work:
        return torch.cat([_logsumexp_in(part, work[: part.shape[0]]) for part in parts])


def _logsumexp_in(x: torch.Tensor, work: torch.Tensor) -> torch.Tensor:
    """torch.logsumexp(x, dim=-1) with its x-sized temporary in `work`: PyTorch's own steps (row max, +-inf taken
    as 0; log of the sum of exp(x - max); + max), so the same bits (tests/test_trace_pool.py)."""
    m = torch.amax(x, dim=-1, keepdim=True)  # (n, H, L, 1)
    m.masked_fill_(m.abs() == math.inf, 0.0)
    total = torch.sum(torch.sub(x, m, out=work).exp_(), dim=-1)  # (n, H, L)
    return total.log_().add_(m.squeeze(-1))


def _buffer(trace: Trace | None, name: str, shape) -> torch.Tensor | None:
    """Where to compute record `name` (trace.buffer), or None: allocate (also under autograd: out= has no grad)."""
    return None if trace is None or torch.is_grad_enabled() else trace.buffer(name, shape)


def _dot_products(q: torch.Tensor, k: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """(B, H, L, E) q, (B, H, S, E) k -> (B, H, L, S) q.k, into `out` if given (the same bmm either way)."""
    return torch.einsum("bhle,bhse->bhls", q, k) if out is None else torch.matmul(q, k.transpose(-2, -1), out=out)


def _masked(scores: torch.Tensor, diag: torch.Tensor, trace: Trace | None, name: str, shape) -> torch.Tensor:
    """scores with MASK_VALUE where diag is True: in place, unless `name`.scores is recorded or autograd needs it;
    then in a copy (in the trace's buffer for `name`.masked_scores, if it lends one)."""
    if _overwritable(scores, trace, f"{name}.scores"):
        return scores.masked_fill_(diag, MASK_VALUE)
    out = _buffer(trace, f"{name}.masked_scores", shape)
    return scores.masked_fill(diag, MASK_VALUE) if out is None else out.copy_(scores).masked_fill_(diag, MASK_VALUE)


def _softmax(scores: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis (torch.softmax's own kernel, into `out` if given)."""
    return torch.softmax(scores, dim=-1) if out is None else torch._softmax(scores, -1, False, out=out)


def _mask_flag(mask_diagonal) -> tuple[bool, torch.Tensor | None]:
    """mask_diagonal (bool, or a () bool tensor decided at run time) -> (mask at all?, run-time flag or None)."""
    if isinstance(mask_diagonal, torch.Tensor):
        return True, mask_diagonal
    return bool(mask_diagonal), None


class DiagonallyMaskedSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_head: int, head_dim: int, dropout: float) -> None:
        super().__init__()
        self.n_head, self.head_dim = n_head, head_dim
        self.scale = head_dim**-0.5
        self.wq = nn.Linear(d_model, n_head * head_dim, bias=False)
        self.wk = nn.Linear(d_model, n_head * head_dim, bias=False)
        self.wv = nn.Linear(d_model, n_head * head_dim, bias=False)
        self.wo = nn.Linear(n_head * head_dim, d_model, bias=False)
        self.dropout = dropout
        self.attn_drop = nn.Dropout(dropout)

    def _split(self, t: torch.Tensor) -> torch.Tensor:
        B, L, _ = t.shape
        return t.view(B, L, self.n_head, self.head_dim).permute(0, 2, 1, 3)  # (B, H, L, E)

    def forward(
        self,
        x: torch.Tensor,
        mask_diagonal: bool | torch.Tensor = True,
        trace: Trace | None = None,
        name: str = "attn",
        explicit: bool | None = None,
        in_name: str | None = None,
    ) -> torch.Tensor:
        # x: (B, L, d_model), traced as `in_name` (if given, v is declared as its projection)
        B, L, D = x.shape
        q, k, v = self._split(self.wq(x)), self._split(self.wk(x)), self._split(self.wv(x))  # (B, H, L, E)
        if explicit is None:  # materialise (B, H, L, L) only when a record of it is kept
            explicit = trace is not None and any(trace.wants(f"{name}.{p}") for p in _EXPLICIT_PARTS)
        if explicit:
            out = self._explicit(q, k, v, mask_diagonal, trace, name, in_name)
        else:
            mask = None
            masked, flag = _mask_flag(mask_diagonal)
            if masked:
                mask = torch.zeros(L, L, dtype=q.dtype, device=q.device).masked_fill_(
                    diagonal_mask(L, q.device, flag), MASK_VALUE
                )
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=self.scale, dropout_p=self.dropout if self.training else 0.0
            )
        merged = out.permute(0, 2, 1, 3).reshape(B, L, D)  # (B, L, d_model)
        put(
            trace,
            f"{name}.merged",
            merged,
            ("batch", "time", "feature"),
            "7b",
            "attention.md 7.9",
            f"heads concatenated back to {D} features",
            derive=permute(f"{name}.context", (0, 2, 1, 3)),
        )
        y = self.wo(merged)  # (B, L, d_model)
        put(
            trace,
            f"{name}.out",
            y,
            ("batch", "time", "feature"),
            "7b",
            "attention.md 7.10",
            "output projection Wo",
            derive=linear(f"{name}.merged", param(f"{name}.wo")),
        )
        return y

    def _explicit(self, q, k, v, mask_diagonal, trace, name, in_name=None):
        axes_qk = ("batch", "head", "time", "dim")
        axes_att = ("batch", "head", "query", "key")
        split = f"split into {self.n_head} heads of {self.head_dim}"
        put(trace, f"{name}.q", q, axes_qk, "7b", "attention.md 7.4", f"queries, {split}")
        put(trace, f"{name}.k", k, axes_qk, "7b", "attention.md 7.4", f"keys, {split}")
        put(
            trace,
            f"{name}.v",
            v,
            axes_qk,
            "7b",
            "attention.md 7.4",
            f"values, {split}",
            derive=linear(in_name, param(f"{name}.wv"), heads=self.n_head) if in_name else None,
        )
        shape = q.shape[:-1] + k.shape[-2:-1]  # (B, H, L, L)
        scores = _dot_products(q, k, _buffer(trace, f"{name}.scores", shape)).mul_(self.scale)  # scaled in place
        put(
            trace,
            f"{name}.scores",
            scores,
            axes_att,
            "7b",
            "attention.md 7.5",
            f"scaled dot products q.k / sqrt({self.head_dim})",
            derive=attention_scores(f"{name}.q", f"{name}.k", self.scale),
        )
        masked, flag = _mask_flag(mask_diagonal)
        qk = (f"{name}.q", f"{name}.k")
        if masked:
            diag = diagonal_mask(scores.shape[-1], scores.device, flag)
            scores = _masked(scores, diag, trace, name, shape)
            put(
                trace,
                f"{name}.masked_scores",
                scores,
                axes_att,
                "7b",
                "attention.md 7.6",
                "scores with -1e4 on the diagonal",
                derive=_static(flag, attention_masked_scores(*qk, self.scale, MASK_VALUE)),
            )
        attn = _softmax(scores, _buffer(trace, f"{name}.weights", shape))  # (B, H, L, L)
        if masked:  # the softmax output is never recorded: in place unless autograd needs it
            attn = attn.masked_fill_(diag, 0.0) if _overwritable(attn) else attn.masked_fill(diag, 0.0)
        put(
            trace,
            f"{name}.weights",
            attn,
            axes_att,
            "7b",
            "attention.md 7.7",
            "softmax over keys; diagonal exactly 0",
            derive=_static(flag, attention_weights(*qk, f"{name}.lse", self.scale, masked, MASK_VALUE)),
        )
        if trace is not None:
            lse = _row_logsumexp(scores, trace)  # (B, H, L)
            put(
                trace,
                f"{name}.lse",
                lse,
                ("batch", "head", "query"),
                "7b",
                "attention.md 7.7",
                "log-sum-exp of each row of (masked) scores: weights = exp(score - lse)",
            )
        attn = self.attn_drop(attn)
        out = torch.einsum("bhls,bhsd->bhld", attn, v)  # (B, H, L, E)
        put(
            trace,
            f"{name}.context",
            out,
            axes_qk,
            "7b",
            "attention.md 7.8",
            "attention-weighted sum of values, per head",
        )
        return out
