"""Which attention heads serve which device: one ablation run per (layer, head) of the same weights.

For head h of layer l, the head's context (its E columns of the concatenated heads, just before the output
projection Wo) is set to zero and the model is re-run (eval, hard gate: the inference output). The effect on
device d is the mean over the window of |watts(ablated) - watts(model)|, per sample; the matrix keeps the
mean over the ablated samples and the sample where the effect is largest. Watts are the scaler's inverse of
the power output, clipped at 0 as at inference. An upstream model (CondiNILM, the original NILMFormer) runs as its
own code computes it: CondiNILM's output after its soft gate (the evaluation clamps it at 0 W too), the original's
de-normalised output (clipped at 0 W as nilmbuild's post-processing clips it).

Cost: n_layers * n_head forward passes of HEAD_ABLATION_SAMPLES windows (the attention page's samples, so
the page can open the head's map on the sample where the effect is largest).

How far to trust it: it is a single-head knock-out, measured on a handful of windows. Zeroing is not the
head's "average" behaviour (mean-ablation would differ), heads that back each other up show little effect
alone, and through the hard gate a small change can flip a device on or off, so large cells can come from
a few gate flips. It says what the output needs, on these windows, not what a head "means".
"""

from __future__ import annotations

import numpy as np
import torch

from nilmbuild.model import names

HEAD_ABLATION_SAMPLES = 2  # the attention page carries q, k, v and the unmasked run's q, k, lse: ~1.4 MB per sample
METHOD = (
    "zero one head's context before the output projection Wo, re-run the same weights (eval, hard gate); "
    "effect = mean over the window of |change in the device's watts|, averaged over the ablated samples"
)
#: The same for an upstream model: its own output (CondiNILM after its soft gate), clamped at 0 W.
UPSTREAM_METHOD = (
    "zero one head's context before the output projection Wo, re-run the same weights (eval, the model's own "
    "output: CondiNILM after its soft gate), clamped at 0 W; effect = mean over the window of |change in the "
    "device's watts|, averaged over the ablated samples"
)


def focus_samples(x) -> list[int]:
    """The samples the attention page shows, on which the capture makes its costlier attention ablations (these head
    knock-outs and the unmasked run): the HEAD_ABLATION_SAMPLES most varied ones."""
    return varied_samples(x, HEAD_ABLATION_SAMPLES)


def varied_samples(x, n: int) -> list[int]:
    """n batch samples with the most varied aggregate (std of input channel 0), in batch order (deterministic)."""
    x = np.asarray(x)
    B = x.shape[0]
    if B <= n:
        return list(range(B))
    order = np.argsort(-x[:, 0, :].std(axis=1), kind="stable")
    return sorted(int(i) for i in order[:n])


def to_watts(power: torch.Tensor, scalers: dict, devices: list[str]) -> np.ndarray:
    """(B, D, L) scaled power -> watts, clipped at 0 (as at inference)."""
    from nilmbuild.data.preprocess import scaler_from_dict

    p = power.detach().float().cpu().numpy()
    out = np.empty_like(p, dtype=np.float64)
    for i, d in enumerate(devices):
        out[:, i] = np.clip(scaler_from_dict(scalers["appliances"][d]).inverse(p[:, i]), 0, None)
    return out


def _zero_heads(chunks: dict[int, int], S: int, E: int):
    """Pre-hook on Wo: in batch chunk c (rows c*S .. c*S+S-1) zero head chunks[c]'s context columns."""

    def hook(module, args):
        merged = args[0].clone()  # (B, L, H * E): head h is columns h*E .. h*E+E-1
        for c, h in chunks.items():
            merged[c * S : (c + 1) * S, :, h * E : (h + 1) * E] = 0.0
        return (merged,)

    return hook


@torch.no_grad()
def head_ablation(model, x, scalers: dict, samples: list[int]) -> dict:
    """-> {"delta_w": (layers, heads, devices) mean |dW|, "sample": same shape, batch index of the largest effect,
    "per_sample": (layers, heads, devices, S), "samples": samples}.

    One forward pass of 1 + layers * heads copies of the samples: copy 0 is the model, copy 1 + l * heads + h
    has head h of layer l zeroed (a batched run is several times faster on a CPU than 24 runs of 2 windows)."""
    cfg = model.cfg
    devices = cfg.device_names
    xs = torch.as_tensor(np.asarray(x)[samples], dtype=torch.float32)  # (S, channels, L)
    S, H = xs.shape[0], cfg.n_head
    upstream = hasattr(cfg, "arch")  # CondiNILM / the original NILMFormer: its own output, no gate_mode
    layers = model.encoder_layers if upstream else model.layers
    handles = [
        layer.attn.wo.register_forward_pre_hook(
            _zero_heads({1 + l * H + h: h for h in range(H)}, S, layer.attn.head_dim)
        )
        for l, layer in enumerate(layers)
    ]
    copies = xs.repeat(1 + cfg.n_encoder_layers * H, 1, 1)
    try:
        w = to_watts((model(copies) if upstream else model(copies, gate_mode="hard")).power, scalers, devices)
    finally:
        for handle in handles:
            handle.remove()
    w = w.reshape(1 + cfg.n_encoder_layers * H, S, len(devices), -1)  # (copy, S, D, L)
    per = np.abs(w[1:] - w[:1]).mean(axis=3)  # (layers * heads, S, D)
    per = per.reshape(cfg.n_encoder_layers, H, S, len(devices)).transpose(0, 1, 3, 2)  # (layers, heads, D, S)
    best = np.asarray(samples)[per.argmax(axis=3)]
    return {"delta_w": per.mean(axis=3), "sample": best, "per_sample": per, "samples": list(samples)}


def store_head_ablation(planner, r: dict, upstream: bool = False) -> dict:
    """Plan the records of a `head_ablation` result (capture runs it on focus_samples); returns the meta entry."""
    axes = ("layer", "head", "device")
    planner.store(
        names.HEAD_ABLATION_DELTA,
        r["delta_w"],
        axes,
        "7b",
        "architecture.md appendix",
        "mean |change in the device's watts| over the window when this head's context is zeroed",
        encoding="f32",
    )
    planner.store(
        names.HEAD_ABLATION_SAMPLE,
        r["sample"].astype(np.float32),
        axes,
        "7b",
        "architecture.md appendix",
        "batch index (of the full captured batch) where that change is largest",
        encoding="f32",
    )
    return {"samples": r["samples"], "method": UPSTREAM_METHOD if upstream else METHOD, "unit": "W"}
