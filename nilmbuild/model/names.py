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

#: Records with one fixed name each (forward order; the targets come from the data, not the model).
INPUT = "input"
INSTANCE_NORM = "instance_norm"
POS_ENCODING = "pos_encoding"
EMBED_WITH_POS = "embed.with_pos"
PROJECTION = "projection"
TRANSPOSE_IN = "transpose_in"
TRANSPOSE_OUT = "transpose_out"
OUTPUT_POWER = "output.power"
OUTPUT_GATE = "output.gate"
TARGET_POWER = "target.power"
TARGET_STATE = "target.state"
#: The head-ablation matrix (capture/head_ablation.py): (layer, head, device) change in watts, and its sample.
HEAD_ABLATION_DELTA = "ablation.heads.delta_w"
HEAD_ABLATION_SAMPLE = "ablation.heads.sample"
#: Condition features (suffix after "cond.") and the two FiLM generators with what each traces.
COND_PARTS = ("elec", "bands", "spectrum", "vector")
FILM_GENERATORS = ("film_enc", "film_dec")
FILM_PARTS = ("input", "hidden", "gamma", "beta")
#: The prefixes of the records that are not the model's trace: ground truth, parameters, ablation runs.
TARGET, WEIGHTS, ABLATION = "target.", "weights.", "ablation."
#: Every record name starts with one of these or is one of FIXED (tests/test_no_record_names.py looks for them in
#: page JS, which must receive the names from its view instead).
FIXED = (INPUT, INSTANCE_NORM, POS_ENCODING, PROJECTION, TRANSPOSE_IN, TRANSPOSE_OUT)
PREFIXES = (
    "encoder.",
    "heads.",
    ABLATION,
    "embed.",
    "cond.",
    "film_enc.",
    "film_dec.",
    "output.",
    TARGET,
    WEIGHTS,
)


def encoder(layer: int, part: str | None = None) -> str:
    """encoder(1) -> "encoder.1"; encoder(1, "ln2") -> "encoder.1.ln2"."""
    return f"encoder.{layer}" + (f".{part}" if part else "")


def attn(layer: int, part: str) -> str:
    """attn(0, "q") -> "encoder.0.attn.q"."""
    return encoder(layer, f"attn.{part}")


def head(device: str, part: str) -> str:
    """head("fridge", "power") -> "heads.fridge.power"."""
    return f"heads.{device}.{part}"


def embed_unit(unit: int | str, part: str) -> str:
    """embed_unit(3, "out") -> "embed.res3.out" (one dilated ResUnit; "*" for a glob)."""
    return f"embed.res{unit}.{part}"


def cond(part: str) -> str:
    """cond("bands") -> "cond.bands"."""
    return f"cond.{part}"


def film(generator: str, part: str) -> str:
    """film("film_enc", "gamma_mean") -> "film_enc.gamma_mean"."""
    return f"{generator}.{part}"


def param(name: str) -> str:
    """param("film_enc.device_embed") -> "weights.film_enc.device_embed" (a model parameter in the capture)."""
    return f"{WEIGHTS}{name}"


def ablation(kind: str, name: str) -> str:
    """ablation("no_mask", attn(0, "weights")) -> "ablation.no_mask.encoder.0.attn.weights"."""
    if kind not in ABLATIONS:
        raise ValueError(f"unknown ablation {kind!r}; one of {', '.join(ABLATIONS)}")
    return f"{ABLATION}{kind}.{name}"
