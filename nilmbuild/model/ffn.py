"""Stage 7e: position-wise feed-forward network 96 -> 384 -> 96 (encoder-film.md 6.5)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .names import param
from .trace import Trace, gelu, linear, put


class PositionWiseFeedForward(nn.Module):
    """Linear(96, 384) -> GELU -> Dropout -> Linear(384, 96): 37,248 + 36,960 = 74,208 parameters."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.layer1 = nn.Linear(d_model, d_ff)
        self.layer2 = nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, trace: Trace | None = None, name: str = "ffn", in_name: str | None = None
    ) -> torch.Tensor:
        # x: (B, L, d_model), traced as `in_name`
        h = self.layer1(x)  # (B, L, d_ff)
        put(
            trace,
            f"{name}.hidden",
            h,
            ("batch", "time", "hidden"),
            "7e",
            "encoder-film.md 6.5",
            "expansion Linear(96, 384), before GELU",
            derive=linear(in_name, param(f"{name}.layer1.weight"), param(f"{name}.layer1.bias")) if in_name else None,
        )
        h = F.gelu(h)
        put(
            trace,
            f"{name}.gelu",
            h,
            ("batch", "time", "hidden"),
            "7e",
            "encoder-film.md 6.5",
            "after GELU",
            derive=gelu(f"{name}.hidden"),
        )
        out = self.layer2(self.drop(h))  # (B, L, d_model)
        put(
            trace,
            f"{name}.out",
            out,
            ("batch", "time", "feature"),
            "7e",
            "encoder-film.md 6.5",
            "compression Linear(384, 96)",
        )
        return out
