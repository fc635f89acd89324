"""Gate page (architecture.md 9): smoothstep vs hard threshold, a live threshold that recomputes ON/OFF and the
gated power (with the output FiLM) from the captured gate probability and raw power, in watts."""

from __future__ import annotations

from nilmbuild.model.names import INPUT, OUTPUT_POWER, TARGET_POWER, TARGET_STATE, ablation, film, head
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import kit_blobs, page_extra, pick_device_samples, view_page
from .live_parts import whatif_page

SLUG = "gate"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Gate: smoothstep vs threshold"
SECTION = "9"
N_SAMPLES = 32  # light records (5 x 480 per sample each): every sample of the batch

HEAD_RECORDS = ("gate_logit", "gate_prob", "power_raw", "power")  # per device, from heads.<device>.*
RECORDS = [
    INPUT,
    *(head("*", p) for p in HEAD_RECORDS),
    film("film_dec", "gamma"),
    film("film_dec", "beta"),
    TARGET_POWER,
    TARGET_STATE,
    ablation("soft_gate", OUTPUT_POWER),
    OUTPUT_POWER,  # the what-if panel's captured final watts
]


def js_names(devices) -> dict:
    """The record names page_gate.js reads (page().data.names): each device's head records, the output FiLM,
    the targets and the soft-gate run's output."""
    return {
        "input": INPUT,
        "heads": {d: {p: head(d, p) for p in HEAD_RECORDS} for d in devices},
        "film_dec": {p: film("film_dec", p) for p in ("gamma", "beta")},
        "target_power": TARGET_POWER,
        "target_state": TARGET_STATE,
        "soft_output": ablation("soft_gate", OUTPUT_POWER),
    }


def build(ctx) -> PageSpec:
    if hasattr(ctx.loaded.cfg, "arch"):  # CondiNILM's external soft gate, or the original's "no gate"
        from . import upstream_gate

        return upstream_gate.build(ctx, __name__)
    B = int(ctx.x.shape[0])
    samples = pick_device_samples(ctx, min(N_SAMPLES, B)) if B > N_SAMPLES else list(range(B))
    extra = page_extra(ctx, samples)
    extra["gate_thresholds"] = [float(d.gate_threshold) for d in ctx.loaded.cfg.devices]
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live what-if panel (static/js/whatif_gate.js)
    return view_page(
        __name__,
        data={"names": js_names(extra["devices"]), "whatif": whatif, "story": story.gate_story(ctx, samples)},
        blobs={**kit_blobs(ctx, RECORDS, samples, extra), **wblobs},
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
        summary="Smoothstep vs hard gate, a live threshold on the captured gate probabilities, power before and "
        "after gating in watts.",
    )
