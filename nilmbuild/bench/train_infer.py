"""Training-step and seq2subseq benchmarks."""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.train.losses import LossWeights, device_losses, loss_components, weight_matrix
from nilmbuild.train.pcgrad import pcgrad_backward

from .timing import median_time


def _per_device_pcgrad_reference(losses, shared, own, generator):
    """The previous PCGrad backward, kept as the benchmark's reference: one autograd.grad per device."""
    from nilmbuild.train.pcgrad import project

    flat = []
    for i in range(losses.shape[0]):
        g = torch.autograd.grad(losses[i], shared + own[i], retain_graph=i < losses.shape[0] - 1, allow_unused=True)
        flat.append(
            torch.cat(
                [(x if x is not None else torch.zeros_like(p)).reshape(-1) for x, p in zip(g[: len(shared)], shared)]
            )
        )
        for p, x in zip(own[i], g[len(shared) :]):
            if x is not None:
                p.grad = x.detach().clone() if p.grad is None else p.grad + x
    proj, _, _ = project(flat, generator)
    total = torch.stack(proj).sum(0)
    for p, x in zip(shared, torch.split(total, [p.numel() for p in shared])):
        p.grad = x.view_as(p).clone() if p.grad is None else p.grad + x.view_as(p)


def _step_timer(attn_dropout: float, device: str, batch: int):
    """A closure timing one optimiser step (forward, losses, backward, AdamW) of the full model."""
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(attn_dropout=attn_dropout)).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    devs = model.cfg.device_names
    shared = [p for n, p in model.named_parameters() if not n.startswith("heads.")]
    own = [list(model.heads[d].parameters()) for d in devs]
    x = torch.rand(batch, 7, model.cfg.window, device=device)
    y = torch.rand(batch, len(devs), model.cfg.window, device=device) * 0.2
    s = (y > 0.1).float()
    wmat = weight_matrix([LossWeights() for _ in devs], 1.0, 0.0)
    amp = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device == "cuda" else contextlib.nullcontext

    def step(backward):
        opt.zero_grad(set_to_none=True)
        with amp():
            out = model(x)
        losses = device_losses(loss_components(out.power.float(), out.gate_logit.float(), y, s), wmat)
        backward(losses, shared, own)
        opt.step()
        if device == "cuda":
            torch.cuda.synchronize()

    return step


def bench_train_step(batch: int = 16, repeats: int = 3) -> list[dict]:
    """Trained windows/s: today's step (no dropout on the attention weights, one batched PCGrad backward)
    against the previous one (attention-weight dropout 0.2, one backward per device), measured in this run."""
    plain = lambda losses, shared, own: losses.sum().backward()  # noqa: E731
    batched = lambda losses, shared, own: pcgrad_backward(losses, shared, own, torch.Generator().manual_seed(0))  # noqa: E731
    loop = lambda losses, shared, own: _per_device_pcgrad_reference(
        losses, shared, own, torch.Generator().manual_seed(0)
    )  # noqa: E731
    old, new = _step_timer(0.2, "cpu", batch), _step_timer(0.0, "cpu", batch)
    t = {
        "old plain": median_time(lambda: old(plain), repeats),
        "old pcgrad": median_time(lambda: old(loop), repeats),
        "new plain": median_time(lambda: new(plain), repeats),
        "new pcgrad": median_time(lambda: new(batched), repeats),
    }
    group = f"training step, CPU (B={batch}, L=480)"
    rows = [
        {
            "group": group,
            "name": "previous plain step (attention dropout 0.2)",
            "seconds": t["old plain"],
            "windows_per_s": batch / t["old plain"],
            "vs_reference": 1.0,
        },
        {
            "group": group,
            "name": "previous PCGrad step (one backward per device)",
            "seconds": t["old pcgrad"],
            "windows_per_s": batch / t["old pcgrad"],
            "vs_reference": t["old plain"] / t["old pcgrad"],
        },
        {
            "group": group,
            "name": "plain step: x previous plain",
            "seconds": t["new plain"],
            "windows_per_s": batch / t["new plain"],
            "vs_reference": t["old plain"] / t["new plain"],
        },
        {
            "group": group,
            "name": "PCGrad step (one batched backward): x previous PCGrad",
            "seconds": t["new pcgrad"],
            "windows_per_s": batch / t["new pcgrad"],
            "vs_reference": t["old pcgrad"] / t["new pcgrad"],
        },
    ]
    if torch.cuda.is_available():
        gpu = _step_timer(0.0, "cuda", 64)
        tg = median_time(lambda: gpu(plain), repeats)
        rows.append(
            {
                "group": "training step, GPU (B=64, bf16 autocast)",
                "name": torch.cuda.get_device_name(0),
                "seconds": tg,
                "windows_per_s": 64 / tg,
                "vs_reference": (64 / tg) / (batch / t["new plain"]),
            }
        )
    return rows


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
    return [
        {
            "group": "seq2subseq (1-min data)",
            "name": f"{days} days, batch 32",
            "seconds": t,
            "days_per_s": days / t,
            "vs_reference": 1.0,
        }
    ]
