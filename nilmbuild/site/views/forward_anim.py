"""Data of the Forward page's animation (forward-pass.md 4.4 "Animated data flow"), packed into the "anim" blob.

Everything is an exact function of captured records, read back through the same Python reader (and so the same
float16 q/k) as every page:

- attention particles: for each sample, layer, head and each of ANIM_QUERIES evenly spaced query steps, the key
  steps of ANIM_PARTICLES particles sampled by that attention row's weights (stratified inverse CDF: particle j
  lands on the first key whose cumulative weight reaches (j + 0.5) / n), the row's argmax key and its weight;
- FFN "breathing": each unit's mean over the window of the FFN input (ln2), hidden (GELU) and output, per sample
  and layer (the FiLM output's mean is then exactly (1 + gamma_mean) * out_mean + beta_mean).
"""

from __future__ import annotations

import msgpack
import numpy as np

from nilmbuild.capture.format import decode
from nilmbuild.model.names import attn, encoder

ANIM_QUERIES = 16  # query steps that send particles (evenly spaced over the window)
ANIM_PARTICLES = 12  # particles per query row, at the row's quantiles (j + 0.5) / n
FFN_PARTS = (("in", "ln2"), ("hidden", "ffn.gelu"), ("out", "ffn.out"))


def records(n_layers: int) -> list[str]:
    """The records the animation is computed from (all exact; none of them is shipped whole)."""
    names = [attn(l, "weights") for l in range(n_layers)]
    return names + [encoder(l, part) for l in range(n_layers) for _, part in FFN_PARTS]


def query_steps(window: int, n: int = ANIM_QUERIES) -> list[int]:
    """n query steps at the centres of n equal parts of the window."""
    n = min(n, window)
    return [int((2 * i + 1) * window // (2 * n)) for i in range(n)]


def particle_targets(rows: np.ndarray, n: int = ANIM_PARTICLES) -> np.ndarray:
    """(..., L) attention rows -> (..., n) key indices: particle j goes to the first key k whose cumulative weight
    reaches (j + 0.5) / n of the row's total (a key of weight 0 is never chosen)."""
    cdf = np.cumsum(rows.astype(np.float64), axis=-1)
    u = (np.arange(n) + 0.5) / n
    flat = cdf.reshape(-1, cdf.shape[-1])
    out = np.stack([np.searchsorted(c, u * c[-1], side="left") for c in flat])
    return np.minimum(out, cdf.shape[-1] - 1).reshape(*rows.shape[:-1], n)


def _attention(ctx, n_layers: int, queries: list[int]) -> dict:
    targets, amax, wmax = [], [], []
    for l in range(n_layers):
        name = attn(l, "weights")
        w = decode(ctx.blob([name])).query_rows(name, queries)  # (B, H, Q, L): only these rows are rebuilt
        targets.append(particle_targets(w))
        amax.append(w.argmax(axis=-1))
        wmax.append(w.max(axis=-1))
    t = np.stack(targets, axis=1)  # (B, layers, H, Q, P)
    return {
        "source": [attn(l, "weights") for l in range(n_layers)],
        "queries": queries,
        "shape": list(t.shape),
        "axes": ["batch", "layer", "head", "query", "particle"],
        "targets": t.astype("<u2").tobytes(),
        "argmax": np.stack(amax, axis=1).astype("<u2").tobytes(),
        "argmax_weight": np.stack(wmax, axis=1).astype("<f2").tobytes(),
    }


def _ffn(ctx, n_layers: int) -> dict:
    parts = {key: [encoder(l, part) for l in range(n_layers)] for key, part in FFN_PARTS}
    reader = decode(ctx.blob([n for names in parts.values() for n in names]))  # one reader: shared derivations
    out = {}
    for key, names in parts.items():
        m = np.stack([reader.get(n).astype(np.float64).mean(axis=1) for n in names], axis=1)  # (B, layers, units)
        out[key] = {"source": names, "shape": list(m.shape), "data": m.astype("<f2").tobytes()}
    return out


def anim_blob(ctx) -> bytes:
    cfg = ctx.loaded.cfg
    n_layers = int(cfg.n_encoder_layers)
    data = {
        "attention": _attention(ctx, n_layers, query_steps(int(cfg.window))),
        "ffn": _ffn(ctx, n_layers),
    }
    return msgpack.packb(data, use_bin_type=True)
