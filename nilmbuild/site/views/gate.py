"""Gate page (architecture.md 9): smoothstep vs hard threshold, a live threshold that recomputes ON/OFF and the
gated power (with the output FiLM) from the captured gate probability and raw power, in watts."""

from __future__ import annotations

from nilmbuild.live.page import whatif_page
from nilmbuild.site.build import PageSpec

from ._common import kit_blobs, page_extra, pick_device_samples

SLUG = "gate"
TITLE = "Gate: smoothstep vs threshold"
SECTION = "9"
N_SAMPLES = 32  # light records (5 x 480 per sample each): every sample of the batch

RECORDS = [
    "input",
    "heads.*.gate_logit",
    "heads.*.gate_prob",
    "heads.*.power_raw",
    "heads.*.power",
    "film_dec.gamma",
    "film_dec.beta",
    "target.power",
    "target.state",
    "ablation.soft_gate.output.power",
    "output.power",  # the what-if panel's captured final watts
]


def build(ctx) -> PageSpec:
    B = int(ctx.x.shape[0])
    samples = pick_device_samples(ctx, min(N_SAMPLES, B)) if B > N_SAMPLES else list(range(B))
    extra = page_extra(ctx, samples)
    extra["gate_thresholds"] = [float(d.gate_threshold) for d in ctx.loaded.cfg.devices]
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live what-if panel (static/js/whatif_gate.js)
    return PageSpec(
        slug=SLUG,
        title=TITLE,
        template="gate.html",
        entry="page_gate.js",
        blobs={**kit_blobs(ctx, RECORDS, samples, extra), **wblobs},
        data={"whatif": whatif},
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
        summary="Smoothstep vs hard gate, a live threshold on the captured gate probabilities, power before and "
        "after gating in watts.",
        section=SECTION,
    )
