"""The Forward page of an upstream model (CondiNILM, the original NILMFormer): its forward pass stage by stage, in the
order model/upstream/model.py runs it, each stage the captured tensor(s) it produces for the selected window.

The stage list follows the model's own graph: only the modules the loaded model has (FiLM, the sparse CNN, the soft
gate for CondiNILM; the stats projection and conv head for the original), one stage per encoder layer of its config,
and every record checked against the capture. Shapes, axes and docs travel in the capture blob; the page lays a
record with a time / token axis out with time left to right (`time_cols`).
"""

from __future__ import annotations

from nilmbuild.model import names
from nilmbuild.site import upstream_story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import model_sizes, pick_device_samples, view_page, window_starts

N_SAMPLES = 4
TIME_AXES = ("time", "token")  # a record's axis that runs along the window (the page's x axis)


def _stage(title: str, records: list[str], what: str) -> dict:
    return {"title": title, "records": records, "what": what}


def _stem(cfg, m: dict) -> list[dict]:
    last = names.embed_unit(len(cfg.dilations) - 1, "out")
    return [
        _stage("Input", [names.INPUT], f"the scaled aggregate and {m['n_exo']} time-feature channels"),
        _stage("Instance norm", [names.INSTANCE_NORM], "the power channel minus its window mean, over its std"),
        _stage("DilatedBlock", [last], f"1 -> {m['d_stem']} channels, dilations {', '.join(map(str, cfg.dilations))}"),
        _stage("Time projection", ["time_proj"], f"1x1 conv of the time features, {m['n_exo']} -> {m['d_time']}"),
        _stage("Stats token", ["stats_token"], f"Linear(2, {m['d_model']}) of the window's mean and std"),
        _stage("Tokens", ["tokens"], f"{m['window']} time tokens + the stats token = {m['n_tokens']}"),
    ]


def _film_enc(cfg) -> list[dict]:
    if not (cfg.arch == "condinilm" and cfg.use_film):
        return []
    return [
        _stage("Condition features", [names.cond("vector")], "electrical and frequency-band features of the window"),
        _stage(
            "Encoder FiLM γ, β",
            [names.film("film_enc", "gamma_mean"), names.film("film_enc", "beta_mean")],
            "per layer, averaged over the devices",
        ),
    ]


def _encoder(cfg) -> list[dict]:
    film = " + FiLM" if cfg.arch == "condinilm" and cfg.use_film else ""
    out = [
        _stage(f"Encoder layer {l}", [names.encoder(l, "out")], f"LN, attention, LN, FFN{film}; residuals from LN")
        for l in range(int(cfg.n_encoder_layers))
    ]
    return out + [_stage("Final LayerNorm", ["final_norm"], "every token normalised; the stats token leaves next")]


def _head(cfg) -> list[dict]:
    if cfg.arch == "nilmformer":
        return [
            _stage("Stats projection", ["stats_out"], "the stats token -> mean', std' for the de-normalisation"),
            _stage("Conv head", ["head.conv"], "the power in normalised units"),
            _stage("Output", [names.OUTPUT_POWER], "conv head x std' + mean' (scaled units)"),
        ]
    out = [_stage("Shared head", ["head.shared"], "SharedHead conv over the time tokens")]
    out.append(_stage("Power head", ["head.power_raw"], "per device, after its adapter"))
    if cfg.use_film:
        out.append(_stage("Output FiLM γ, β", [names.film("film_dec", "gamma"), names.film("film_dec", "beta")],
                          "one (γ, β) per device"))  # fmt: skip
        out.append(_stage("Output FiLM", ["head.power_film"], "(1 + γ) power + β, before the ReLU"))
    out.append(_stage("ReLU", ["head.power"], "the Transformer's ungated power"))
    for i in cfg.sparse_indices:
        dev = cfg.devices[i]
        out.append(_stage(f"Sparse CNN ({dev})", [f"sparse.{dev}.amplitude"], f"{dev}'s power from the raw aggregate"))
    out.append(_stage("Ungated power, gate logit", ["output.power_ungated", "output.gate_logit"], "per device"))
    out.append(_stage("Soft gate p", ["gate.prob"], "the evaluation's gate with the stored scale, floor and bias"))
    return out + [_stage("Output", [names.OUTPUT_POWER], "power x (floor + (1 - floor) p), scaled units")]


def stages(cfg) -> list[dict]:
    """The stages of the loaded model's forward pass, in the order it runs them."""
    m = model_sizes(cfg, cfg.step_s)
    out = _stem(cfg, m) + _film_enc(cfg) + _encoder(cfg) + _head(cfg)
    return [{"stage": str(i), **s} for i, s in enumerate(out)]


def layout(axes, shape) -> dict:
    """How the page draws one record of these axes and shape for one sample: as a (rows x cols) grid, transposed
    when its time / token axis (longer than one) comes before the feature axis, so that time runs left to right;
    the axis names, and whether x runs along the window (time_x: its ticks are clock time, UTC, from the window's start; the stats token named)."""
    a, n = list(axes[1:]), list(shape[1:])  # without the batch axis
    transpose = len(a) == 2 and a[0] in TIME_AXES and a[1] not in TIME_AXES and n[0] > 1
    if transpose:
        a, n = a[::-1], n[::-1]
    time_x = bool(a) and a[-1] in TIME_AXES and n[-1] > 1
    return {"transpose": transpose, "x": a[-1] if a else "value", "y": " x ".join(a[:-1]) or "one row",
            "time_x": time_x}  # fmt: skip


def _laid_out(ctx, st: dict) -> dict:
    """A stage with each record's layout (the page's grid and axis names)."""
    recs = ctx.capture.records
    return {**st, "layout": [layout(recs[r].axes, recs[r].shape) for r in st["records"]]}


def _in_run_order(ctx, st: list[dict]) -> list[dict]:
    """The stages in the order the model traced their records (the capture keeps the trace order)."""
    order = {n: i for i, n in enumerate(ctx.capture.records)}
    st = sorted(st, key=lambda s: min(order[r] for r in s["records"]))
    return [{**s, "stage": str(i)} for i, s in enumerate(st)]


def build(ctx, view: str) -> PageSpec:
    cfg = ctx.loaded.cfg
    st = stages(cfg)
    missing = [r for s in st for r in s["records"] if r not in ctx.capture.records]
    if missing:
        raise KeyError(f"forward page: the capture has no record {missing[0]}")
    st = [_laid_out(ctx, s) for s in _in_run_order(ctx, st)]
    samples = pick_device_samples(ctx, min(N_SAMPLES, int(ctx.x.shape[0])))
    records = sorted({r for s in st for r in s["records"]})
    data = {"stages": st, "samples": samples, "sample_labels": window_starts(ctx, samples),
            "step_minutes": int(cfg.step_s) / 60, "stats_index": int(cfg.window),
            "story": upstream_story.forward_story(ctx, samples, st)}  # fmt: skip
    context = {"m": model_sizes(cfg, cfg.step_s), "arch": upstream_prose.NAMES[cfg.arch], "n_stages": len(st),
               "notes": []}  # fmt: skip
    summary = f"{len(st)} stages of {upstream_prose.NAMES[cfg.arch]}'s forward pass, each its real tensor."
    return view_page(view, template="upstream_forward.html", entry="page_upstream_forward.js", data=data,
                     blobs={"capture": ctx.blob(records, samples)}, context=context, summary=summary, section="",
                     title=upstream_prose.TITLES["forward"], lead=upstream_prose.LEADS["forward"])  # fmt: skip
