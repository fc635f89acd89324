"""Embedding page (architecture.md 5, forward-pass.md stages 1-4): input channels and instance norm, the dilated
ResUnits with their receptive field drawn on the real signal, feature maps, positional encoding, projection."""

from __future__ import annotations

import numpy as np

from nilmbuild.model.names import EMBED_WITH_POS, INPUT, INSTANCE_NORM, POS_ENCODING, PROJECTION, embed_unit
from nilmbuild.site import story
from nilmbuild.site.build import PageSpec

from ._common import kit_blobs, page_extra, pick_device_samples, view_page

SLUG = "embedding"
ARCHITECTURES = ("spec", "condinilm", "nilmformer")
TITLE = "Dilated convolution embedding"
SECTION = "5"
N_SAMPLES = 6  # projection is 96 x 480 per sample

RECORDS = [
    INPUT,
    INSTANCE_NORM,
    embed_unit("*", "conv"),
    embed_unit("*", "out"),
    POS_ENCODING,
    EMBED_WITH_POS,
    PROJECTION,
]


def js_names(n_units: int) -> dict:
    """The record names page_embedding.js reads (page().data.names); res_out: each dilated ResUnit's output."""
    return {
        "input": INPUT,
        "instance_norm": INSTANCE_NORM,
        "res_out": [embed_unit(u, "out") for u in range(n_units)],
        "pos_encoding": POS_ENCODING,
        "with_pos": EMBED_WITH_POS,
        "projection": PROJECTION,
    }


def conv_weights(ctx) -> list[dict]:
    """The ResUnits' conv weights from the checkpoint (the capture has no embedding weights): per unit
    weight (c_out, c_in, k), bias, dilation, and the residual 1x1 weight when there is one."""
    model = ctx.loaded.model
    units = []
    for unit in model.embedding.units:
        w = unit.conv.weight.detach().float().cpu().numpy()
        res = getattr(unit.residual, "weight", None)
        units.append(
            {
                "shape": list(w.shape),
                "weight": np.ascontiguousarray(w, dtype="<f4").tobytes(),
                "bias": np.ascontiguousarray(unit.conv.bias.detach().float().cpu().numpy(), dtype="<f4").tobytes(),
                "dilation": int(unit.conv.dilation[0]),
                "kernel": int(unit.conv.kernel_size[0]),
                "padding": int(unit.conv.padding[0]),
                "residual": None
                if res is None
                else np.ascontiguousarray(res.detach().float().cpu().numpy()[:, :, 0], dtype="<f4").tobytes(),
            }
        )
    return units


def build(ctx) -> PageSpec:
    if hasattr(ctx.loaded.cfg, "arch"):  # an upstream stem: instance norm, DilatedBlock + time projection, stats token
        from . import upstream_embedding

        return upstream_embedding.build(ctx, __name__)
    samples = pick_device_samples(ctx, N_SAMPLES)
    extra = page_extra(ctx, samples)
    extra["units"] = conv_weights(ctx)
    extra["channel_names"] = [
        "aggregate (scaled)",
        "month sin",
        "month cos",
        "day-of-year sin",
        "day-of-year cos",
        "hour sin",
        "hour cos",
    ]
    return view_page(
        __name__,
        data={
            "names": js_names(len(extra["units"])),
            "story": story.embedding_story(ctx, samples, embed_unit(len(extra["units"]) - 1, "out")),
        },
        blobs=kit_blobs(ctx, RECORDS, samples, extra),
        context={"notes": ctx.notes_for(SLUG)},
        summary="Input channels and instance norm, dilated ResUnits with the receptive field on the real signal, "
        f"feature maps, positional encoding and the projection to {ctx.loaded.cfg.d_model}.",
    )
