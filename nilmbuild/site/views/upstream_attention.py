"""The Attention page of an upstream model (CondiNILM, the original NILMFormer): every encoder layer's multi-head
self-attention over the L + 1 tokens its stem makes, the L time steps and, last, the stats token (token L + 1).

The weights are the capture's own records: q, k and the row log-sum-exp lse of each layer (encoder.{l}.attn.*,
traced by the explicit attention path the upstream encoder layers share with the spec's), from which the page's
decoder rebuilds every (query x key) weight exactly as the capture verified it. Layers, heads, token count and the
stats token's place come from the loaded model's config and its records; nothing here is a fixed size.
"""

from __future__ import annotations

from nilmbuild.model.names import HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE, INPUT, attn
from nilmbuild.site import upstream_story
from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import model_sizes, pick_varied_samples, view_page, window_starts
from .live_parts import whatif_page

N_SAMPLES = 4
PARTS = ("q", "k", "lse", "weights")  # what the page's blob holds per layer (weights: derived from q, k, lse)


def js_names(n_layers: int) -> dict:
    """The record names page_upstream_attention.js reads (page().data.names), one per layer where they have one."""
    layers = range(n_layers)
    return {"input": INPUT, "q": [attn(l, "q") for l in layers], "weights": [attn(l, "weights") for l in layers],
            "head_delta": HEAD_ABLATION_DELTA, "head_sample": HEAD_ABLATION_SAMPLE}  # fmt: skip


def records(n_layers: int) -> list[str]:
    """What the page's capture blob holds: the input and every layer's q, k, lse and (derived) weights."""
    return [INPUT] + [attn(l, p) for l in range(n_layers) for p in PARTS]


def token_axis(cfg) -> dict:
    """How the page labels the token axes: L steps of step_minutes each, then the stats token at index L (0-based),
    token L + 1 when counted from 1."""
    from nilmbuild.model.upstream.stem import stats_token_index

    L, i = int(cfg.window), stats_token_index(cfg)
    return {"steps": L, "stats_index": i, "stats_label": f"stats token (token {i + 1})",
            "step_minutes": int(cfg.step_s) / 60}  # fmt: skip


def build(ctx, view: str) -> PageSpec:
    """The upstream Attention page (view: the attention view module's __name__, for its slug)."""
    cfg = ctx.loaded.cfg
    n_layers = int(cfg.n_encoder_layers)
    samples = pick_varied_samples(ctx, min(N_SAMPLES, int(ctx.x.shape[0])))
    missing = [n for n in records(n_layers) if n not in ctx.capture.records]
    if missing:
        raise KeyError(f"attention page: the capture has no record {missing[0]}")
    head_ablation = ctx.capture.meta.get("head_ablation")  # None: a checkpoint without appliance scalers
    heads = [HEAD_ABLATION_DELTA, HEAD_ABLATION_SAMPLE] if head_ablation else []
    sizes = model_sizes(cfg, cfg.step_s)
    data = {
        "samples": samples,
        "sample_labels": window_starts(ctx, samples),
        "n_layers": n_layers,
        "names": js_names(n_layers),
        "tokens": token_axis(cfg),
        "head_ablation": head_ablation,
        "story": upstream_story.attention_story(ctx, samples),
    }
    whatif, wblobs, files = whatif_page(ctx, samples)  # the live graph's mask_diagonal switch (whatif_upstream.js)
    data["whatif"] = whatif
    context = {"m": sizes, "arch": upstream_prose.NAMES[cfg.arch], "masked": bool(cfg.mask_diagonal), "notes": [],
               "head_ablation": head_ablation}  # fmt: skip
    summary = (
        f"Every head of every layer over {cfg.window} + 1 tokens: the time steps and, last, the stats token "
        f"(token {cfg.window + 1})."
    )
    return view_page(view, template="upstream_attention.html", entry="page_upstream_attention.js", data=data,
                     blobs={"capture": ctx.blob(records(n_layers) + heads, samples), **wblobs}, files=files,
                     context=context,
                     summary=summary,
                     section="", title=upstream_prose.TITLES["attention"], lead=upstream_prose.LEADS["attention"])  # fmt: skip
