"""Playground page (issue 11): the reader edits a real captured window and NILMFormer re-runs live in the page
(onnxruntime-web in a Web Worker, nilmbuild/live) on every edit: per-device watts, gate probabilities and one
head's attention row for the edited signal."""

from __future__ import annotations

import numpy as np

from nilmbuild.live.page import live_parts
from nilmbuild.live.palette import palette
from nilmbuild.site.build import PageSpec

from ._common import pick_device_samples, view_page

SLUG = "playground"
TITLE = "Playground: edit the signal, run the model"
SECTION = "0-12"
N_STARTS = 5  # captured windows offered as starting points (one per device ON, where there is one)


def records() -> list[str]:
    """The page reads no capture records: it runs the model itself on the captured model input."""
    return []


def start_windows(ctx, samples) -> list[dict]:
    """Each chosen sample's aggregate in watts (the model input's channel 0, unscaled) and start time."""
    from nilmbuild.live.export import inverse_affine

    a, b = inverse_affine(ctx.loaded.scalers["aggregate"])
    out = []
    for s in samples:
        watts = np.asarray(ctx.x[s, 0], np.float64) * a + b
        out.append(
            {
                "sample": int(s),
                "start": str(np.datetime64(ctx.t0[s], "m")),
                "aggregate": [round(float(v), 3) for v in watts],
            }
        )
    return out


SUMMARY = (
    "Edit a real window (draw, drop a kettle boil, scale, paste) and watch NILMFormer re-run live in "
    "your browser: per-device watts, gate probabilities, attention."
)


def nav_spec() -> PageSpec:
    """What the navigation needs when this page is not being built (no model export, no runtime file)."""
    return view_page(__name__, entry=None)


def build(ctx) -> PageSpec:
    live, files = live_parts(ctx.loaded)  # the graph and the runtime: shared sibling files, not in the page
    samples = pick_device_samples(ctx, min(N_STARTS, int(ctx.x.shape[0])))
    data = {"live": live, "starts": start_windows(ctx, samples), "palette": palette(live["stepS"])}
    return view_page(
        __name__,
        data=data,
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
    )
