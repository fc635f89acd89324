"""The Gate page of an upstream model. CondiNILM: its soft gate, applied outside the model by its evaluation with the
per-device scale, floor and bias its checkpoint stores (criterion.gate_*, clamped as the evaluation clamps them)
and the logit floor derived from the device type; the multiplier curve and, per captured window, the gate logit, the
gate probability and the power before and after the gate in watts (model/upstream/soft_gate.py). The original
NILMFormer has no gate: a plain statement and a link to what it has instead (upstream_prose.absent)."""

from __future__ import annotations

import numpy as np

from nilmbuild.model.names import param
from nilmbuild.site import upstream_story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import pick_device_samples, window_starts

N_SAMPLES = 6
SUMMARY = "CondiNILM's external soft gate: each device's stored scale, floor and bias, and what it does to the power."
#: The lanes drawn per device and window: title, unit, and the (record, series name) pairs in the lane.
LANES = (
    ("gate probability p", "0-1", (("gate.prob", "p"),)),
    ("power", "W", (("output.power_ungated", "before the gate"), ("output.power", "after the gate"))),
)
RECORDS = {rec: unit for _, unit, series in LANES for rec, _ in series}


def gate_params(ctx) -> list[dict]:
    """Per device: the gate parameters the evaluation uses, from the capture's weights (capture/weights.py)."""
    rec = ctx.capture.records
    vals = {
        k: np.asarray(rec[param(f"gate.{k}")].tensor, np.float64) for k in ("scale", "floor", "bias", "logit_floor")
    }
    out = []
    for i, d in enumerate(ctx.loaded.devices):
        lf = float(vals["logit_floor"][i])
        out.append(
            {
                "device": d,
                "scale": float(vals["scale"][i]),
                "floor": float(vals["floor"][i]),
                "bias": float(vals["bias"][i]),
                "logit_floor": lf if np.isfinite(lf) else None,
            }
        )
    return out


def _watts(ctx, scaled: np.ndarray) -> np.ndarray:
    """(D, L) scaled power -> watts with the checkpoint's appliance scalers."""
    from nilmbuild.infer.postprocess import denormalise

    apps = ctx.loaded.scalers["appliances"]
    return np.stack([denormalise(scaled[i], apps[d]) for i, d in enumerate(ctx.loaded.devices)])


def _windows(ctx, samples: list[int]) -> list[dict]:
    """Per sample: each lane's (D, L) values as lists (watts for the power lanes), from the capture."""
    rec = ctx.capture.records
    out = []
    for s in samples:
        lanes = {}
        for name, unit in RECORDS.items():
            v = np.asarray(rec[name].tensor[s], np.float64)
            v = _watts(ctx, v) if unit == "W" else v
            lanes[name] = [[round(float(x), 5) for x in row] for row in v]
        out.append(lanes)
    return out


def build(ctx, view: str) -> PageSpec:
    """The upstream Gate page (view: the gate view module's __name__, for its slug and title)."""
    from ._common import view_page
    from .upstream_absent import page_if_absent

    cfg = ctx.loaded.cfg
    none = page_if_absent(ctx, view, "gate")
    if none is not None:
        return none
    context = {"notes": []}  # the spec notes are about the spec's gate
    samples = pick_device_samples(ctx, min(N_SAMPLES, int(ctx.x.shape[0])))
    params = gate_params(ctx)
    data = {
        "params": params,
        "samples": samples,
        "labels": window_starts(ctx, samples),
        "lanes": [{"title": t, "unit": u, "series": [{"record": r, "name": n} for r, n in ser]} for t, u, ser in LANES],
        "windows": _windows(ctx, samples),
        "step_minutes": int(cfg.step_s) / 60,
        "story": upstream_story.gate_story(ctx, samples),
    }
    context["params"] = params
    return view_page(view, template="upstream_gate.html", entry="page_upstream_gate.js", data=data, context=context,
                     summary=SUMMARY, section="", title=upstream_prose.TITLES["gate"],
                     lead=upstream_prose.LEADS["gate"])  # fmt: skip
