"""PCGrad (Yu et al. 2020, "Gradient Surgery for Multi-Task Learning"; architecture.md 10.3).

Tasks are the per-device losses. Over the SHARED parameters (everything outside `model.heads`: embedding,
positional encoding, projection, encoder layers, both FiLM generators) each device's gradient g_i is
projected onto the normal plane of every g_j it conflicts with (cos < 0), the other tasks visited in a
random order, always against the *original* g_j; the projected gradients are summed. Head parameters
get only their own device's gradient (no other loss reaches them), unchanged.
"""

from __future__ import annotations

import torch


def project(
    grads: list[torch.Tensor], generator: torch.Generator | None = None
) -> tuple[list[torch.Tensor], torch.Tensor, int]:
    """grads: T flat (P,) gradients -> (projected list, (T, T) cosine matrix of the originals, number of projections)."""
    T = len(grads)
    G = torch.stack(grads)  # (T, P)
    norms = G.norm(dim=1)
    cos = (G @ G.T) / (norms[:, None] * norms[None, :]).clamp_min(1e-20)
    out, n_proj = [], 0
    for i in range(T):
        g = G[i].clone()
        order = torch.randperm(T, generator=generator).tolist()
        for j in order:
            if j == i:
                continue
            dot = torch.dot(g, G[j])
            if dot < 0:
                g = g - dot / (G[j].dot(G[j]).clamp_min(1e-20)) * G[j]
                n_proj += 1
        out.append(g)
    return out, cos, n_proj


def pcgrad_backward(
    losses: torch.Tensor,
    shared: list[torch.nn.Parameter],
    own: list[list[torch.nn.Parameter]],
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, int]:
    """Per-device gradients in ONE batched backward (autograd.grad with grad_outputs = the D x D identity,
    is_grads_batched: row i is d losses[i] / d params) -> PCGrad over `shared`, own gradients for `own[i]`;
    writes .grad (accumulates onto existing .grad). Returns ((D, D) cosine matrix, projections)."""
    D = losses.shape[0]
    heads = [p for ps in own for p in ps]
    eye = torch.eye(D, dtype=losses.dtype, device=losses.device)
    g = torch.autograd.grad(losses, shared + heads, grad_outputs=eye, is_grads_batched=True, allow_unused=True)
    gs, gh = g[: len(shared)], dict(zip(map(id, heads), g[len(shared) :]))
    flat = [
        torch.cat([(x[i] if x is not None else torch.zeros_like(p)).reshape(-1) for x, p in zip(gs, shared)])
        for i in range(D)
    ]
    for i in range(D):
        for p in own[i]:
            x = gh[id(p)]
            if x is not None:
                p.grad = x[i].detach().clone() if p.grad is None else p.grad + x[i]
    proj, cos, n = project(flat, generator)
    total = torch.stack(proj).sum(0)
    off = 0
    for p in shared:
        k = p.numel()
        x = total[off : off + k].view_as(p)
        p.grad = x.clone() if p.grad is None else p.grad + x
        off += k
    return cos, n
