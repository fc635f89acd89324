"""Seq2subseq sliding-window inference (architecture.md 11.1) over a series of any length T.

Geometry (W = model window, 480 by default):

    centre C = W / 2 (240), stride = C, margin M = (W - C) / 2 (120)

The series is padded with M samples on the left and R = n*C + M - T >= M samples on the right,
where n = ceil(T / C) is the number of windows. Window k covers padded samples [k*C, k*C + W),
i.e. real samples [k*C - M, k*C + C + M), and contributes its centre [M, M + C), i.e. real samples
[k*C, k*C + C) (the last one cropped to T). So every real sample, the first and the last included,
is predicted by the centre of exactly one window, and T < W works (one window, mostly padding).

Pad values: the power channel (0) is edge-replicated (first / last real value). The 6 time
channels are recomputed from the extended timestamps when `timestamps` are given (the cyclical
features then continue smoothly into the padding); otherwise they are edge-replicated too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Geometry:
    window: int  # W
    centre: int  # C = stride
    margin: int  # M
    n_windows: int  # n = ceil(T / C)
    pad_left: int  # = M
    pad_right: int  # = n*C + M - T

    @property
    def stride(self) -> int:
        return self.centre


def geometry(T: int, window: int = 480) -> Geometry:
    if window < 4 or window % 4:
        raise ValueError(f"window must be a positive multiple of 4 (got {window})")
    if T < 1:
        raise ValueError("series must have at least one sample")
    c = window // 2
    m = (window - c) // 2
    n = -(-T // c)
    return Geometry(window, c, m, n, m, n * c + m - T)


@dataclass
class Seq2SubseqResult:
    """Stitched predictions; every (D, T) array is aligned with the input's time axis.

    power:      (D, T) float32, hard/soft-gated power after output FiLM, scaled units (not watts)
    gate:       (D, T) float32, gate probability in [0, 1]
    power_raw:  (D, T) float32, head regression output before gate and FiLM (scaled units)
    window_starts: (n,) int64, start of each model window in real sample indices (the first is -M:
                it begins in the left padding)
    centres:    (n, 2) int64, [start, end) of the real samples each window's centre predicted
    seams:      (n - 1,) int64, indices where one window's centre hands over to the next (k * C)
    geometry:   the Geometry used
    """

    power: np.ndarray
    gate: np.ndarray
    power_raw: np.ndarray
    window_starts: np.ndarray
    centres: np.ndarray
    seams: np.ndarray
    geometry: Geometry


def pad_series(
    x: np.ndarray,
    left: int,
    right: int,
    timestamps: np.ndarray | None = None,
    step_s: int | None = None,
    exo_variables=None,
) -> np.ndarray:
    """(C, T) -> (C, left + T + right): edge-replicate every channel; when timestamps (T,) and
    step_s are given, channels 1.. are recomputed from the extended timestamp grid instead (the spec's time
    features, or an upstream model's `exo_variables`)."""
    x = np.asarray(x, dtype=np.float32)
    out = np.pad(x, ((0, 0), (left, right)), mode="edge")
    if timestamps is not None and x.shape[0] > 1:
        ts = np.asarray(timestamps).astype("datetime64[s]").astype(np.int64)
        if step_s is None:
            step_s = int(ts[1] - ts[0]) if ts.size > 1 else 60
        ext = ts[0] + (np.arange(-left, ts.size + right, dtype=np.int64)) * int(step_s)
        ext[left : left + ts.size] = ts
        exo = _time_features(ext.astype("datetime64[s]"), exo_variables)
        out[1 : 1 + exo.shape[0]] = exo[: out.shape[0] - 1]
    return out


def _time_features(stamps: np.ndarray, exo_variables) -> np.ndarray:
    if exo_variables is None:
        from nilmbuild.data.preprocess import exogenous

        return exogenous(stamps)
    from nilmbuild.model.upstream.inputs import time_features

    return time_features(stamps, exo_variables)


def _outputs(model, xb: torch.Tensor, gate_mode: str) -> dict:
    """power, gate, power_raw (B, D, W) of one batch. An upstream model (model/upstream) runs as its own
    evaluation does: power is its output, power_raw CondiNILM's ungated power, gate its soft-gate probability (the
    original NILMFormer has no gate: all ones, which no post-processing step reads for it, see PostConfig)."""
    if not hasattr(model.cfg, "arch"):
        out = model(xb, gate_mode=gate_mode)
        return {"power": out.power, "gate": out.gate, "power_raw": out.power_raw}
    out = model(xb)
    gate = out.gate if out.gate is not None else torch.ones_like(out.power)
    return {"power": out.power, "gate": gate, "power_raw": out.power_ungated}


@torch.no_grad()
def seq2subseq(
    model: torch.nn.Module,
    x: np.ndarray,
    *,
    batch_size: int = 32,
    gate_mode: str = "hard",
    timestamps: np.ndarray | None = None,
    step_s: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Seq2SubseqResult:
    """Run `model` over the (7, T) input series `x` (scaled aggregate + 6 time features) by seq2subseq.

    batch_size windows go through the model at once (eval mode, no grad); `progress(done, total)`
    is called after each batch with window counts. Returns a Seq2SubseqResult.
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise ValueError(f"x must be (channels, T), got shape {x.shape}")
    T = x.shape[1]
    W = int(getattr(getattr(model, "cfg", None), "window", 480))
    g = geometry(T, W)
    exo = getattr(getattr(model, "cfg", None), "exo_variables", None)
    xp = pad_series(x, g.pad_left, g.pad_right, timestamps, step_s, exo)  # (7, n*C + 2M)
    starts = np.arange(g.n_windows, dtype=np.int64) * g.centre  # padded coordinates
    was_training = model.training
    model.eval()
    outs = {"power": [], "gate": [], "power_raw": []}
    try:
        for b0 in range(0, g.n_windows, max(1, int(batch_size))):
            s = starts[b0 : b0 + max(1, int(batch_size))]
            xb = torch.from_numpy(np.stack([xp[:, a : a + W] for a in s]))  # (B, 7, W)
            out = _outputs(model, xb, gate_mode)
            for k in outs:
                outs[k].append(out[k][:, :, g.margin : g.margin + g.centre].float().cpu().numpy())
            if progress is not None:
                progress(min(b0 + len(s), g.n_windows), g.n_windows)
    finally:
        model.train(was_training)

    def stitch(parts):  # list of (B, D, C) -> (D, T)
        a = np.concatenate(parts, axis=0)  # (n, D, C)
        return np.ascontiguousarray(a.transpose(1, 0, 2).reshape(a.shape[1], -1)[:, :T], dtype=np.float32)

    c0 = starts  # real index of centre k = k * C
    return Seq2SubseqResult(
        power=stitch(outs["power"]),
        gate=stitch(outs["gate"]),
        power_raw=stitch(outs["power_raw"]),
        window_starts=starts - g.margin,
        centres=np.stack([c0, np.minimum(c0 + g.centre, T)], axis=1),
        seams=c0[1:].copy(),
        geometry=g,
    )
