"""Record names: how the model names what it traces, in one place that capture and the page views import.

The model builds every name from these (a layer's prefix, a part); the capture planner and the views
(nilmbuild/site/views) ask here instead of spelling "encoder.{l}.attn.q" themselves, and pages receive the
names they draw from their view (PageSpec context / blob), never from a literal of their own.
"""

from __future__ import annotations

#: Sub-steps of one encoder layer, in forward order (record suffix after "encoder.{l}.").
ENCODER_STEPS = ("in", "ln1", "attn.out", "resid1", "ln2", "ffn.hidden", "ffn.gelu", "ffn.out", "film", "out")
#: What one attention layer traces (suffix after "encoder.{l}.attn."); the last six are (B, H, L, .) tensors.
ATTN_PARTS = ("q", "k", "v", "scores", "masked_scores", "weights", "lse", "context", "merged", "out")
#: The (B, H, L, L) matrices: always derived from q, k (and lse), never stored.
ATTN_MATRICES = ("scores", "masked_scores", "weights")
#: Per-device head records (suffix after "heads.{device}."); "simple" heads also trace "cls_prob".
HEAD_PARTS = (
    "features",
    "gate_logit",
    "gate_prob",
    "power_raw",
    "soft_gate",
    "hard_gate",
    "power_soft",
    "power_hard",
    "power",
)
ABLATIONS = ("no_film", "no_mask", "soft_gate")


def encoder(layer: int, part: str | None = None) -> str:
    """encoder(1) -> "encoder.1"; encoder(1, "ln2") -> "encoder.1.ln2"."""
    return f"encoder.{layer}" + (f".{part}" if part else "")


def attn(layer: int, part: str) -> str:
    """attn(0, "q") -> "encoder.0.attn.q"."""
    return encoder(layer, f"attn.{part}")


def head(device: str, part: str) -> str:
    """head("fridge", "power") -> "heads.fridge.power"."""
    return f"heads.{device}.{part}"


def ablation(kind: str, name: str) -> str:
    """ablation("no_mask", attn(0, "weights")) -> "ablation.no_mask.encoder.0.attn.weights"."""
    if kind not in ABLATIONS:
        raise ValueError(f"unknown ablation {kind!r}; one of {', '.join(ABLATIONS)}")
    return f"ablation.{kind}.{name}"
