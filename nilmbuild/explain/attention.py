"""Attention against attribution at one query step: does the model attend where the attribution says it looked?

For a point-level explanation at step t, the attention row of query t (each layer, each head: the weights over
the 480 key steps, after the diagonal mask) is compared with the attribution by Spearman rank correlation of the
absolute values (quality.spearman). Attention is one mixing step among many (Jain & Wallace 2019): a low
correlation says that where this layer attends is not what moved the output.
"""

from __future__ import annotations

import numpy as np
import torch

from nilmbuild.model import names
from nilmbuild.model.trace import Trace

from .quality import spearman
from .wrapper import WattsToDevice


def attention_rows(loaded, aggregate_w, start, step: int) -> np.ndarray:
    """(n_layers, n_head, L) attention weights of query `step` for the window (the hard-gate inference run)."""
    f = WattsToDevice(loaded, start, loaded.devices[0])
    layers = range(int(loaded.cfg.n_encoder_layers))
    wanted = {names.attn(l, "weights") for l in layers}
    trace = Trace(keep=wanted.__contains__)
    with torch.no_grad():
        f.model(f.model_input(torch.as_tensor(np.asarray(aggregate_w, np.float32))[None]), trace=trace)
    return np.stack([trace.records[names.attn(l, "weights")].tensor[0, :, step, :].numpy() for l in layers])


def attention_vs_attribution(rows: np.ndarray, attribution) -> dict:
    """Spearman of |attribution| with each layer's head-mean attention row and with each head's row."""
    return {
        "layers": [spearman(layer.mean(axis=0), attribution) for layer in rows],
        "heads": [[spearman(h, attribution) for h in layer] for layer in rows],
    }
