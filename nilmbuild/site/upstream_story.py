"""The findings and "try this" presets of an upstream model's own pages (CondiNILM, the original NILMFormer: the views
nilmbuild/site/views/upstream_*.py), as story.py writes them for the spec's pages: ``{"findings", "presets"}`` for
``PageSpec.data["story"]``, placed on the figures by static/js/story.js.

Each function reads the captured records of the windows its page shows (so a preset's ``sample``/``window`` is the
index of that window in the page's own list), lets nilmbuild/site/upstream_findings.py pick the case worth noticing
and writes its sentence. No number, device, layer, head or window here is chosen by hand.
"""

from __future__ import annotations

import numpy as np

from nilmbuild.model.names import HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE, INPUT, OUTPUT_POWER, attn, film
from nilmbuild.site import findings as F
from nilmbuild.site import upstream_findings as U
from nilmbuild.site.story import (
    _devices,
    _read,
    aggregate_watts,
    clock,
    device_label,
    device_watts,
    finding,
    pct,
    preset,
    step_hours,
    story,
    watts,
    window_label,
)


def _scale_w(ctx) -> np.ndarray:
    """(D,) watts per scaled unit of each device (the affine's a): a *difference* of scaled power in W."""
    from nilmbuild.data.preprocess import scaler_affines

    app = scaler_affines(ctx.prepared.scalers)["appliances"]
    return np.array([app[d]["a"] for d in _devices(ctx)], np.float64)


def attention_story(ctx, samples: list[int]) -> dict:
    """The head that gives the stats token (token L + 1) the most of its queries' weight, and the head whose
    knock-out moves a device most (the head ablation; without one, the most local head over the time steps)."""
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    names = [attn(l, "weights") for l in range(n_layers)]
    r = _read(ctx, names, samples)
    w = [r[n] for n in names]
    st, loc = U.stats_token_share(w), U.local_time_head(w)
    T = int(np.shape(w[0])[-1])
    top, low = st["top"], st["low"]
    go = preset(
        f"Layer {top['layer']}, head {top['head']}: reads the stats token", layer=top["layer"], head=top["head"]
    )
    text = (
        f"Head {top['head']} of layer {top['layer']} reads the stats token (token {T}) most: on average "
        f"{pct(top['share'])} of a time step's weight goes to it, against {pct(st['uniform'])} for a uniform head; "
        f"head {low['head']} of layer {low['layer']} gives it the least ({pct(low['share'])})."
    )
    (l, h, near), (gl, gh, far) = loc["local"], loc["global"]
    step_min = float(ctx.prepared.resample_s) / 60.0
    near_go = preset(f"Layer {l}, head {h}: the most local", layer=l, head=h)
    local = (
        f"Over the time steps, head {h} of layer {l} looks closest: its weight sits {near * step_min:.1f} min from "
        f"the query on average; head {gh} of layer {gl} looks furthest ({far * step_min:.1f} min)."
    )
    serves = _head_serves(ctx, samples)
    if serves is None:
        return story([finding("#uat-main", local, near_go), finding("#uat-stats", text, go)], [go, near_go])
    return story([finding("#uat-stats", text, go), serves[0]], [serves[1], go, near_go])


def _head_serves(ctx, samples: list[int]) -> tuple[dict, dict] | None:
    """The head whose knock-out moves a device's watts most (the capture's head ablation), None without one."""
    if HEAD_ABLATION_DELTA not in ctx.capture.records:
        return None
    r = _read(ctx, [HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE])
    t = F.top_head(r[HEAD_ABLATION_DELTA], r[HEAD_ABLATION_SAMPLE])
    at = samples.index(t["sample"]) if t["sample"] in samples else 0
    go = preset(f"Layer {t['layer']}, head {t['head']}: matters most", layer=t["layer"], head=t["head"], sample=at)
    text = (
        f"Head {t['head']} of layer {t['layer']} matters most for the {device_label(_devices(ctx)[t['device']])}: "
        f"zeroing it moves that device's power by {watts(t['delta_w'])} on average over the ablated windows."
    )
    return finding("#uat-heads-wrap", text, go), go


def gate_story(ctx, samples: list[int]) -> dict:
    """CondiNILM's external soft gate: the device and window where it removes the most energy."""
    r = _read(ctx, ["output.power_ungated", OUTPUT_POWER], samples)
    g = U.soft_gate_removed(*(device_watts(ctx, r[n]) for n in ("output.power_ungated", OUTPUT_POWER)), step_hours(ctx))
    name = device_label(_devices(ctx)[g["device"]])
    go = preset(f"The gate on the {name}", window=g["sample"])
    text = (
        f"The soft gate removes {g['kwh'] * 1000:.0f} Wh of the {name}'s ungated power in "
        f"{window_label(ctx, samples[g['sample']])}, {pct(g['share'])} of it: the most of any device and window here."
    )
    return story([finding("#ug-lanes", text, go)], [go])


def film_story(ctx, samples: list[int]) -> dict:
    """CondiNILM's FiLM: the device and window whose power the output FiLM changes most, and the encoder layer
    whose FiLM departs most from the identity."""
    names = ["head.power_raw", "head.power_film", film("film_dec", "gamma"), film("film_dec", "beta")]
    names += [film("film_enc", "gamma_mean"), film("film_enc", "beta_mean")]
    r = _read(ctx, names, samples)
    a = _scale_w(ctx)[None, :, None]
    sparse = list(ctx.loaded.cfg.sparse_indices)  # their output is the sparse CNN's: the output FiLM never reaches it
    if len(sparse) == len(_devices(ctx)):
        return story()
    c = U.output_film_change(r["head.power_raw"] * a, r["head.power_film"] * a, skip=sparse)
    s, d = c["sample"], c["device"]
    name = device_label(_devices(ctx)[d])
    gamma, beta = float(r[names[2]][s, d]), float(r[names[3]][s, d])
    go = preset(f"The output FiLM on the {name}", sample=s)
    text = (
        f"The output FiLM changes the {name} most: in {window_label(ctx, samples[s])} its γ = {gamma:+.3f} and "
        f"β = {beta:+.3f} move the power the ReLU passes by {watts(c['mean_abs_w'])} per step on average (its mean "
        f"by {watts(c['delta_w'], True)})."
    )
    e = U.strongest_film_layer(r[names[4]], r[names[5]])
    enc = (
        f"Layer {e['layer']}'s encoder FiLM departs most from the identity: its mean |γ| is {e['mean_abs_gamma']:.3f} "
        f"(at most {e['max_abs_gamma']:.3f}), so (1 + γ) scales that layer's FFN output features by up to "
        f"{pct(e['max_abs_gamma'])}."
    )
    return story([finding("#ufm-lanes", text, go), finding("#ufm-enc", enc)], [go])


def embedding_story(ctx, samples: list[int], last_unit: str) -> dict:
    """The DilatedBlock channel that follows the aggregate most closely, and the page's window with the widest
    spread of power (the stats token's std) beside the narrowest."""
    r = _read(ctx, [INPUT, last_unit, "stats.std", "stats.mean"], samples)
    unit = F.tracking_feature(r[last_unit], r[INPUT][:, 0])
    agg_scale = aggregate_watts(ctx, 1.0) - aggregate_watts(ctx, 0.0)
    std = np.asarray(r["stats.std"], np.float64)[:, 0] * agg_scale
    hi, lo = int(np.argmax(std)), int(np.argmin(std))
    go = preset("The window with the widest spread", window=hi)
    stem = (
        f"Channel {unit['feature']} of the DilatedBlock follows the aggregate most closely (r = {unit['r']:+.2f} over "
        "these windows), although its input is the instance-normalised power, whose level and spread are removed."
    )
    stats = (
        f"The stats token carries what instance norm removes: {window_label(ctx, samples[hi])} has a std of {watts(std[hi])}, "
        f"{window_label(ctx, samples[lo])} only {watts(std[lo])}, which instance norm makes look alike."
    )
    return story([finding("#ue-stem", stem), finding("#ue-tokens", stats, go)], [go])


def forward_story(ctx, samples: list[int], stages: list[dict]) -> dict:
    """The page windows' highest reading and the device the pass gives it to; for the original NILMFormer, its
    learned de-normalisation (the stats token's mean' and std') against each window's own statistics."""
    r = _read(ctx, [INPUT, OUTPUT_POWER], samples)
    p = F.peak_owner(aggregate_watts(ctx, r[INPUT][:, 0]), device_watts(ctx, r[OUTPUT_POWER]))
    at = {s["title"]: i for i, s in enumerate(stages)}
    go = preset("The output at the highest reading", sample=p["sample"], stage=at["Output"])
    devs = _devices(ctx)
    most = f", the most of its {len(devs)} devices" if len(devs) > 1 else ""
    clamp = " before the evaluation's clamp at 0 W" if ctx.loaded.cfg.arch == "condinilm" else ""
    text = (
        f"These windows' highest reading is {watts(p['aggregate_w'])} at {clock(ctx, samples[p['sample']], p['t'])} "
        f"UTC in {window_label(ctx, samples[p['sample']])}; the output gives the {device_label(devs[p['device']])} "
        f"{watts(p['device_w'])} there{clamp}{most}." + _negative(ctx, p["device_w"])
    )
    out, presets = [finding("#uf-strip", text, go)], [go]
    if "stats_out" in ctx.capture.records:
        out_f, out_p = _denorm_finding(ctx, samples, at["Stats projection"])
        out.append(out_f)
        presets.append(out_p)
    return story(out, presets)


def _negative(ctx, w: float) -> str:
    """Where the raw output the finding quotes is below 0 W: why, and what the shown post-processing does."""
    if w >= 0:
        return ""
    why = "CondiNILM's evaluation" if ctx.loaded.cfg.arch == "condinilm" else "nilmbuild's post-processing"
    return f" That is a raw output below 0 W, the model's own; {why} clamps it at 0 W."


def _denorm_finding(ctx, samples: list[int], stage: int) -> tuple[dict, dict]:
    """The original NILMFormer's learned de-normalisation: power = conv head x std' + mean', (mean', std') a
    projection of the stats token, in the (one) device's watts."""
    r = _read(ctx, ["stats_out", "stats.mean", "stats.std"], samples)
    so = np.asarray(r["stats_out"], np.float64)[:, 0]  # (S, 2): mean', std' in the device's scaled units
    a = float(_scale_w(ctx)[0])
    mean_w = device_watts(ctx, so[:, 0][:, None, None])[:, 0, 0]
    agg = aggregate_watts(ctx, 1.0) - aggregate_watts(ctx, 0.0)
    d = U.learned_denorm(
        mean_w, so[:, 1] * a, np.asarray(r["stats.mean"])[:, 0], np.asarray(r["stats.std"])[:, 0] * agg
    )
    lo, hi = d["low"], d["high"]
    go = preset(f"The stats projection, std' {watts(hi['std_w'])}", sample=hi["sample"], stage=stage)
    text = (
        f"The conv head's output is de-normalised with a mean' and std' learned from the stats token, not the "
        f"window's own: std' is {watts(lo['std_w'])} in {window_label(ctx, samples[lo['sample']])} and "
        f"{watts(hi['std_w'])} in {window_label(ctx, samples[hi['sample']])}; over these windows it follows the window's own std with r = {d['r_std']:+.2f}, mean' its "
        f"mean with r = {d['r_mean']:+.2f}."
    )
    return finding("#uf-zoom", text, go), go
