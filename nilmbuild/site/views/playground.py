"""Playground page (issue 11): the reader edits a real captured window and NILMFormer re-runs live in the page
(onnxruntime-web in a Web Worker, nilmbuild/live) on every edit: per-device watts, gate probabilities and one
head's attention row for the edited signal. Until the runtime has started (~1 s), the page shows each unedited
window's outputs from a PyTorch run at build time (first_runs), which the live model's first run then replaces."""

from __future__ import annotations

import numpy as np

from nilmbuild.live.palette import palette
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import pick_device_samples, view_page
from .live_explain import live_explain_data
from .live_parts import live_parts

SLUG = "playground"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Playground: edit the signal, run the model"
SECTION = "0-12"
N_STARTS = 5  # captured windows offered as starting points (one per device ON, where there is one)
FIRST_RUNS_BLOB = "first_runs"


def records() -> list[str]:
    """The page reads no capture records: it runs the model itself on the captured model input."""
    return []


def start_windows(ctx, samples) -> list[dict]:
    """Each chosen sample's aggregate in watts (the model input's channel 0, unscaled) and start time."""
    from nilmbuild.data.preprocess import scaler_affine

    a, b = scaler_affine(ctx.loaded.scalers["aggregate"])
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


def first_runs(ctx, samples) -> tuple[dict, bytes]:
    """-> (page data, blob): what the live model shows for each unedited start window, from PyTorch at build time
    (export.torch_reference: the forward pass the live graph reproduces, within the bounds its tests hold it to).
    The blob is float32, per sample in `samples` order: watts (D, W), gate probabilities (D, W) and head `head`'s
    attention row of query `query` in every layer (layers, W); the page reads D, W and the layers from the live
    model's page data, and starts with `head` and `query` selected."""
    from nilmbuild.live.export import torch_reference

    head, query = 0, int(ctx.loaded.cfg.window) // 2
    parts = []
    for s in samples:
        ref = torch_reference(ctx.loaded, np.asarray(ctx.x[s : s + 1], np.float32), head)
        gate = [ref["gate_prob"]] if "gate_prob" in ref else []  # the original NILMFormer has no gate
        parts += [ref["watts"], *gate, ref["attention"][:, query]]
    blob = b"".join(np.ascontiguousarray(p, dtype="<f4").tobytes() for p in parts)
    return {"blob": FIRST_RUNS_BLOB, "head": head, "query": query}, blob


SUMMARY = (
    "Edit a real window (draw, drop a kettle boil, scale, paste) and watch NILMFormer re-run live in "
    "your browser: per-device watts, gate probabilities, attention."
)


def lane_text(loaded) -> dict:
    """The lanes' titles and the legend's device labels, for the checkpoint's architecture (gate: None when the
    model has no gate; the page then has no gate lane and fetches no gate output)."""
    arch = getattr(loaded.cfg, "arch", "spec")
    if arch == "spec":
        return {
            "power": "Per-device power after the hard gate and output FiLM",
            "neg_note": "below 0 W: a closed gate leaves the output FiLM's offset β (raw output; post-processing "
            "clamps to 0)",
            "gate": "Gate probability p (dashed: each device's hard-gate threshold)",
            "legend": [f"{d.replace('_', ' ')} (gate threshold {_num(t)})" for d, t in _thresholds(loaded)],
        }
    legend = [d.replace("_", " ") for d in loaded.devices]
    if arch == "condinilm":
        gate = "CondiNILM's soft-gate probability p = sigmoid(scale * max(logit, logit floor) + bias)"
        return {"power": "Per-device power after CondiNILM's soft gate", "gate": gate, "legend": legend}
    return {"power": "Per-device power (de-normalised with the stats token)", "gate": None, "legend": legend}


def _num(t: float) -> str:
    """A number as JavaScript's String() writes it (1.0 -> "1", 0.35 -> "0.35")."""
    return str(int(t)) if float(t).is_integer() else repr(float(t))


def _thresholds(loaded):
    return [(d.name, float(d.gate_threshold)) for d in loaded.cfg.devices]


def nav_spec() -> PageSpec:
    """What the navigation needs when this page is not being built (no model export, no runtime file)."""
    return view_page(__name__, entry=None)


def build(ctx) -> PageSpec:
    live, files = live_parts(ctx.loaded)  # the graph and the runtime: shared sibling files, not in the page
    samples = pick_device_samples(ctx, min(N_STARTS, int(ctx.x.shape[0])))
    first, blob = first_runs(ctx, samples)
    data = {"live": live, "starts": start_windows(ctx, samples), "palette": palette(live["stepS"]), "firstRun": first}
    data["story"] = story.playground_story(ctx, samples)
    data["explain"] = live_explain_data(ctx.loaded)
    data["text"] = lane_text(ctx.loaded)
    return view_page(
        __name__,
        data=data,
        blobs={FIRST_RUNS_BLOB: blob},
        files=files,
        context={"notes": ctx.notes_for(SLUG)},
    )
