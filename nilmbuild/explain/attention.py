"""Attention against attribution at one query step: does the model attend where the attribution says it looked?

For a point-level explanation at step t, the attention row of query t (each layer, each head: the weights over
the key tokens, after the diagonal mask) is compared with the attribution by Spearman rank correlation of the
absolute values (quality.spearman). Attention is one mixing step among many (Jain & Wallace 2019): a low
correlation says that where this layer attends is not what moved the output.

The spec's model attends over the L time steps, one key per step of the attribution. An upstream model
(CondiNILM, the original NILMFormer) attends over L + 1 tokens: its stem appends the stats token (the window's
mean and std, model/upstream/stem.py), which is no step of the aggregate and has no attribution of its own. The
comparison then uses the query's weights on the L time steps as the model computed them (not renormalised: they
sum to 1 minus the stats token's share), and reports that share apart (`stats_share`), so nothing is dropped
without saying so.
"""

from __future__ import annotations

import numpy as np
import torch

from nilmbuild.model import names
from nilmbuild.model.trace import Trace

from .quality import spearman
from .wrapper import WattsToDevice


def stats_index(loaded) -> int | None:
    """The key index of the stats token in the loaded model's attention rows, None when it has none (the spec's)."""
    if getattr(loaded.cfg, "arch", None) is None:
        return None
    from nilmbuild.model.upstream.stem import stats_token_index

    return stats_token_index(loaded.cfg)


def attention_rows(loaded, aggregate_w, start, step: int) -> np.ndarray:
    """(n_layers, n_head, T) attention weights of query `step` for the window (the inference run the pages draw);
    T = L key tokens for the spec's model, L + 1 for an upstream one (the stats token at `stats_index`)."""
    f = WattsToDevice(loaded, start, loaded.devices[0])
    layers = range(int(loaded.cfg.n_encoder_layers))
    wanted = {names.attn(l, "weights") for l in layers}
    trace = Trace(keep=wanted.__contains__)
    with torch.no_grad():
        f.model(f.model_input(torch.as_tensor(np.asarray(aggregate_w, np.float32))[None]), trace=trace)
    return np.stack([trace.records[names.attn(l, "weights")].tensor[0, :, step, :].numpy() for l in layers])


def split_tokens(rows: np.ndarray, stats: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """rows (..., T) -> (the weights on the time steps (..., L), the weight on the stats token (...) or None)."""
    rows = np.asarray(rows)
    if stats is None:
        return rows, None
    keep = np.ones(rows.shape[-1], dtype=bool)
    keep[stats] = False
    return rows[..., keep], rows[..., stats]


def attention_vs_attribution(rows: np.ndarray, attribution, stats: int | None = None) -> dict:
    """Spearman of |attribution| (L,) with each layer's head-mean attention row over the L time steps and with
    each head's row. stats: the stats token's key index (stats_index), None without one; with one, the result
    also holds `stats_share`, the query's weight on the stats token per layer (head mean) and per head."""
    steps, on_stats = split_tokens(rows, stats)
    if steps.shape[-1] != np.asarray(attribution).shape[-1]:
        raise ValueError(f"attention over {steps.shape[-1]} time steps, attribution over {np.shape(attribution)[-1]}")
    out = {
        "layers": [spearman(layer.mean(axis=0), attribution) for layer in steps],
        "heads": [[spearman(h, attribution) for h in layer] for layer in steps],
    }
    if on_stats is not None:
        out["stats_share"] = {"layers": on_stats.mean(axis=1).tolist(), "heads": on_stats.tolist()}
    return out
