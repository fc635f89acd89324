"""Model benchmarks: forward throughput of the attention paths and the whole model, B=32, L=480, CPU."""

from __future__ import annotations

import torch

from nilmbuild.model import NILMFormer, NILMFormerConfig, Trace

from .timing import median_time, peak_rss_mb

B, L = 32, 480


def reference_attention(x, wq, wk, wv, wo, n_head=8, head_dim=12):
    """The spec's attention written out plainly (attention.md 7.3-7.10): the reference the paths are compared to."""
    Bx, Lx, D = x.shape
    q = (x @ wq.T).view(Bx, Lx, n_head, head_dim).permute(0, 2, 1, 3)
    k = (x @ wk.T).view(Bx, Lx, n_head, head_dim).permute(0, 2, 1, 3)
    v = (x @ wv.T).view(Bx, Lx, n_head, head_dim).permute(0, 2, 1, 3)
    scores = torch.einsum("bhle,bhse->bhls", q, k) * head_dim**-0.5
    diag = torch.eye(Lx, dtype=torch.bool).unsqueeze(0).unsqueeze(0)
    attn = torch.softmax(scores.masked_fill(diag, -1e4), dim=-1).masked_fill(diag, 0.0)
    out = torch.einsum("bhls,bhsd->bhld", attn, v).permute(0, 2, 1, 3).reshape(Bx, Lx, D)
    return out @ wo.T


def _model():
    torch.manual_seed(0)
    return NILMFormer(NILMFormerConfig()).eval()


def _attention_variants(model):
    attn = model.layers[0].attn
    w = [m.weight.detach() for m in (attn.wq, attn.wk, attn.wv, attn.wo)]
    return {
        "reference einsum": lambda x: reference_attention(x, *w),
        "explicit path": lambda x: attn(x, explicit=True),
        "fast path (SDPA)": lambda x: attn(x, explicit=False),
    }


def _run_attention(name: str, n: int = 3) -> None:
    torch.set_num_threads(torch.get_num_threads())
    model = _model()
    x = torch.randn(B, L, 96)
    with torch.no_grad():
        for _ in range(n):
            _attention_variants(model)[name](x)


def _run_forward(traced: bool) -> None:
    model, x = _model(), torch.rand(B, 7, L)
    with torch.no_grad():
        model(x, trace=Trace() if traced else None)


def bench_model(repeats: int = 5, with_compile: bool = True) -> list[dict]:
    rows = []
    model = _model()
    x_attn = torch.randn(B, L, 96)
    x = torch.rand(B, 7, L)
    with torch.no_grad():
        variants = _attention_variants(model)
        ref_t = None
        for name, fn in variants.items():
            t = median_time(lambda: fn(x_attn), repeats)  # noqa: B023 (called at once, inside the loop)
            ref_t = ref_t or t
            rows.append(
                {
                    "group": "attention layer (B=32, L=480)",
                    "name": name,
                    "seconds": t,
                    "windows_per_s": B / t,
                    "vs_reference": ref_t / t,
                    "peak_mb": peak_rss_mb(_run_attention, name),
                }
            )
        fwd = median_time(lambda: model(x), repeats)
        traced = median_time(lambda: model(x, trace=Trace()), max(1, repeats // 2))
        rows.append(
            {
                "group": "full forward (B=32, L=480)",
                "name": "fast path (eval)",
                "seconds": fwd,
                "windows_per_s": B / fwd,
                "vs_reference": 1.0,
                "peak_mb": peak_rss_mb(_run_forward, False),
            }
        )
        rows.append(
            {
                "group": "full forward (B=32, L=480)",
                "name": "explicit + trace (capture)",
                "seconds": traced,
                "windows_per_s": B / traced,
                "vs_reference": fwd / traced,
                "peak_mb": peak_rss_mb(_run_forward, True),
            }
        )
        if with_compile:
            try:
                compiled = torch.compile(model)
                compiled(x)  # compile outside the timing
                t = median_time(lambda: compiled(x), repeats)
                rows.append(
                    {
                        "group": "full forward (B=32, L=480)",
                        "name": "fast path + torch.compile",
                        "seconds": t,
                        "windows_per_s": B / t,
                        "vs_reference": fwd / t,
                        "peak_mb": float("nan"),
                    }
                )
            except Exception as e:  # no compiler toolchain, unsupported op...
                rows.append(
                    {
                        "group": "full forward (B=32, L=480)",
                        "name": f"torch.compile failed: {type(e).__name__}",
                        "seconds": float("nan"),
                        "windows_per_s": float("nan"),
                        "vs_reference": float("nan"),
                        "peak_mb": float("nan"),
                    }
                )
    return rows
