"""The ablation runs the pages compare with: FiLM off, the diagonal mask off (on the attention page's samples), the
soft gate, and the per-head ablation (head_ablation.py). Runs of the same weights; each record is an alias of the
main run's when the tensors are equal, derived when it follows from others, stored otherwise."""

from __future__ import annotations

from nilmbuild.memory import release_freed_memory
from nilmbuild.model import names
from nilmbuild.model.trace import Trace

from .head_ablation import focus_samples, head_ablation
from .planner import Planner, planned_run
from .traced_run import run_traced


def unplanned_runs(model, x, loaded, heads_only: bool = False) -> dict:
    """The ablation runs that nothing is planned from while they run: FiLM off, the soft gate (traces) and, for a
    checkpoint with appliance scalers, the head ablation (head_ablation's result). heads_only: the head ablation
    alone (an upstream model: its pages compare with no other run)."""
    runs = {}
    if not heads_only:
        no_film = no_film_records(model.cfg)
        runs["no_film"] = run_traced(model, x, keep=no_film.__contains__, gate_mode="hard", use_film=False)
        runs["soft_gate"] = run_traced(model, x, keep=lambda n: n == names.OUTPUT_POWER, gate_mode="soft")
    if loaded is not None and (loaded.scalers or {}).get("appliances"):
        runs["heads"] = head_ablation(model, x, loaded.scalers, focus_samples(x))
    return runs


def ablation_compares(cfg) -> set[str]:
    """The main run's records the ablation runs compare their own with (to alias an equal tensor)."""
    layers = range(cfg.n_encoder_layers)
    return {names.OUTPUT_POWER} | {
        names.encoder(l, part) for l in layers for part in ("film", "out", "attn.q", "attn.k")
    }


def no_film_records(cfg) -> set[str]:
    """What the FiLM-off run records: the encoder layers' FiLM and outputs, the heads' and the final power."""
    layers = range(cfg.n_encoder_layers)
    return (
        {names.OUTPUT_POWER}
        | {names.encoder(l, part) for l in layers for part in ("film", "out")}
        | {names.head(d, "power") for d in cfg.device_names}
    )


def _out_power(planner: Planner, kind: str, trace: Trace, samples=None) -> None:
    """An ablation run's final power: an alias of the main run's when equal, else stored."""
    r = trace.records[names.OUTPUT_POWER]
    planner.alias_or_store(
        names.ablation(kind, names.OUTPUT_POWER),
        r.tensor.numpy(),
        r.axes,
        r.stage,
        r.section,
        r.doc,
        names.OUTPUT_POWER,
        samples=samples,
    )


def plan_ablations(planner: Planner, model, x, runs: dict) -> None:
    """Plan the ablations: FiLM off and the soft gate from their runs (unplanned_runs), the diagonal mask off
    from a planned run made here."""
    _ablation_no_film(planner, model.cfg, runs.pop("no_film"))
    _ablation_no_mask(planner, model, x)
    _out_power(planner, "soft_gate", runs.pop("soft_gate"))  # soft gate: final power


def _ablation_no_mask(planner: Planner, model, x) -> None:
    """Diagonal mask off, on the attention page's samples (its (H, L, L) rebuilds cost as much as the main run's):
    q, k, lse and rebuilt weights for every layer, final power."""
    samples = focus_samples(x)
    trace = planned_run(
        planner,
        model,
        x,
        ablation="no_mask",
        include_scores=False,
        samples=samples,
        keep=lambda n: n == names.OUTPUT_POWER or n.endswith((".q", ".k", ".lse", ".weights")),
        gate_mode="hard",
        mask_diagonal=False,
    )
    _out_power(planner, "no_mask", trace, samples)
    del trace
    release_freed_memory()


def _ablation_no_film(planner: Planner, cfg, trace: Trace) -> None:
    """FiLM off (trace: its run): encoder outputs, final power, per-device power."""
    for l in range(cfg.n_encoder_layers):
        for part in ("film", "out"):
            n = names.encoder(l, part)
            if n not in trace.records:
                continue
            r = trace.records[n]
            meta = (r.axes, r.stage, r.section, r.doc + " (FiLM off)")
            if l == 0 and part == "out":  # layer 0 sees the same input: out = resid1 + ffn.out
                same = {"op": "add", "a": names.encoder(0, "resid1"), "b": names.encoder(0, "ffn.out")}
                planner.derive(names.ablation("no_film", n), r.tensor.numpy(), *meta, same)
            else:
                planner.alias_or_store(names.ablation("no_film", n), r.tensor.numpy(), *meta, n)
    _out_power(planner, "no_film", trace)
    for i, d in enumerate(cfg.device_names):
        r = trace.records[names.head(d, "power")]
        planner.derive(
            names.ablation("no_film", names.head(d, "power")),
            r.tensor.numpy(),
            r.axes,
            r.stage,
            r.section,
            r.doc + " (FiLM off)",
            {"op": "select", "src": names.ablation("no_film", names.OUTPUT_POWER), "axis": 1, "index": i},
        )
    del trace
    release_freed_memory()
