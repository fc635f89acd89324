"""Forward-pass page (forward-pass.md 4.2): every stage 0-12 as a 3D block sized by its real shape, its front
face the (rows x columns) heatmap of the selected sample; click / keys / play to walk the stages.

All batch samples are carried. Small stages go at full resolution in the capture blob; the four
96 x 480 stages (projection, transpose, encoder output, transpose back) go as time-binned means
(BIN minutes per column, computed here from the capture with the Python reader) in a second blob,
and the page says so wherever it shows them. A third blob, "anim", carries the animated forward pass's tables
(spec 4.4; nilmbuild/site/views/forward_anim.py): attention particle targets and FFN unit means, exact functions of
the records listed in records().
"""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.capture.format import decode
from nilmbuild.site.build import PageSpec

from . import forward_anim
from ._common import window_starts

SLUG = "forward"
TITLE = "Forward pass"
BIN = 8  # minutes per column for the binned (96 x 480) stages


def stages(cfg) -> list[dict]:
    """The stages in forward-pass.md 4.2 order: the record(s) that are each stage's output."""
    last = f"encoder.{cfg.n_encoder_layers - 1}.out"
    devs = list(cfg.device_names)
    return [
        {"stage": "0", "title": "Input", "short": "Input", "records": ["input"]},
        {"stage": "1", "title": "Instance normalisation", "short": "Instance norm", "records": ["instance_norm"]},
        {"stage": "2", "title": "Dilated conv embedding", "short": "Conv embedding", "records": ["embed.res3.out"]},
        {"stage": "3", "title": "Positional encoding", "short": "+ Position", "records": ["embed.with_pos"]},
        {"stage": "4", "title": "Projection 8 → 96", "short": "Projection", "records": ["projection"], "binned": True},
        {
            "stage": "5",
            "title": "Transpose",
            "short": "Transpose",
            "records": ["transpose_in"],
            "binned": True,
            "binned_from": "projection",
        },
        {
            "stage": "6",
            "title": "Encoder FiLM γ, β",
            "short": "Encoder FiLM",
            "records": ["film_enc.gamma", "film_enc.beta"],
        },
        {
            "stage": "7",
            "title": f"Transformer encoder ×{cfg.n_encoder_layers}",
            "short": f"Encoder ×{cfg.n_encoder_layers}",
            "records": [last],
            "binned": True,
        },
        {
            "stage": "8",
            "title": "Output FiLM γ, β",
            "short": "Output FiLM γ β",
            "records": ["film_dec.gamma", "film_dec.beta"],
        },
        {
            "stage": "9",
            "title": "Transpose back",
            "short": "Transpose back",
            "records": ["transpose_out"],
            "binned": True,
            "binned_from": last,
        },
        {
            "stage": "10",
            "title": "Device heads (gated)",
            "short": "Device heads",
            "records": [f"heads.{d}.power_hard" for d in devs],
        },
        {"stage": "11", "title": "Output FiLM", "short": "Output FiLM", "records": [f"heads.{d}.power" for d in devs]},
        {"stage": "12", "title": "Concatenate", "short": "Concatenate", "records": ["output.power"]},
    ]


FILM_MEANS = ("film_enc.gamma_mean", "film_enc.beta_mean")  # the γ, β each encoder layer applies (animation)


def records(cfg) -> list[str]:
    """Every record the page draws: the stages' outputs, the FiLM γ/β means the animation colours the block with,
    and the records the animation's particle and FFN tables are computed from (forward_anim.records)."""
    names = [r for s in stages(cfg) for r in s["records"]] + list(FILM_MEANS)
    return names + forward_anim.records(int(cfg.n_encoder_layers))


def _binned(reader, name: str) -> np.ndarray:
    """Mean over BIN consecutive time steps along the record's "time" axis (the last bin may be shorter)."""
    rec = reader.record(name)
    a = reader.get(name).astype(np.float64)
    ax = rec["axes"].index("time")
    L = a.shape[ax]
    edges = list(range(0, L, BIN)) + [L]
    parts = [a.take(range(edges[i], edges[i + 1]), axis=ax).mean(axis=ax, keepdims=True) for i in range(len(edges) - 1)]
    return np.concatenate(parts, axis=ax).astype(np.float32)


def summary_blob(ctx, stage_list) -> bytes:
    out = {}
    for st in stage_list:
        if not st.get("binned"):
            continue
        for name in st["records"]:
            src = st.get("binned_from")
            reader = decode(ctx.blob([name]))
            rec = reader.record(name)
            meta = {k: rec[k] for k in ("name", "shape", "axes", "stage", "section", "doc", "stats")}
            entry = {"record": meta, "bin": BIN, "time_axis": rec["axes"].index("time")}
            if src and rec.get("op") == "permute" and rec.get("src") == src:  # same binned values, permuted
                entry.update({"of": src, "perm": rec.get("perm")})
            else:
                b = _binned(reader, name)
                entry.update({"shape": list(b.shape), "data": b.astype("<f2").tobytes()})
            out[name] = entry
    return msgpack.packb({"bin": BIN, "summaries": out}, use_bin_type=True)


def film_means(ctx) -> set[str]:
    """The FiLM γ/β means the capture has (none when the model runs without FiLM)."""
    return {n for n in FILM_MEANS if n in ctx.capture.records}


def stages_for_anim(cfg) -> dict:
    """Which stage record each animation scene starts from / ends at (names from Python, never from page JS)."""
    return {
        "conv": ["instance_norm", "embed.res3.out"],
        "projection": ["embed.with_pos", "projection"],
        "transpose": ["projection"],  # turned by 90° on screen: the transpose_in stage, time upwards
    }


def build(ctx) -> PageSpec:
    cfg = ctx.loaded.cfg
    st = [s for s in stages(cfg) if all(r in ctx.capture.records for r in s["records"])]
    full = sorted({r for s in st if not s.get("binned") for r in s["records"]} | film_means(ctx))
    blob = ctx.blob(full, None)
    B = int(ctx.capture.batch_size)
    return PageSpec(
        slug=SLUG,
        title=TITLE,
        template="forward.html",
        entry="page_forward.js",
        data={
            "stages": [{k: v for k, v in s.items()} for s in st],
            "samples": list(range(B)),
            "sample_labels": window_starts(ctx, range(B)),
            "bin": BIN,
            "anim": {
                "film": dict(zip(("gamma", "beta"), FILM_MEANS)) if len(film_means(ctx)) == 2 else None,
                "from": stages_for_anim(cfg),
            },
        },
        blobs={"capture": blob, "binned": summary_blob(ctx, st), "anim": forward_anim.anim_blob(ctx)},
        context={
            "stages": [{k: v for k, v in s.items()} for s in st],
            "samples": list(range(B)),
            "sample_labels": window_starts(ctx, range(B)),
            "bin": BIN,
            "anim_queries": len(forward_anim.query_steps(int(cfg.window))),
            "anim_particles": forward_anim.ANIM_PARTICLES,
            "notes": ctx.notes_for(SLUG),
        },
        summary="Every stage of one forward pass as a block of its exact shape, coloured by the real values.",
        section="4.2",
    )
