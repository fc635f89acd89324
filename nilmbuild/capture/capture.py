"""Run the fixed example batch through NILMFormer and keep every intermediate tensor as a compact record.

`capture_batch(model_or_loaded, x, y, t0)` traces the inference run (hard gate, explicit attention) and,
from real runs of the same weights, the ablations the pages compare against (FiLM off, diagonal mask off,
soft gate). Each record knows its encoding: stored (f16 / f32 / bits) or derived (an exact function of
other records, see format.py). Every derived record is rebuilt here with the reader's own code and
compared with the true tensor; `err` is that max abs difference, and a derivation that misses its bound
falls back to storing the tensor.

The rooms: records.py (CaptureRecord, Capture, encodings), planner.py (store / derive / verify, a traced run
planned), weights.py (the parameters pages draw), ablations.py (the comparison runs), attention_plan.py (attention
rebuilt chunk by chunk), head_ablation.py, sizes.py (bytes per record); this module runs them in order. Every
record name comes from nilmbuild.model.names.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import torch

from nilmbuild.memory import release_freed_memory
from nilmbuild.model import names
from nilmbuild.threads import one_blas_thread

from . import format as fmt
from .ablations import ablation_compares, plan_ablations, unplanned_runs
from .attention_plan import ATTN_WEIGHTS_TOL, F16_EPS
from .head_ablation import store_head_ablation
from .planner import REL_TOL_DERIVED, Planner, ordered_records, plan_traced_records, planned_run
from .records import Capture, CaptureRecord
from .weights import store_weights

__all__ = ["ATTN_WEIGHTS_TOL", "REL_TOL_DERIVED", "Capture", "CaptureRecord", "capture_batch", "checkpoint_info"]

SPEC_NOTES = [
    "Attention scores, masked scores and weights are rebuilt from q, k (f16 unless f32 was needed) and the "
    "row log-sum-exp lse (f32, computed from the stored q, k): weights = exp(q.k * scale - lse), "
    "diagonal exactly 0 when masked; rebuilt rows sum to 1 and differ from PyTorch's weights by `err` (<= 2e-3).",
    "Hard gate (p > threshold) is the inference mode; records under ablation.* come from real runs of the "
    "same weights with FiLM off, the diagonal mask off, or the soft (smoothstep) gate.",
    "Power values are in scaled units (see meta.scalers), not watts.",
    "stats (min, max, mean, population std) are of the exact float32 tensor; err is the max abs difference "
    "between what a reader materialises and that tensor over the captured batch.",
]


def capture_batch(loaded_or_model, x, y=None, t0=None, *, ablations: bool = True, meta: dict | None = None) -> Capture:
    """Trace `x` (B, 7, L) through the model (eval, no_grad, hard gate) and plan every record.

    loaded_or_model: a `Loaded` (from load_checkpoint: its scalers/provenance go into meta) or a NILMFormer.
    y: optional (B, M, 2, L) ground truth -> target.power, target.state.  t0: optional (B,) window starts.
    ablations: also run FiLM off, diagonal mask off and soft gate and keep the records pages compare (an upstream
    model: the head ablation only).
    """
    model = getattr(loaded_or_model, "model", loaded_or_model)
    loaded = loaded_or_model if hasattr(loaded_or_model, "model") else None
    cfg = model.cfg
    upstream = hasattr(cfg, "arch")  # CondiNILM / the original NILMFormer: the head ablation only (no FiLM-off,
    # mask-off or soft-gate runs: their pages compare with the live model instead)
    was_training = model.training
    model.eval()
    x = torch.as_tensor(x, dtype=torch.float32)
    B = int(x.shape[0])
    planner = Planner()
    try:
        with one_blas_thread():
            trace_order, head_meta = _runs(planner, loaded, model, x, y, ablations)
    finally:
        model.train(was_training)
    records = ordered_records(planner, trace_order)
    planner.forget_true()
    m = _upstream_meta(cfg, t0, int(x.shape[-1])) if upstream else _meta(cfg, ablations, t0, int(x.shape[-1]))
    if head_meta is not None:
        m["head_ablation"] = head_meta
    if loaded is not None:
        m.update(scalers=loaded.scalers, provenance=loaded.provenance, checkpoint=checkpoint_info(loaded))
    m.update(meta or {})
    return Capture(records=records, meta=fmt._jsonable(m), batch_size=B)


def _runs(planner: Planner, loaded, model, x, y, ablations: bool) -> tuple[list[str], dict | None]:
    """Every traced run, planned: the main run, the targets, then the ablations. -> (trace order, head meta).
    The ablation runs that plan nothing as they run (_unplanned_runs: torch) run in a thread meanwhile the main
    run's records are planned (numpy, one core)."""
    store_weights(planner, model)
    upstream = hasattr(model.cfg, "arch")
    trace = planned_run(planner, model, x) if upstream else planned_run(planner, model, x, gate_mode="hard")
    trace_order = trace.names()
    with ThreadPoolExecutor(1, thread_name_prefix="ablation-runs") as pool:
        later = pool.submit(unplanned_runs, model, x, loaded, heads_only=upstream) if ablations else None
        plan_traced_records(planner, trace)
        del trace
        planner.release(set() if upstream else ablation_compares(model.cfg))
        release_freed_memory()
        if y is not None:
            _targets(planner, np.asarray(y, dtype=np.float32))
        runs = later.result() if later is not None else None
    head_meta = None
    if runs is not None:
        if not upstream:
            plan_ablations(planner, model, x, runs)
        if "heads" in runs:
            head_meta = store_head_ablation(planner, runs["heads"], upstream=upstream)
    return trace_order, head_meta


def _meta(cfg, ablations: bool, t0, window: int) -> dict:
    """The capture's self-description: config, devices, gate, which ablations ran, tolerances."""
    return {
        "config": cfg.to_dict(),
        "devices": cfg.device_names,
        "gate_thresholds": [float(d.gate_threshold) for d in cfg.devices],
        "gate_mode": "hard",
        "ablations": (
            {
                "no_film": "use_film=False",
                "no_mask": "mask_diagonal=False, on the attention page's samples only (its records' samples)",
                "soft_gate": "gate_mode='soft'",
            }
            if ablations
            else {}
        ),
        "spec_notes": SPEC_NOTES,
        "t0": _iso(t0),
        "window": window,
        "tolerances": {
            "attention_weights_abs": ATTN_WEIGHTS_TOL,
            "derived_rel_to_max": REL_TOL_DERIVED,
            "f16_rel": F16_EPS,
        },
    }


UPSTREAM_NOTES = [
    "Power values are in scaled units (see meta.scalers), not watts; the stem appends a stats token, so the "
    "encoder's records have L + 1 tokens (the last one is the stats token).",
    "The main run is the upstream's own evaluation; the only ablation runs are the single-head knock-outs of the "
    "head ablation (ablation.heads.*, with the checkpoint's scalers), on the attention page's samples.",
]


def _upstream_meta(cfg, t0, window: int) -> dict:
    """An upstream model's capture self-description: its architecture, config and devices."""
    return {
        "architecture": cfg.arch,
        "config": cfg.to_dict(),
        "devices": list(cfg.devices),
        "gate_mode": "soft" if cfg.arch == "condinilm" else "none",
        "ablations": {},
        "spec_notes": UPSTREAM_NOTES,
        "t0": _iso(t0),
        "window": window,
        "tolerances": {"attention_weights_abs": ATTN_WEIGHTS_TOL, "derived_rel_to_max": REL_TOL_DERIVED},
    }


def checkpoint_info(loaded) -> dict:
    path = getattr(loaded, "path", "") or ""
    info = {"file": Path(path).name if path else None, "nilmbuild_version": getattr(loaded, "nilmbuild_version", None)}
    if getattr(loaded, "fingerprint", ""):
        info["sha256"] = loaded.fingerprint
    log = getattr(loaded, "train_log", None) or {}
    if isinstance(log, dict):
        info["train_log_keys"] = sorted(str(k) for k in log)
    return info


def _targets(planner: Planner, y: np.ndarray) -> None:
    """Ground truth y (B, M, 2, L): power and ON/OFF state per device, as target.power / target.state."""
    for i, (name, doc) in enumerate(
        (
            (names.TARGET_POWER, f"ground-truth power per device (scaled, same units as {names.OUTPUT_POWER})"),
            (names.TARGET_STATE, "ground-truth ON/OFF state per device"),
        )
    ):
        planner.store(name, y[:, :, i], ("batch", "device", "time"), "12", "forward-pass.md 12", doc)


def _iso(t0) -> list[str] | None:
    if t0 is None:
        return None
    a = np.asarray(t0)
    if np.issubdtype(a.dtype, np.datetime64):
        return [str(v) + "Z" for v in a.astype("datetime64[s]")]
    return [str(v) for v in a.tolist()]
