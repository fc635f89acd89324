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
from nilmbuild.model.names import (
    EMBED_WITH_POS,
    FILM_GENERATORS,
    INPUT,
    INSTANCE_NORM,
    OUTPUT_POWER,
    PROJECTION,
    TRANSPOSE_IN,
    TRANSPOSE_OUT,
    embed_unit,
    encoder,
    film,
    head,
)
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from . import forward_anim
from ._common import view_page, window_starts

SLUG = "forward"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Forward pass"
BIN = 8  # minutes per column for the binned (96 x 480) stages
FILM_ENC, FILM_DEC = FILM_GENERATORS


def embed_out(cfg) -> str:
    """The conv embedding's output: the last dilated ResUnit's (one unit per dilation in the config)."""
    return embed_unit(len(cfg.dilations) - 1, "out")


def stages(cfg) -> list[dict]:
    """The stages in forward-pass.md 4.2 order: the record(s) that are each stage's output."""
    last = encoder(int(cfg.n_encoder_layers) - 1, "out")
    devs = list(cfg.device_names)
    return [
        {"stage": "0", "title": "Input", "short": "Input", "records": [INPUT]},
        {"stage": "1", "title": "Instance normalisation", "short": "Instance norm", "records": [INSTANCE_NORM]},
        {"stage": "2", "title": "Dilated conv embedding", "short": "Conv embedding", "records": [embed_out(cfg)]},
        {"stage": "3", "title": "Positional encoding", "short": "+ Position", "records": [EMBED_WITH_POS]},
        {
            "stage": "4",
            "title": f"Projection {cfg.c_embedding} → {cfg.d_model}",
            "short": "Projection",
            "records": [PROJECTION],
            "binned": True,
        },
        {
            "stage": "5",
            "title": "Transpose",
            "short": "Transpose",
            "records": [TRANSPOSE_IN],
            "binned": True,
            "binned_from": PROJECTION,
        },
        {
            "stage": "6",
            "title": "Encoder FiLM γ, β",
            "short": "Encoder FiLM",
            "records": [film(FILM_ENC, "gamma"), film(FILM_ENC, "beta")],
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
            "records": [film(FILM_DEC, "gamma"), film(FILM_DEC, "beta")],
        },
        {
            "stage": "9",
            "title": "Transpose back",
            "short": "Transpose back",
            "records": [TRANSPOSE_OUT],
            "binned": True,
            "binned_from": last,
        },
        {
            "stage": "10",
            "title": "Device heads (gated)",
            "short": "Device heads",
            "records": [head(d, "power_hard") for d in devs],
        },
        {"stage": "11", "title": "Output FiLM", "short": "Output FiLM", "records": [head(d, "power") for d in devs]},
        {"stage": "12", "title": "Concatenate", "short": "Concatenate", "records": [OUTPUT_POWER]},
    ]


FILM_MEANS = (film(FILM_ENC, "gamma_mean"), film(FILM_ENC, "beta_mean"))  # the γ, β each encoder layer applies


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
        "conv": [INSTANCE_NORM, embed_out(cfg)],
        "projection": [EMBED_WITH_POS, PROJECTION],
        "transpose": [PROJECTION],  # turned by 90° on screen: the transpose_in stage, time upwards
    }


def js_names(cfg, has_film: bool = True) -> dict:
    """The record names the animation reads (page().data.names; the stages' records travel in data.stages):
    anim: each scene's source / target stage record; film: the encoder FiLM γ, β means (None without FiLM)."""
    return {
        "anim": stages_for_anim(cfg),
        "film": dict(zip(("gamma", "beta"), FILM_MEANS)) if has_film else None,
    }


def build(ctx) -> PageSpec:
    cfg = ctx.loaded.cfg
    if hasattr(cfg, "arch"):  # an upstream model: its own stages (stem, stats token, encoder, its head)
        from . import upstream_forward

        return upstream_forward.build(ctx, __name__)
    st = [s for s in stages(cfg) if all(r in ctx.capture.records for r in s["records"])]
    full = sorted({r for s in st if not s.get("binned") for r in s["records"]} | film_means(ctx))
    blob = ctx.blob(full, None)
    B = int(ctx.capture.batch_size)
    return view_page(
        __name__,
        data={
            "stages": [{k: v for k, v in s.items()} for s in st],
            "samples": list(range(B)),
            "sample_labels": window_starts(ctx, range(B)),
            "bin": BIN,
            "names": js_names(cfg, len(film_means(ctx)) == 2),
            "story": story.forward_story(ctx, st),
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
