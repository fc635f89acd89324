"""Each page's findings and "try this" presets (issue 35 items 2-3), as the sentences the page places on its figures.

A page's view calls its function here with the SiteContext and the samples the page shows; the function reads the
captured records through the same Python reader as the pages (so the numbers are the tensors the page draws), lets
nilmbuild/site/findings.py choose the case worth noticing, and returns ``{"findings": [...], "presets": [...]}``
for ``PageSpec.data["story"]``:

- finding: ``{"target": CSS selector of the figure (its wrapper where overlays sit inside one), "text": str,
  "preset": {"label", "hash"} | None}``; the page's JS (static/js/story.js) only places the text on that figure;
- preset: ``{"label": str, "hash": "key=value&..."}``, a deep link into the page's own URL state (url_state.js).

No sentence here carries a number or a name that was not computed from the loaded checkpoint's tensors or log.
"""

from __future__ import annotations

import numpy as np

from nilmbuild.capture.format import decode
from nilmbuild.model.names import (
    HEAD_ABLATION_DELTA,
    HEAD_ABLATION_SAMPLE,
    INPUT,
    OUTPUT_POWER,
    PROJECTION,
    TARGET_POWER,
    TARGET_STATE,
    ablation,
    attn,
    encoder,
    head,
)
from nilmbuild.site import findings as F


def finding(target: str, text: str, preset: dict | None = None) -> dict:
    return {"target": target, "text": text, "preset": preset}


def preset(label: str, **state) -> dict:
    """A deep link into the page's URL state: preset("FiLM off", filmon=0) -> {"label", "hash": "filmon=0"}."""
    return {"label": label, "hash": "&".join(f"{k}={v}" for k, v in state.items())}


def story(findings=(), presets=()) -> dict:
    return {"findings": [f for f in findings if f], "presets": [p for p in presets if p]}


# ---- reading the capture -----------------------------------------------------------------------------------------


def _read(ctx, names, samples=None) -> dict:
    """name -> array of the captured record for `samples` (batch order of `samples`; None = all)."""
    reader = decode(ctx.blob(list(names), samples))
    return {n: reader.get(n) for n in names}


def _devices(ctx) -> list[str]:
    return list(ctx.loaded.devices or ctx.prepared.devices)


def device_label(name: str) -> str:
    return name.replace("_", " ")


def _affines(ctx) -> dict:
    from nilmbuild.data.preprocess import scaler_affines

    return scaler_affines(ctx.prepared.scalers)


def device_watts(ctx, z: np.ndarray) -> np.ndarray:
    """(..., D, L) scaled device power -> watts, z * a + b per device (the pages' page().watts)."""
    app = _affines(ctx)["appliances"]
    ab = np.array([[app[d]["a"], app[d]["b"]] for d in _devices(ctx)], np.float64)
    return np.asarray(z, np.float64) * ab[:, 0, None] + ab[:, 1, None]


def aggregate_watts(ctx, z: np.ndarray) -> np.ndarray:
    agg = _affines(ctx)["aggregate"]
    return np.asarray(z, np.float64) * agg["a"] + agg["b"]


def step_hours(ctx) -> float:
    return float(ctx.prepared.resample_s) / 3600.0


def clock(ctx, sample: int, step: int) -> str:
    """The wall-clock time (UTC, HH:MM) of `step` in batch window `sample`."""
    t = np.datetime64(np.asarray(ctx.t0)[sample], "s") + np.timedelta64(int(step * ctx.prepared.resample_s), "s")
    return str(t)[11:16]


def window_label(ctx, sample: int) -> str:
    t = str(np.datetime64(np.asarray(ctx.t0)[sample], "m")).replace("T", " ")
    return f"the window from {t} UTC"


def minutes(ctx, steps: int) -> str:
    m = steps * float(ctx.prepared.resample_s) / 60.0
    return f"{m:.0f}" if float(m).is_integer() else f"{m:.1f}"


def watts(x: float, sign: bool = False) -> str:
    """x W with the digits its size deserves: 4553 W, 62.8 W, 0.0734 W (sign: always with + or -)."""
    a = abs(x)
    spec = ".0f" if a >= 100 else ".1f" if a >= 10 else ".3g"
    return f"{x:{'+' if sign else ''}{spec}} W"


def pct(x: float) -> str:
    return f"{100 * x:.0f}%" if abs(x) >= 0.1 else f"{100 * x:.1f}%"


# ---- one function per page ---------------------------------------------------------------------------------------


def _errors_text(devs, err, where: str) -> str | None:
    if err["best"] is None:
        return None
    rel = err["relative"]
    best, worst = devs[err["best"]], devs[err["worst"]]
    if best == worst:  # one device with energy in the data: nothing to compare it with
        return f"{where}, the model's error for the {device_label(best)} is {pct(rel[err['best']])} of its energy."
    return (
        f"{where}, the model is closest for the {device_label(best)} (error {pct(rel[err['best']])} of its energy) "
        f"and furthest off for the {device_label(worst)} ({pct(rel[err['worst']])})."
    )


def index_story(ctx) -> dict:
    """The overview: which device the model gets most and least right over the whole example batch."""
    r = _read(ctx, [OUTPUT_POWER, TARGET_POWER])
    devs = _devices(ctx)
    err = F.device_errors(device_watts(ctx, r[OUTPUT_POWER]), device_watts(ctx, r[TARGET_POWER]))
    text = _errors_text(devs, err, f"Over the {int(ctx.capture.batch_size)} example windows")
    return story([finding("#flow-wrap", text) if text else None])


def data_story(ctx) -> dict:
    """Why disaggregation is hard, from the example batch: how little of the meter the devices explain, and the
    device that is almost never on."""
    r = _read(ctx, [INPUT, TARGET_POWER, TARGET_STATE])
    devs = _devices(ctx)
    agg = aggregate_watts(ctx, r[INPUT][:, 0])
    share = F.appliance_share(agg, np.clip(device_watts(ctx, r[TARGET_POWER]), 0, None))
    rare = F.rarest_device(r[TARGET_STATE])
    return story(
        [
            finding(
                "#raw-plot",
                f"In the {int(ctx.capture.batch_size)} example windows the {len(devs)} labelled devices draw only "
                f"{pct(share)} of the metered energy: the rest is other appliances the model must learn to ignore.",
            ),
            finding(
                "#states-plot",
                f"The {device_label(devs[rare['device']])} is ON in only {pct(rare['share'])} of the example minutes: "
                "the model sees few examples of it.",
            ),
        ]
    )


def forward_story(ctx, stages: list[dict]) -> dict:
    """The batch's highest aggregate minute and the device the pass ends up giving it to."""
    r = _read(ctx, [INPUT, OUTPUT_POWER])
    devs = _devices(ctx)
    p = F.peak_owner(aggregate_watts(ctx, r[INPUT][:, 0]), device_watts(ctx, r[OUTPUT_POWER]))
    last = [i for i, s in enumerate(stages) if OUTPUT_POWER in s["records"]]
    go = preset(f"Window {p['sample']}, final stage", sample=p["sample"], **({"stage": last[-1]} if last else {}))
    text = (
        f"The batch's highest reading, {watts(p['aggregate_w'])} at {clock(ctx, p['sample'], p['t'])} in window "
        f"{p['sample']}, leaves the last stage mostly as the {device_label(devs[p['device']])} "
        f"({watts(p['device_w'])})."
    )
    return story([finding(".fwd-wrap:has(> #fwd-3d)", text, go)], [go])


def embedding_story(ctx, samples: list[int], last_unit: str) -> dict:
    """The projected feature and the last ResUnit channel that follow the aggregate power most closely."""
    r = _read(ctx, [INPUT, PROJECTION, last_unit], samples)
    agg = r[INPUT][:, 0]
    proj = F.tracking_feature(r[PROJECTION], agg)
    unit = F.tracking_feature(r[last_unit], agg)
    go = preset(f"Channel {unit['feature']} in the receptive-field view", channel=unit["feature"])
    return story(
        [
            finding(
                "#emb-stack",
                f"Feature {proj['feature']} of the projection follows the aggregate power most closely "
                f"(r = {proj['r']:+.2f} over these windows); channel {unit['feature']} of the last ResUnit does "
                f"already (r = {unit['r']:+.2f}).",
                go,
            )
        ],
        [go],
    )


def encoder_story(ctx, samples: list[int]) -> dict:
    """The encoder sub-step (attention or FFN + FiLM) that moves the residual stream most, and in which layer."""
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    parts = {"attention": "attn.out", "feed-forward + FiLM": "film"}
    if encoder(0, "film") not in ctx.capture.records:  # a model without FiLM (the original NILMFormer)
        parts = {"attention": "attn.out", "feed-forward": "ffn.out"}
    names = [encoder(l, p) for l in range(n_layers) for p in ("in", *parts.values())]
    r = _read(ctx, names, samples)
    u = F.stream_updates(
        [r[encoder(l, "in")] for l in range(n_layers)],
        {k: [r[encoder(l, p)] for l in range(n_layers)] for k, p in parts.items()},
    )
    go = preset(f"Layer {u['layer']}", layer=u["layer"])
    text = (
        f"Layer {u['layer']}'s {u['part']} changes the stream most: what it adds is {pct(u['ratio'])} of the size "
        f"of the stream entering the layer (over these windows)."
    )
    return story([finding(".enc-wrap", text, go)], [go])


def attention_story(ctx, samples: list[int]) -> dict:
    """The head whose knock-out moves a device's watts most (the head-ablation matrix), the most local and most
    global heads, and what the diagonal mask changes (the unmasked ablation run)."""
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    devs = _devices(ctx)
    out, presets = [], []
    if HEAD_ABLATION_DELTA in ctx.capture.records:
        r = _read(ctx, [HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE])
        h = F.top_head(r[HEAD_ABLATION_DELTA], r[HEAD_ABLATION_SAMPLE])
        at = samples.index(h["sample"]) if h["sample"] in samples else 0
        go = preset(f"Layer {h['layer']}, head {h['head']}", layer=h["layer"], head=h["head"], sample=at, mask=1)
        text = (
            f"Head {h['head']} of layer {h['layer']} matters most for the {device_label(devs[h['device']])}: "
            f"knocking it out moves that device's power by {watts(h['delta_w'])} on average."
        )
        out.append(finding(".att-wrap:has(> #att-heads)", text, go))
        presets.append(go)
    local = _local_head(ctx, samples, n_layers)
    if local is not None:
        out.append(local[0])
        presets += local[1]
    return story(out, presets)


def _local_head(ctx, samples: list[int], n_layers: int) -> tuple[dict, list[dict]] | None:
    """The most local and the most global head of the model run, and how much weight the diagonal mask moves
    (the unmasked ablation run)."""
    masked = [attn(l, "weights") for l in range(n_layers)]
    unmasked = [ablation("no_mask", n) for n in masked]
    if not all(n in ctx.capture.records for n in unmasked):
        return None
    reader = decode(ctx.blob(masked + unmasked, samples))
    w = {n: reader.get(n) for n in masked + unmasked}
    lg = F.local_and_global(np.stack([F.attention_distance(w[n]) for n in masked]))
    moved = np.stack([F.weight_moved(w[m], w[u]) for m, u in zip(masked, unmasked)])
    ml, mh = (int(i) for i in np.unravel_index(int(np.argmax(moved)), moved.shape))
    step = float(ctx.prepared.resample_s) / 60.0
    (l, h, near), (gl, gh, far) = lg["local"], lg["global"]
    go = preset(f"Layer {l}, head {h}: the most local", layer=l, head=h, mask=1)
    text = (
        f"Head {h} of layer {l} looks closest: its weight sits {near * step:.0f} min from the query on average; "
        f"head {gh} of layer {gl} looks furthest ({far * step:.0f} min). Unticking the diagonal mask moves at most "
        f"{pct(float(moved[ml, mh]))} of a head's weight (head {mh} of layer {ml})."
    )
    off = preset(f"Layer {ml}, head {mh}, mask off", layer=ml, head=mh, mask=0)
    return finding("#att-main-wrap", text, go), [go, off]


def film_story(ctx, samples: list[int]) -> dict:
    """The device and window whose error grows most when FiLM is switched off (the no_film ablation run)."""
    off = ablation("no_film", OUTPUT_POWER)
    if off not in ctx.capture.records:
        return story()
    r = _read(ctx, [OUTPUT_POWER, off, TARGET_POWER], samples)
    devs = _devices(ctx)
    c = F.film_off_change(*(device_watts(ctx, r[n]) for n in (OUTPUT_POWER, off, TARGET_POWER)))
    name = device_label(devs[c["device"]])
    go = preset(f"FiLM off, {name}", sample=c["sample"], device=c["device"], filmon=0)
    text = (
        f"FiLM off hurts the {name} most: in {window_label(ctx, samples[c['sample']])} its error grows from "
        f"{watts(c['mae_on_w'])} to {watts(c['mae_off_w'])}, and its mean power moves by {watts(c['delta_w'], True)}."
    )
    return story([finding("#film-ablation", text, go)], [go, preset("All of FiLM off", filmon=0)])


def gate_story(ctx, samples: list[int]) -> dict:
    """The device and window where the closed hard gate removes the most raw power."""
    devs = _devices(ctx)
    names = [head(d, p) for d in devs for p in ("power_raw", "gate_prob")]
    r = _read(ctx, names, samples)
    raw = np.stack([r[head(d, "power_raw")] for d in devs], axis=1)
    prob = np.stack([r[head(d, "gate_prob")] for d in devs], axis=1)
    thr = [float(d.gate_threshold) for d in ctx.loaded.cfg.devices]
    g = F.gate_removed_energy(device_watts(ctx, raw), prob, thr, step_hours(ctx))
    name = device_label(devs[g["device"]])
    go = preset(f"{name.capitalize()}, window {g['sample']}", sample=g["sample"], device=g["device"], mode="hard")
    text = (
        f"The gate removes {g['kwh']:.2f} kWh of raw {name} power in {window_label(ctx, samples[g['sample']])}: "
        f"the head's raw output is not zero while the gate is closed ({minutes(ctx, g['closed_steps'])} min)."
    )
    return story([finding("#gate-time", text, go)], [go, preset("Soft gate", sample=g["sample"], mode="soft")])


def why_story(ctx, sample: int, res: dict) -> dict:
    """The Why page (explain.served's result `res` for batch window `sample`): for the predicted device with the most
    energy, how much of it goes at the first deletion step of the most faithful method's ranking (against a random
    one), and how well attention at that device's peak step follows the occlusion attribution there."""
    devs, D = _devices(ctx), len(_devices(ctx))
    energy = np.asarray(res["passes"][0], np.float64).sum(axis=-1) * step_hours(ctx)
    if not any(res["active"]):
        return story()
    d = int(np.argmax(np.where(res["active"], energy, -np.inf)))
    name = device_label(devs[d])
    best = F.most_faithful(res["quality"], devs[d]) or {
        "method": "occlusion",
        "area": float("nan"),
        "random": float("nan"),
    }
    m = best["method"]
    first = res["fractions"][1]  # the first share of the steps deleted
    drop = F.removed_share(res["fractions"], res["curves"][m][d]["deletion"], first)
    rand = F.removed_share(res["fractions"], res["random_curves"][devs[d]], first)
    go = preset(f"The {name} by {m}", device=devs[d], method=m, target="window")
    out = [
        finding(
            "#why-fig",
            f"The model gives the {name} {energy[d]:.0f} Wh in {window_label(ctx, sample)}. Replacing the "
            f"{pct(drop['fraction'])} of the steps that {m} ranks highest (the most faithful method for it here: "
            f"deletion area {best['area']:.2f}, a random ranking {best['random']:.2f}) by the baseline removes "
            f"{pct(drop['removed'])} of it; a random {pct(rand['fraction'])} removes {pct(rand['removed'])}.",
            go,
        )
    ]
    peak = res["targets"][D + d]["lo"]
    at_peak = preset(
        f"The {name} at {clock(ctx, sample, peak)}", device=devs[d], method="occlusion", target="step", step=peak
    )
    out.append(_attention_finding(ctx, sample, res, d, at_peak))
    ig = preset(f"The {name} by integrated gradients", device=devs[d], method="ig", target="window")
    return story(out, [go, at_peak, ig])


def _attention_finding(ctx, sample: int, res: dict, d: int, go: dict) -> dict | None:
    """Spearman of each layer's mean attention row at device d's peak step with |occlusion attribution| there."""
    from nilmbuild.explain.attention import split_tokens, stats_index
    from nilmbuild.explain.quality import spearman

    D = len(_devices(ctx))
    peak = res["targets"][D + d]["lo"]
    steps, on_stats = split_tokens(np.stack(_attention_rows(ctx, sample, peak)), stats_index(ctx.loaded))
    rho = [spearman(layer.mean(axis=0), res["attributions"]["occlusion"][D + d]) for layer in steps]
    if not rho or not np.isfinite(rho).any():
        return None
    l = int(np.nanargmax(rho))
    text = (
        f"At the {device_label(_devices(ctx)[d])}'s peak ({clock(ctx, sample, peak)} UTC), layer {l}'s mean attention "
        f"row has rank correlation {rho[l]:.2f} with |occlusion attribution|, the most of the {len(rho)} layers "
        f"(lowest {np.nanmin(rho):.2f}): where that layer attends {_follows(rho[l])} what moved the answer."
    )
    if on_stats is not None:  # an upstream model: the stats token's share, left out of the rank correlation
        text += f" Over the time steps only: the stats token took {pct(float(on_stats[l].mean()))} of that row."
    return finding("#why-attn-fig", text, go)


def _follows(rho: float) -> str:
    """Words for a rank correlation: how closely one ranking follows another."""
    return "closely follows" if rho >= 0.7 else "partly follows" if rho >= 0.3 else "hardly follows"


def _attention_rows(ctx, sample: int, step: int) -> list[np.ndarray]:
    """Each layer's (H, T) attention rows of query `step` in batch window `sample`, from the capture (T: the key
    tokens, L or, for an upstream model, L + 1 with the stats token)."""
    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    names = [attn(l, "weights") for l in range(n_layers)]
    r = _read(ctx, names, [sample])
    return [np.asarray(r[n])[0, :, step, :] for n in names]


def playground_story(ctx, samples: list[int]) -> dict:
    """The start window where the model gives one device the most energy: a good window to edit."""
    r = _read(ctx, [OUTPUT_POWER], samples)
    devs = _devices(ctx)
    e = F.top_energy(device_watts(ctx, r[OUTPUT_POWER]), step_hours(ctx))
    name = device_label(devs[e["device"]])
    go = preset(f"Start from the {name}'s window", start=e["sample"])
    text = (
        f"In {window_label(ctx, samples[e['sample']])} the model gives the {name} {e['kwh']:.2f} kWh, the most of any "
        "device in these start windows: edit that event and watch its lane."
    )
    return story([finding("#pg-canvas", text, go)], [go])


def disaggregation_story(ctx, day: dict | None) -> dict:
    """The devices the model tracks best and worst, over the stitched day (post-processed) when there is one, else
    over the example windows."""
    devs = _devices(ctx)
    if day is not None and day.get("truth_w") is not None:
        final = day["post"]["final_w"]
        err = F.device_errors(final, day["truth_w"], np.asarray(day["valid"], bool)[None, :])
        text = _errors_text(list(day["devices"]), err, "Over the stitched day, after post-processing")
        go = preset("The full day", view="day")
        return story([finding("#lanes", text, go) if text else None], [go])
    r = _read(ctx, [OUTPUT_POWER, TARGET_POWER])
    err = F.device_errors(device_watts(ctx, r[OUTPUT_POWER]), device_watts(ctx, r[TARGET_POWER]))
    text = _errors_text(devs, err, f"Over the {int(ctx.capture.batch_size)} example windows")
    return story([finding("#lanes", text) if text else None])


def training_story(ctx) -> dict:
    """From the checkpoint's training log: when PCGrad started and found its first conflict, the most conflicting
    pair, and the epoch with the lowest validation loss."""
    epochs = (ctx.loaded.train_log or {}).get("epochs") or []
    if not epochs:
        return story()
    pc = F.pcgrad_timeline(epochs)
    out, presets = [], []
    text = _pcgrad_text(pc)
    if text:
        go = preset(f"Epoch {pc['min_epoch']}", epoch=pc["min_epoch"]) if "min_epoch" in pc else None
        out.append(finding("#fig-pcgrad .nb-pc", text, go))
        presets.append(go)
    best = F.best_epoch(epochs)
    if best is not None:
        out.append(
            finding(
                "#val-plot",
                f"Lowest validation loss in epoch {best['epoch']} of {len(epochs)} ({best['loss']:.3f}); "
                + _shipped_text(ctx, best["epoch"]),
            )
        )
    return story(out, presets)


def _shipped_text(ctx, lowest: int) -> str:
    shipped = (ctx.loaded.extra or {}).get("best_epoch")
    if shipped is None:
        return "the checkpoint does not say which epoch's weights it holds."
    if int(shipped) == lowest:
        return "the checkpoint holds that epoch's weights."
    return f"the checkpoint holds epoch {int(shipped)}'s weights (the trainer's best epoch)."


def _pcgrad_text(pc: dict) -> str | None:
    if pc["first_on"] is None:
        return f"PCGrad never ran in these {pc['epochs']} epochs, so every matrix is grey."
    parts = []
    if pc["first_on"] > 1:
        parts.append(
            f"PCGrad only ran from epoch {pc['first_on']}: before it the devices' losses were simply summed, so no "
            f"cosines were logged and the matrix stays grey for epochs 1-{pc['first_on'] - 1}."
        )
    if pc["first_conflict"] is None:
        parts.append("It never found a conflict: every pair's mean cosine stayed positive.")
    else:
        parts.append(f"Its first conflict (a negative mean cosine) came in epoch {pc['first_conflict']}.")
    if "pair" in pc:
        a, b = (device_label(d) for d in pc["pair"])
        lead = "Strongest conflict" if pc["min_cos"] < 0 else "Closest to a conflict"
        parts.append(f"{lead}: {a} vs {b}, cosine {pc['min_cos']:+.3f} in epoch {pc['min_epoch']}.")
    return " ".join(parts)
