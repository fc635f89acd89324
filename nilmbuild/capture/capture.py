"""Run the fixed example batch through NILMFormer and keep every intermediate tensor as a compact record.

`capture_batch(model_or_loaded, x, y, t0)` traces the inference run (hard gate, explicit attention) and,
from real runs of the same weights, the ablations the pages compare against (FiLM off, diagonal mask off,
soft gate). Each record knows its encoding: stored (f16 / f32 / bits) or derived (an exact function of
other records, see format.py). Every derived record is rebuilt here with the reader's own code and
compared with the true tensor; `err` is that max abs difference, and a derivation that misses its bound
falls back to storing the tensor.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from nilmbuild.memory import release_freed_memory
from nilmbuild.model import names
from nilmbuild.model.trace import Trace
from nilmbuild.threads import one_blas_thread

from . import format as fmt
from .attention_plan import ATTN_WEIGHTS_TOL, F16_EPS, LayerPlan, max_abs_diff
from .head_ablation import focus_samples, head_ablation, store_head_ablation
from .traced_run import run_traced

REL_TOL_DERIVED = 8 * F16_EPS  # derived (non-attention) records: err <= 8 u * max|x| (about 3.9e-3 max|x|)
SMALL_NUMEL = 1024  # per sample: tensors this small are stored f32

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


@dataclass
class CaptureRecord:
    name: str
    tensor: np.ndarray | None  # float32 values a stored record writes (None for derived)
    axes: tuple[str, ...]
    stage: str
    section: str
    doc: str
    shape: tuple[int, ...]
    moments: list  # per-sample (n, min, max, mean, M2) of the exact tensor; [one] if unbatched
    encoding: str = "f16"
    derive: dict | None = None  # op + args when encoding == "derived"
    err: float = 0.0
    samples: tuple[int, ...] | None = None  # batch indices of the rows, when a run was made on these samples only

    def __post_init__(self) -> None:
        if self.samples is not None:
            self.samples = tuple(int(s) for s in self.samples)

    def rows(self) -> list[int]:
        """The batch indices of a batched record's rows (all of the batch unless `samples`)."""
        return list(range(self.shape[0])) if self.samples is None else list(self.samples)

    def deps(self) -> list[str]:
        if self.encoding != "derived":
            return []
        return [self.derive[f] for f in fmt.OP_REFS[self.derive["op"]] if self.derive.get(f) is not None]


@dataclass
class Capture:
    records: dict[str, CaptureRecord]
    meta: dict = field(default_factory=dict)
    batch_size: int = 0

    def names(self) -> list[str]:
        return list(self.records)


# ---------------------------------------------------------------------------------------------- helpers
def _moments(t: np.ndarray, batched: bool) -> list:
    if batched:
        return [fmt.moments(t[i]) for i in range(t.shape[0])]
    return [fmt.moments(t)]


def choose_encoding(t: np.ndarray, batched: bool) -> str:
    """f16 by default; bits for 0/1 tensors; f32 for small, out-of-range or tiny-range tensors."""
    per_sample = t[0].size if (batched and t.shape[0]) else t.size
    finite = np.isfinite(t).all()
    if t.size >= 8 and finite and np.isin(t, (0.0, 1.0)).all():
        return "bits"
    if per_sample <= SMALL_NUMEL or not finite:
        return "f32"
    amax = float(np.abs(t).max()) if t.size else 0.0
    if amax > 65000.0:
        return "f32"
    q = fmt.f16_round(t)
    std = float(t.std())
    if std > 0 and float(np.abs(q - t).max()) > 1e-2 * std:  # f16 would blur the tensor's own variation
        return "f32"
    nnz = int(np.count_nonzero(q))
    if (t.size + 7) // 8 + 2 * nnz < 0.9 * 2 * t.size:  # mostly-zero (ReLU) tensors: sparse f16
        return "f16z"
    return "f16"


def _stored(name, t, axes, stage, section, doc, encoding=None, samples=None) -> CaptureRecord:
    t = np.ascontiguousarray(np.asarray(t, dtype=np.float32))
    batched = bool(axes) and axes[0] == "batch"
    enc = encoding or choose_encoding(t, batched)
    with np.errstate(invalid="ignore"):
        d = np.abs(fmt.quantise(t, enc).astype(np.float64) - t)
    err = float(np.nanmax(d)) if t.size and not np.isnan(d).all() else 0.0
    return CaptureRecord(
        name, t, tuple(axes), stage, section, doc, tuple(t.shape), _moments(t, batched), enc, None, err, samples
    )


class _Planner:
    """Holds the true tensors while records are planned, and verifies derived records against them."""

    def __init__(self) -> None:
        self.records: dict[str, CaptureRecord] = {}
        self.true: dict[str, np.ndarray] = {}
        self._cache: dict[str, np.ndarray] = {}

    def get(self, name: str) -> np.ndarray:
        """What a reader would get for `name` (quantised stored data, or the rebuilt derived tensor)."""
        if name not in self._cache:
            r = self.records[name]
            if r.encoding == "derived":
                get = self.get
                if r.axes[:1] == ("batch",):  # each batched record it derives from, at this record's rows
                    get = fmt.derive_rows(r.rows(), self._batched, lambda n: self.records[n].rows(), self.get)
                self._cache[name] = fmt.materialise({"name": name, "shape": list(r.shape), **r.derive}, get)
            else:
                self._cache[name] = fmt.quantise(r.tensor, r.encoding)
        return self._cache[name]

    def _batched(self, name: str) -> bool:
        return self.records[name].axes[:1] == ("batch",)

    def store(self, name, t, axes, stage, section, doc, encoding=None, samples=None) -> CaptureRecord:
        rec = _stored(name, t, axes, stage, section, doc, encoding, samples)
        self.records[name] = rec
        self.true[name] = rec.tensor
        self._cache.pop(name, None)
        return rec

    def derive(
        self,
        name,
        true,
        axes,
        stage,
        section,
        doc,
        derive: dict,
        tol: float | None = None,
        fallback: bool = True,
        samples=None,
    ) -> CaptureRecord | None:
        """Plan `name` as derived; keep it only if the rebuilt tensor is within tol of the true one.

        Otherwise store the tensor (fallback=True) or drop the plan and return None (fallback=False).
        samples: the batch indices of true's rows, for a run made on these samples only.
        """
        true = np.ascontiguousarray(np.asarray(true, dtype=np.float32))
        batched = bool(axes) and axes[0] == "batch"
        rec = CaptureRecord(
            name,
            None,
            tuple(axes),
            stage,
            section,
            doc,
            tuple(true.shape),
            _moments(true, batched),
            "derived",
            dict(derive),
            samples=samples,
        )
        self.records[name] = rec
        self._cache.pop(name, None)
        err = max_abs_diff(self.get(name), true)
        if tol is None:
            tol = REL_TOL_DERIVED * float(np.abs(true).max()) + 1e-6
        big = derive["op"] in ("attention_scores", "attention_masked_scores", "attention_weights")
        if big:  # nothing derives from (B, H, L, L) matrices
            self._cache.pop(name, None)
        if err <= tol:
            rec.err = err
            if not big:
                self.true[name] = true
            return rec
        self._cache.pop(name, None)
        if not fallback:
            del self.records[name]
            return None
        return self.store(name, true, axes, stage, section, doc, samples=samples)  # fall back: store it

    def alias_or_store(
        self, name, t, axes, stage, section, doc, main_name: str | None, encoding: str | None = None, samples=None
    ) -> CaptureRecord:
        """An alias of the main run's `main_name` when the tensors are equal (and, if `encoding` is asked for, the
        main record has it: a reader then gets the same values); else stored (with `encoding`, or the chosen one).
        samples: t's rows are these batch indices (a run made on these samples only)."""
        t = np.asarray(t, dtype=np.float32)
        main = self.records.get(main_name) if main_name else None
        same_encoding = encoding is None or (main is not None and main.encoding == encoding)
        if main is not None and same_encoding and main_name in self.true:
            ref = self.true[main_name]
            if samples is not None and main.axes[:1] == ("batch",):
                ref = fmt.take_rows(ref, main.rows(), samples)
            if np.array_equal(ref, t):
                alias = {"op": "alias", "src": main_name}
                return self.derive(name, t, axes, stage, section, doc, alias, tol=main.err, samples=samples)
        return self.store(name, t, axes, stage, section, doc, encoding, samples)

    def store_lse(self, prefix: str, lr, lse: np.ndarray, samples=None) -> None:
        """The row lse a reader uses (computed from the stored q, k); stats and err against PyTorch's (lr)."""
        true_lse = lr.tensor.numpy()
        doc = lr.doc + " (computed from the stored q, k)"
        rec = self.store(f"{prefix}.lse", lse, lr.axes, lr.stage, lr.section, doc, encoding="f32", samples=samples)
        rec.moments = _moments(true_lse, True)
        rec.err = max_abs_diff(lse, true_lse)
        self.true[f"{prefix}.lse"] = true_lse

    def verified(
        self, name: str, meta: tuple, shape: tuple, moments: list, spec: dict, err: float, samples=None
    ) -> CaptureRecord:
        """A derived (B, H, L, L) record whose rebuild was already checked (err); nothing derives from it.
        meta: (axes, stage, section, doc); moments: per sample, of the true tensor."""
        axes, stage, section, doc = meta
        rec = CaptureRecord(
            name, None, tuple(axes), stage, section, doc, tuple(shape), moments, "derived", dict(spec), err, samples
        )
        self.records[name] = rec
        self._cache.pop(name, None)
        return rec

    def evict(self, name: str) -> None:
        """Forget what a reader would get for `name` (rebuilt on demand, identically)."""
        self._cache.pop(name, None)

    def forget_true(self) -> None:
        self.true.clear()
        self._cache.clear()

    def release(self, keep) -> None:
        """Drop the true tensors except `keep` (names later runs compare with) and every rebuilt tensor (rebuilt
        again on demand, identically): the planned records stay. Frees the main run's ~0.8 GB before the
        ablation runs trace theirs."""
        self.true = {n: t for n, t in self.true.items() if n in keep}
        self._cache.clear()


# ---------------------------------------------------------------------------------------------- main
def _weights(planner: _Planner, model) -> None:
    """Store the weights the pages draw (float32 copies of the state dict), named weights.*."""
    cfg = model.cfg
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    for l in range(cfg.n_encoder_layers):
        _weights_encoder_layer(planner, sd, cfg, l)
    _weights_projection(planner, sd, cfg)
    for gen, mod, st in (("film_enc", "encoder_film", "6c"), ("film_dec", "decoder_film", "8")):
        _weights_film(planner, sd, gen, mod, st)
    for dev in cfg.devices:
        key = f"heads.{dev.name}.amp"
        if key in sd:
            planner.store(
                f"weights.{key}",
                sd[key],
                (),
                "10",
                "architecture.md 9.1",
                "softplus amplitude parameter a (output scale softplus(a))",
                encoding="f32",
            )


def _weights_encoder_layer(planner: _Planner, sd: dict, cfg, l: int) -> None:
    """Attention projections, both LayerNorms and the FFN expansion of encoder layer `l`."""
    p, w = f"layers.{l}", f"weights.encoder.{l}"
    for m in ("wq", "wk", "wv", "wo"):
        doc = f"layer {l} attention projection {m[1].upper()} (out, in): y = x @ W^T"
        planner.store(
            f"{w}.attn.{m}", sd[f"{p}.attn.{m}.weight"], ("out_feature", "in_feature"), "7b", "attention.md 7.4", doc
        )
    for n, st, sec in (("norm1", "7a", "encoder-film.md 6.4"), ("norm2", "7d", "encoder-film.md 6.5")):
        for part, what in (("weight", "gain"), ("bias", "bias")):
            doc = f"layer {l} LayerNorm {n[-1]} {what}"
            planner.store(f"{w}.{n}.{part}", sd[f"{p}.{n}.{part}"], ("feature",), st, sec, doc)
    lin = f"Linear({cfg.d_model}, {cfg.d_ff})"
    sec = "encoder-film.md 6.5"
    planner.store(
        f"{w}.ffn.layer1.weight",
        sd[f"{p}.pffn.layer1.weight"],
        ("hidden", "feature"),
        "7e",
        sec,
        f"layer {l} FFN expansion {lin} weight",
    )
    planner.store(
        f"{w}.ffn.layer1.bias", sd[f"{p}.pffn.layer1.bias"], ("hidden",), "7e", sec, f"layer {l} FFN expansion bias"
    )


def _weights_projection(planner: _Planner, sd: dict, cfg) -> None:
    """The 1x1 conv c_embedding -> d_model (stage 4), stored as a (feature, channel) matrix."""
    conv = f"1x1 conv {cfg.c_embedding} -> {cfg.d_model}"
    w, b = sd["input_projection.weight"][:, :, 0], sd["input_projection.bias"]
    planner.store(
        "weights.input_projection.weight",
        w,
        ("feature", "channel"),
        "4",
        "forward-pass.md 4",
        f"{conv} weight (out, in)",
    )
    planner.store("weights.input_projection.bias", b, ("feature",), "4", "forward-pass.md 4", f"{conv} bias")


def _weights_film(planner: _Planner, sd: dict, gen: str, mod: str, st: str) -> None:
    """One FiLM generator: its learned device embeddings and its two-layer MLP (architecture.md 8.3)."""
    sec, g = "architecture.md 8.3", f"{mod}.gen"
    emb = sd[f"{g}.device_embed.weight"]
    planner.store(
        f"weights.{gen}.device_embed", emb, ("device", "film_hidden"), st, sec, f"{gen} learned device embeddings"
    )
    for fc, ax in (("fc1", ("film_hidden", "film_in")), ("fc2", ("film_out", "film_hidden"))):
        planner.store(
            f"weights.{gen}.{fc}.weight", sd[f"{g}.{fc}.weight"], ax, st, sec, f"{gen} MLP {fc} weight (out, in)"
        )
        planner.store(f"weights.{gen}.{fc}.bias", sd[f"{g}.{fc}.bias"], ax[:1], st, sec, f"{gen} MLP {fc} bias")


def _main_records(planner: _Planner, trace: Trace) -> None:
    """Plan every traced record as the model declared it (trace.put(..., derive=...)): stored, or derived and
    verified. A record is planned once everything it derives from is; attention was planned during the run.
    What a reader would get for a record is dropped from the planner's cache once every record derived from it is
    planned (it would be rebuilt identically if asked again), so the rebuilt batch is not held twice."""
    pending: list[str] = []
    deps = {n: _deps(r.derive) for n, r in trace.records.items()}
    users = Counter(d for ds in deps.values() for d in ds)  # records not yet planned that derive from each name

    def ready(name: str) -> bool:
        return all(d in planner.records for d in deps[name])

    def plan(name: str) -> None:
        r = trace.records[name]
        args = (name, r.tensor.numpy(), r.axes, r.stage, r.section, r.doc)
        if r.derive is None:
            planner.store(*args)
        else:
            planner.derive(*args, r.derive)
        for d in deps[name]:
            users[d] -= 1
        for d in (*deps[name], name):
            if users[d] <= 0:
                planner.evict(d)

    for name in trace.records:
        if name in planner.records:  # q, k, lse: planned with their attention
            continue
        pending.append(name)
        while pending and any(ready(n) for n in pending):
            n = next(n for n in pending if ready(n))
            pending.remove(n)
            plan(n)
    if pending:
        raise RuntimeError(f"capture: {pending[0]} derives from records the model never traced")


def _deps(derive: dict | None) -> list[str]:
    return [] if derive is None else fmt.deps_of({"encoding": "derived", **derive})


def _order(planner: _Planner, trace_order: list[str]) -> dict[str, CaptureRecord]:
    """Trace order first, then target.*, weights.*, ablation.* (each in insertion order)."""
    out = {n: planner.records[n] for n in trace_order if n in planner.records}
    for prefix in ("target.", "weights.", "ablation."):
        for n, r in planner.records.items():
            if n.startswith(prefix) and n not in out:
                out[n] = r
    for n, r in planner.records.items():
        out.setdefault(n, r)
    return out


def _iso(t0) -> list[str] | None:
    if t0 is None:
        return None
    a = np.asarray(t0)
    if np.issubdtype(a.dtype, np.datetime64):
        return [str(v) + "Z" for v in a.astype("datetime64[s]")]
    return [str(v) for v in a.tolist()]


def checkpoint_info(loaded) -> dict:
    path = getattr(loaded, "path", "") or ""
    info = {"file": Path(path).name if path else None, "nilmbuild_version": getattr(loaded, "nilmbuild_version", None)}
    if getattr(loaded, "fingerprint", ""):
        info["sha256"] = loaded.fingerprint
    log = getattr(loaded, "train_log", None) or {}
    if isinstance(log, dict):
        info["train_log_keys"] = sorted(str(k) for k in log)
    return info


def _targets(planner: _Planner, y: np.ndarray) -> None:
    """Ground truth y (B, M, 2, L): power and ON/OFF state per device, as target.power / target.state."""
    for i, (what, doc) in enumerate(
        (
            ("power", "ground-truth power per device (scaled, same units as output.power)"),
            ("state", "ground-truth ON/OFF state per device"),
        )
    ):
        planner.store(f"target.{what}", y[:, :, i], ("batch", "device", "time"), "12", "forward-pass.md 12", doc)


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


def capture_batch(loaded_or_model, x, y=None, t0=None, *, ablations: bool = True, meta: dict | None = None) -> Capture:
    """Trace `x` (B, 7, L) through the model (eval, no_grad, hard gate) and plan every record.

    loaded_or_model: a `Loaded` (from load_checkpoint: its scalers/provenance go into meta) or a NILMFormer.
    y: optional (B, M, 2, L) ground truth -> target.power, target.state.  t0: optional (B,) window starts.
    ablations: also run FiLM off, diagonal mask off and soft gate and keep the records pages compare.
    """
    model = getattr(loaded_or_model, "model", loaded_or_model)
    loaded = loaded_or_model if hasattr(loaded_or_model, "model") else None
    cfg = model.cfg
    was_training = model.training
    model.eval()
    x = torch.as_tensor(x, dtype=torch.float32)
    B = int(x.shape[0])
    planner = _Planner()
    try:
        with one_blas_thread():
            trace_order, head_meta = _runs(planner, loaded, model, x, y, ablations)
    finally:
        model.train(was_training)
    records = _order(planner, trace_order)
    planner.forget_true()
    m = _meta(cfg, ablations, t0, int(x.shape[-1]))
    if head_meta is not None:
        m["head_ablation"] = head_meta
    if loaded is not None:
        m.update(scalers=loaded.scalers, provenance=loaded.provenance, checkpoint=checkpoint_info(loaded))
    m.update(meta or {})
    return Capture(records=records, meta=fmt._jsonable(m), batch_size=B)


def _runs(planner: _Planner, loaded, model, x, y, ablations: bool) -> tuple[list[str], dict | None]:
    """Every traced run, planned: the main run, the targets, then the ablations. -> (trace order, head meta).
    The ablation runs that plan nothing as they run (_unplanned_runs: torch) run in a thread meanwhile the main
    run's records are planned (numpy, one core)."""
    _weights(planner, model)
    trace = _planned_run(planner, model, x, gate_mode="hard")
    trace_order = trace.names()
    with ThreadPoolExecutor(1, thread_name_prefix="ablation-runs") as pool:
        later = pool.submit(_unplanned_runs, model, x, loaded) if ablations else None
        _main_records(planner, trace)
        del trace
        planner.release(_ablation_compares(model.cfg))
        release_freed_memory()
        if y is not None:
            _targets(planner, np.asarray(y, dtype=np.float32))
        runs = later.result() if later is not None else None
    head_meta = None
    if runs is not None:
        _ablations(planner, model, x, runs)
        if "heads" in runs:
            head_meta = store_head_ablation(planner, runs["heads"])
    return trace_order, head_meta


def _unplanned_runs(model, x, loaded) -> dict:
    """The ablation runs that nothing is planned from while they run: FiLM off, the soft gate (traces) and, for a
    checkpoint with appliance scalers, the head ablation (head_ablation's result)."""
    runs = {
        "no_film": run_traced(model, x, keep=_no_film_keeps, gate_mode="hard", use_film=False),
        "soft_gate": run_traced(model, x, keep=lambda n: n == names.OUTPUT_POWER, gate_mode="soft"),
    }
    if loaded is not None and (loaded.scalers or {}).get("appliances"):
        runs["heads"] = head_ablation(model, x, loaded.scalers, focus_samples(x))
    return runs


def _planned_run(
    planner: _Planner, model, x, prefix: str = "", include_scores: bool = True, samples=None, **kw
) -> Trace:
    """run_traced with each attention layer planned chunk by chunk (LayerPlan) as f"{prefix}encoder.{l}.attn"; an
    ablation run (prefix set) aliases q, k equal to the main run's. A layer whose rebuild misses its bound with f16
    q, k is traced again with f32 q, k; missing with f32 is an error (storing (B, H, L, L) is never the plan).
    samples: plan these batch indices of x only, in increasing order (their records are partial:
    CaptureRecord.samples)."""
    if samples is not None:
        samples = sorted({int(s) for s in samples})
    f32: set[int] = set()
    while True:
        trace, plans = _trace_planned(model, x, prefix, include_scores, f32, samples=samples, **kw)
        missed = {layer for layer, plan in plans.items() if plan.misses()}
        if not missed:
            break
        if missed & f32:
            plan = plans[min(missed & f32)]
            raise RuntimeError(f"{plan.prefix}: rebuilt {plan.misses()} miss their bounds even with f32 q, k")
        f32 |= missed
        del trace
    for layer, plan in sorted(plans.items()):
        plan.finish(planner, trace, layer, f"encoder.{layer}.attn" if prefix else None, samples)
    return trace


def _trace_planned(model, x, prefix: str, include_scores: bool, f32: set, **kw):
    """One traced run whose attention layers are planned as they come (f32 q, k for the layers in f32)."""
    scale = model.layers[0].attn.scale
    plans: dict[int, LayerPlan] = {}

    def on_attention(layer: int, parts: dict) -> None:
        enc = "f32" if layer in f32 else "f16"
        plan = plans.setdefault(layer, LayerPlan(f"{prefix}encoder.{layer}.attn", scale, enc, include_scores))
        plan.add(parts)

    return run_traced(model, x, attention=on_attention, **kw), plans


def _ablation_compares(cfg) -> set[str]:
    """The main run's records the ablation runs compare their own with (to alias an equal tensor)."""
    layers = range(cfg.n_encoder_layers)
    return {names.OUTPUT_POWER} | {
        f"encoder.{l}.{part}" for l in layers for part in ("film", "out", "attn.q", "attn.k")
    }


def _ablations(planner: _Planner, model, x, runs: dict) -> None:
    """Plan the ablations: FiLM off and the soft gate from their runs (_unplanned_runs), the diagonal mask off
    from a planned run made here."""

    def out_power(prefix, trace, samples=None):
        r = trace.records[names.OUTPUT_POWER]
        planner.alias_or_store(
            f"{prefix}.{names.OUTPUT_POWER}",
            r.tensor.numpy(),
            r.axes,
            r.stage,
            r.section,
            r.doc,
            names.OUTPUT_POWER,
            samples=samples,
        )
        return r

    _ablation_no_film(planner, model.cfg, runs.pop("no_film"), out_power)

    # diagonal mask off, on the attention page's samples (its (H, L, L) rebuilds cost as much as the main run's):
    # q, k, lse and rebuilt weights for every layer, final power
    P = "ablation.no_mask"
    samples = focus_samples(x)
    trace = _planned_run(
        planner,
        model,
        x,
        prefix=f"{P}.",
        include_scores=False,
        samples=samples,
        keep=lambda n: n == names.OUTPUT_POWER or n.endswith((".q", ".k", ".lse", ".weights")),
        gate_mode="hard",
        mask_diagonal=False,
    )
    out_power(P, trace, samples)
    del trace
    release_freed_memory()

    out_power("ablation.soft_gate", runs.pop("soft_gate"))  # soft gate: final power


def _no_film_keeps(name: str) -> bool:
    """What the FiLM-off run records: the encoder layers' FiLM and outputs, the heads' and the final power."""
    return name == names.OUTPUT_POWER or (
        name.endswith((".film", ".out", ".power"))
        and name.startswith(("encoder.", "heads."))
        and ".attn." not in name
        and ".ffn." not in name
    )


def _ablation_no_film(planner: _Planner, cfg, trace: Trace, out_power) -> None:
    """FiLM off (trace: its run): encoder outputs, final power, per-device power."""
    devs = cfg.device_names
    P = "ablation.no_film"
    for l in range(cfg.n_encoder_layers):
        for part in ("film", "out"):
            n = f"encoder.{l}.{part}"
            if n in trace.records:
                r = trace.records[n]
                if l == 0 and part == "out":  # layer 0 sees the same input: out = resid1 + ffn.out
                    planner.derive(
                        f"{P}.{n}",
                        r.tensor.numpy(),
                        r.axes,
                        r.stage,
                        r.section,
                        r.doc + " (FiLM off)",
                        {"op": "add", "a": "encoder.0.resid1", "b": "encoder.0.ffn.out"},
                    )
                    continue
                planner.alias_or_store(
                    f"{P}.{n}", r.tensor.numpy(), r.axes, r.stage, r.section, r.doc + " (FiLM off)", n
                )
    out_power(P, trace)
    for i, d in enumerate(devs):
        r = trace.records[f"heads.{d}.power"]
        planner.derive(
            f"{P}.heads.{d}.power",
            r.tensor.numpy(),
            r.axes,
            r.stage,
            r.section,
            r.doc + " (FiLM off)",
            {"op": "select", "src": f"{P}.output.power", "axis": 1, "index": i},
        )
    del trace
    release_freed_memory()


# ---------------------------------------------------------------------------------------------- sizes
def record_group(name: str) -> str:
    p = name.split(".")
    if p[0] == "ablation":
        return ".".join(p[:2])
    if p[0] == "weights":
        return "weights"
    if p[0] == "encoder":
        if len(p) > 3 and p[2] in ("attn", "ffn"):
            return ".".join(p[:3])
        return ".".join(p[:2])
    if p[0] == "heads":
        return "heads"
    if p[0] == "transpose_out":
        return "heads"
    if p[0] in ("input", "instance_norm", "pos_encoding", "projection", "transpose_in") or p[0].startswith("embed"):
        return "embed"
    return p[0]


def size_report(capture_or_blob, samples=(0,)) -> dict:
    """Bytes per record and per group of the blob for `samples` (default: one example sample).

    Returns {"samples", "blob_bytes", "data_bytes", "groups": {group: bytes}, "records": {name: {...}}}.
    """
    blob = (
        capture_or_blob
        if isinstance(capture_or_blob, (bytes, bytearray))
        else fmt.encode(capture_or_blob, samples=list(samples) if samples is not None else None)
    )
    reader = fmt.decode(bytes(blob))
    groups: dict[str, int] = {}
    records = {}
    for n in reader.names():
        rec = reader.record(n)
        nb = reader.nbytes(n)
        g = record_group(n)
        groups[g] = groups.get(g, 0) + nb
        records[n] = {
            "group": g,
            "bytes": nb,
            "encoding": rec["encoding"],
            "shape": rec["shape"],
            "axes": rec["axes"],
            "err": rec.get("err"),
            "stats": rec["stats"],
            "stage": rec["stage"],
            "op": rec.get("op"),
        }
    return {
        "samples": reader.meta.get("samples"),
        "blob_bytes": len(blob),
        "data_bytes": sum(groups.values()),
        "groups": groups,
        "records": records,
    }
