"""The capture planner: holds the true tensors while records are planned, stores each record or derives it from
others (verified against the true tensor, stored instead when the rebuild misses its bound), and plans a traced run
(the model's records, each attention layer chunk by chunk) in the order a reader needs them."""

from __future__ import annotations

from collections import Counter

import numpy as np

from nilmbuild.model import names
from nilmbuild.model.trace import Trace

from . import format as fmt
from .attention_plan import F16_EPS, LayerPlan, max_abs_diff
from .records import CaptureRecord, moments_of, stored_record
from .traced_run import run_traced

REL_TOL_DERIVED = 8 * F16_EPS  # derived (non-attention) records: err <= 8 u * max|x| (about 3.9e-3 max|x|)


class Planner:
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
        rec = stored_record(name, t, axes, stage, section, doc, encoding, samples)
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
            moments_of(true, batched),
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

    def store_lse(self, name: str, lr, lse: np.ndarray, samples=None) -> None:
        """The row lse a reader uses (computed from the stored q, k); stats and err against PyTorch's (lr)."""
        true_lse = lr.tensor.numpy()
        doc = lr.doc + " (computed from the stored q, k)"
        rec = self.store(name, lse, lr.axes, lr.stage, lr.section, doc, encoding="f32", samples=samples)
        rec.moments = moments_of(true_lse, True)
        rec.err = max_abs_diff(lse, true_lse)
        self.true[name] = true_lse

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


def plan_traced_records(planner: Planner, trace: Trace) -> None:
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


def planned_run(
    planner: Planner, model, x, ablation: str | None = None, include_scores: bool = True, samples=None, **kw
) -> Trace:
    """run_traced with each attention layer planned chunk by chunk (LayerPlan) as names.attn(l, ...), under
    names.ablation(ablation, ...) for an ablation run, which aliases q, k equal to the main run's. A layer whose rebuild misses its bound with f16
    q, k is traced again with f32 q, k; missing with f32 is an error (storing (B, H, L, L) is never the plan).
    samples: plan these batch indices of x only, in increasing order (their records are partial:
    CaptureRecord.samples)."""
    if samples is not None:
        samples = sorted({int(s) for s in samples})
    f32: set[int] = set()
    while True:
        trace, plans = _trace_planned(model, x, ablation, include_scores, f32, samples=samples, **kw)
        missed = {layer for layer, plan in plans.items() if plan.misses()}
        if not missed:
            break
        if missed & f32:
            plan = plans[min(missed & f32)]
            raise RuntimeError(f"{plan.name('*')}: rebuilt {plan.misses()} miss their bounds even with f32 q, k")
        f32 |= missed
        del trace
    for _, plan in sorted(plans.items()):
        plan.finish(planner, trace, samples)
    return trace


def _trace_planned(model, x, ablation: str | None, include_scores: bool, f32: set, **kw):
    """One traced run whose attention layers are planned as they come (f32 q, k for the layers in f32)."""
    layers = model.layers if hasattr(model, "layers") else model.encoder_layers  # spec | model/upstream
    scale = layers[0].attn.scale
    plans: dict[int, LayerPlan] = {}

    def on_attention(layer: int, parts: dict) -> None:
        enc = "f32" if layer in f32 else "f16"
        plan = plans.setdefault(layer, LayerPlan(layer, ablation, scale, enc, include_scores))
        plan.add(parts)

    return run_traced(model, x, attention=on_attention, **kw), plans


def ordered_records(planner: Planner, trace_order: list[str]) -> dict[str, CaptureRecord]:
    """Trace order first, then target.*, weights.*, ablation.* (each in insertion order)."""
    out = {n: planner.records[n] for n in trace_order if n in planner.records}
    for prefix in (names.TARGET, names.WEIGHTS, names.ABLATION):
        for n, r in planner.records.items():
            if n.startswith(prefix) and n not in out:
                out[n] = r
    for n, r in planner.records.items():
        out.setdefault(n, r)
    return out
