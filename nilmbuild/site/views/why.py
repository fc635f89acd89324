"""Why page (issue 32 item 3): which steps of the aggregate made the model predict each device, in one of the
example windows, by three Captum methods, with their measured quality and attention beside them.

The window: the example batch's window where the model's answer holds the most devices (findings.busiest_window
on the captured output). Its explanations come from nilmbuild/explain/served.py (stored with the checkpoint by
`nilmbuild explain --store`, served_store.py, else cached like the capture, served_cache.py): every device's attribution by ig, occlusion and saliency for the whole window's energy and the
power at its peak step, every occlusion pass's watts (so the page explains any interval or step as Captum's
Occlusion does, static/js/occlusion.js), deletion and insertion curves and the quality table. The attention rows
of a query step are read from the capture's q, k and lse of the same window (decode.js `attentionRow`).

An imported upstream model (CondiNILM, the original NILMFormer) gets the same page with its own output and its
stats token said as such (why_upstream.py): extra page data and the template's `upstream` prose, none of which
the spec's page has.

A new page rather than a section of the Disaggregation page: that page already loads a stitched day and the live
model, its controls pick among many windows, and the Why view needs its own state in the URL (method, device,
target, step) and its own data (the occlusion passes, about the size of one captured sample).
"""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.model.names import OUTPUT_POWER, attn
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from . import why_upstream
from ._common import clean, f32, view_page, window_starts

SLUG = "why"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Why this answer"
SECTION = ""  # not a spec section: issue 32, docs/attributions.md
SUMMARY = "Which steps of the aggregate made the model predict each device: Captum attributions with measured quality."


def records(n_layers: int) -> list[str]:
    """The captured records the page reads: the attention weights of every layer (derived from q, k and lse)."""
    return [attn(l, p) for l in range(n_layers) for p in ("q", "k", "lse", "weights")]


def js_names(n_layers: int) -> dict:
    return {"weights": [attn(l, "weights") for l in range(n_layers)]}


def window_sample(ctx) -> int:
    """The example window whose captured answer holds the most devices (findings.busiest_window)."""
    from nilmbuild.site import findings

    out_w = story.device_watts(ctx, story._read(ctx, [OUTPUT_POWER])[OUTPUT_POWER])  # (B, D, L)
    return findings.busiest_window(out_w.sum(axis=-1) * story.step_hours(ctx))


def f16(a) -> dict:
    """An array as {shape, data: little-endian float16 bytes} (decode.js decodeF16)."""
    a = np.asarray(a)
    return {"shape": list(a.shape), "data": np.ascontiguousarray(a.astype("<f2")).tobytes()}


def why_blob(res: dict) -> bytes:
    """The served explanations (explain.served.explain_served) as the page reads them: float16 arrays, curves and
    the quality table as numbers."""
    return msgpack.packb(
        {
            "aggregate_w": f32(res["aggregate_w"]),
            "baseline_w": float(res["baseline_w"][0]),
            "passes": f16(res["passes"]),
            "windows": [[int(a), int(b)] for a, b in res["windows"]],
            "targets": clean(res["targets"]),
            "attributions": {m: f16(a) for m, a in res["attributions"].items()},
            "fractions": clean(res["fractions"]),
            "point_methods": list(res["settings"]["point_methods"]),
            "active": list(res["active"]),
            "curves": clean(res["curves"]),
            "random_curves": clean(res["random_curves"]),
            "quality": clean(res["quality"]),
        },
        use_bin_type=True,
    )


def served_window(ctx, sample: int) -> tuple[np.ndarray, np.datetime64]:
    """The explained window: its aggregate watts (L,) float32 and its start."""
    agg = story.aggregate_watts(ctx, np.asarray(ctx.x)[sample, 0]).astype(np.float32)
    return agg, np.datetime64(ctx.t0[sample], "s")


def explanations(ctx, sample: int) -> dict:
    """The served window's explanations: stored in the checkpoint for this window (`nilmbuild explain --store`),
    else from the cache when the checkpoint, window and code are unchanged, else computed (served_cache.py)."""
    from nilmbuild.explain.served_cache import cached_explain

    agg, start = served_window(ctx, sample)
    return cached_explain(ctx.loaded, agg, start, cache=ctx.cache)


def default_device(ctx, res: dict) -> str:
    """The device the page opens on: the one the model predicts with the most energy in the window (the first
    finding's), or the first device when it predicts none."""
    energy = np.asarray(res["passes"][0], np.float64).sum(axis=-1)
    if not any(res["active"]):
        return ctx.loaded.devices[0]
    return ctx.loaded.devices[int(np.argmax(np.where(res["active"], energy, -np.inf)))]


def nav_spec() -> PageSpec:
    """What the navigation needs when this page is not being built (no Captum run)."""
    return view_page(__name__, entry=None)


def build(ctx) -> PageSpec:
    from nilmbuild.explain.methods import DEFAULT, IG_EDGES, METHODS
    from nilmbuild.explain.quality import FRACTIONS, MASS, SENSITIVITY_RADIUS_W, SENSITIVITY_SAMPLES

    n_layers = int(ctx.loaded.cfg.n_encoder_layers)
    sample = window_sample(ctx)
    res = explanations(ctx, sample)
    data = {
        "names": js_names(n_layers),
        "sample": sample,
        "t0": str(np.datetime64(ctx.t0[sample], "s")) + "Z",
        "label": window_starts(ctx, [sample])[0],
        "devices": list(ctx.loaded.devices),
        "methods": list(METHODS),
        "settings": clean(res["settings"]),
        "ig_segments": len(IG_EDGES) - 1,
        "radius_w": SENSITIVITY_RADIUS_W,
        "mass": MASS,
        "step_s": int(ctx.prepared.resample_s),
        "default_device": default_device(ctx, res),
        "active": list(res["active"]),
        "story": story.why_story(ctx, sample, res),
        **why_upstream.page_data(ctx),
    }
    return view_page(
        __name__,
        data=data,
        blobs={"why": why_blob(res), "capture": ctx.blob(records(n_layers), [sample])},
        context={
            "settings": data["settings"],
            "label": data["label"],
            "ig_segments": data["ig_segments"],
            "radius_w": SENSITIVITY_RADIUS_W,
            "mass": MASS,
            "cli": {"fractions": len(FRACTIONS), "samples": SENSITIVITY_SAMPLES, "ig_steps": DEFAULT.ig_steps},
            "upstream": why_upstream.context(ctx),
        },
    )
