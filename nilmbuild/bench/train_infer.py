"""Training-step and seq2subseq benchmarks."""

from __future__ import annotations

import numpy as np
import torch

from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.train.losses import LossWeights, device_losses, loss_components, weight_matrix
from nilmbuild.train.pcgrad import pcgrad_backward

from .timing import median_time


def bench_train_step(batch: int = 32, repeats: int = 3) -> list[dict]:
    """One optimiser step (forward, 7-component loss per device, backward, AdamW) with and without PCGrad."""
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig()).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    devs = model.cfg.device_names
    shared = [p for n, p in model.named_parameters() if not n.startswith("heads.")]
    own = [list(model.heads[d].parameters()) for d in devs]
    x = torch.rand(batch, 7, model.cfg.window)
    y = torch.rand(batch, len(devs), model.cfg.window) * 0.2
    s = (y > 0.1).float()
    wmat = weight_matrix([LossWeights() for _ in devs], 1.0, 0.0)

    def step(pcgrad: bool):
        opt.zero_grad(set_to_none=True)
        out = model(x)
        losses = device_losses(loss_components(out.power, out.gate_logit, y, s), wmat)
        if pcgrad:
            pcgrad_backward(losses, shared, own, torch.Generator().manual_seed(0))
        else:
            losses.sum().backward()
        opt.step()

    plain = median_time(lambda: step(False), repeats)
    pc = median_time(lambda: step(True), repeats)
    return [
        {"group": f"training step (B={batch}, L=480)", "name": "plain backward", "seconds": plain,
         "windows_per_s": batch / plain, "vs_reference": 1.0},
        {"group": f"training step (B={batch}, L=480)", "name": f"PCGrad over {len(devs)} device losses", "seconds": pc,
         "windows_per_s": batch / pc, "vs_reference": plain / pc},
    ]


def bench_seq2subseq(days: int = 2, repeats: int = 2) -> list[dict]:
    """Days of 1-minute data disaggregated per second (window 480, stride 240, batched), fast path."""
    from nilmbuild.data.preprocess import exogenous
    from nilmbuild.infer.seq2subseq import seq2subseq

    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig()).eval()
    T = days * 1440
    ts = np.datetime64("2024-01-01T00:00:00") + np.arange(T) * np.timedelta64(60, "s")
    x = np.concatenate([np.random.default_rng(0).random((1, T)), exogenous(ts)]).astype(np.float32)
    t = median_time(lambda: seq2subseq(model, x, batch_size=32), repeats)
    return [{"group": "seq2subseq (1-min data)", "name": f"{days} days, batch 32", "seconds": t,
             "days_per_s": days / t, "vs_reference": 1.0}]
