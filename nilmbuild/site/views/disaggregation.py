"""Disaggregation page (architecture.md 11, visualization Section 5).

Two views: the example windows (capture records ``output.power`` vs ``target.power`` and the input aggregate,
converted to watts in the browser as z * a + b with the {a, b} of ``ctx.prepared.scalers`` (page().watts),
which are the checkpoint's own when it has them), and a full day of the
test split stitched by seq2subseq and post-processed (``ctx.disaggregation`` =
``nilmbuild.infer.disaggregate_series``), shipped as a small msgpack blob of float32 arrays.
"""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.site import story
from nilmbuild.site.build import PageSpec
from nilmbuild.site.prose import spelled

from . import upstream_prose
from ._common import clean, f32, io_names, u8, view_page
from .live_parts import live_parts

SLUG = "disaggregation"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Disaggregation"
SECTION = "11"

POST_STEPS = [
    ("raw_w", "raw stitched output"),
    ("short_w", "after short-activation suppression"),
    ("long_off_w", "after long-OFF gate suppression"),
    ("clamped_w", "clamped at 0 W"),
    ("final_w", "final: the devices' sum capped to the aggregate"),
]


def day_blob(res: dict) -> bytes:
    """The day result as msgpack: float32 arrays as little-endian bytes, (D, L) arrays flattened row-major."""
    post = res["post"]
    D, L = len(res["devices"]), int(res["length"])
    out = {
        "devices": list(res["devices"]),
        "length": L,
        "step_s": int(res["step_s"]),
        "start": int(res["start"]),
        "t_start": str(np.datetime_as_string(res["timestamps"][0], unit="m")) if L else "",
        "aggregate_w": f32(res["aggregate_w"]),
        "valid": u8(res["valid"]),
        "truth_w": f32(res["truth_w"]) if res.get("truth_w") is not None else None,
        "states": u8(res["states"]) if res.get("states") is not None else None,
        "gate": f32(res["gate"]),
        "post": {k: f32(post[k]) for k, _ in POST_STEPS},
        "post_flags": {k: u8(post[k]) for k in ("on_model", "short_removed", "off_suppressed") if k in post},
        "cap_binds": u8(post["cap_binds"]),
        "no_truth": list(res.get("no_truth") or []),
        "post_steps": [{"key": k, "label": lab} for k, lab in POST_STEPS],
        "window_starts": [int(v) for v in res["window_starts"]],
        "centres": [[int(a), int(b)] for a, b in np.asarray(res["centres"]).reshape(-1, 2)],
        "seams": [int(v) for v in res["seams"]],
        "geometry": clean(dict(res["geometry"])),
        "thresholds_w": clean(res.get("thresholds_w") or {}),
        "gate_thresholds": clean(res.get("gate_thresholds") or {}),
        "min_on_steps": clean(res.get("min_on_steps") or {}),
        "min_off_steps": clean(res.get("min_off_steps") or {}),
        "off_window": int(res.get("off_window") or 0),
        "metrics": clean(res.get("metrics")),
        "raw_metrics": clean(res.get("raw_metrics")),
        "shape": [D, L],
    }
    return msgpack.packb(out, use_bin_type=True)


def build(ctx) -> PageSpec:
    from nilmbuild.errors import UserError

    blobs = {
        "capture": ctx.blob(list(io_names().values())),
        "units": msgpack.packb({"no_truth": list(ctx.prepared.stats.get("missing", []))}, use_bin_type=True),
    }
    day_error, day = None, None
    try:
        day = ctx.disaggregation
        blobs["day"] = day_blob(day)
    except UserError as e:  # e.g. a development checkpoint without scalers: no stitched day
        day_error = str(e)
    live, files = live_parts(ctx.loaded)  # "your signal": the Playground's edit through the live model
    return view_page(
        __name__,
        data={"names": io_names(), "live": live, "story": story.disaggregation_story(ctx, day)},
        blobs=blobs,
        files=files,
        summary=f"Aggregate in, {spelled(len(ctx.loaded.devices))} appliances out: predictions vs ground truth in "
        "watts, a stitched day, post-processing and metrics.",
        context={
            "upstream": upstream_prose.disaggregation(ctx.loaded.cfg),
            "notes": [] if hasattr(ctx.loaded.cfg, "arch") else ctx.notes_for(SLUG),
            "day_error": day_error,
            "metric_names": ["mae", "rmse", "f1", "precision", "recall", "nde", "sae", "teca"],
        },
    )
