"""The original NILMFormer's head (Petralia et al., KDD 2025): no FiLM and no gate.

out  = DownstreamTaskHead(enc)     Conv1d(d, D, k_head, replicate padding)          (B, D, L)
m, s = ProjStats2(stats token)     Linear(d, 2) of the stats token *as it entered* the encoder
power = out * s + m                the learned de-normalisation, in scaled units
"""

from __future__ import annotations

import torch
from torch import nn

from ..trace import Trace, put
from .config import UpstreamConfig

SECTION = "NILMFormer head"


class ConvHead(nn.Module):
    def __init__(self, cfg: UpstreamConfig) -> None:
        super().__init__()
        k = cfg.kernel_size_head
        self.DownstreamTaskHead = nn.Conv1d(cfg.d_model, cfg.c_out, k, padding=k // 2, padding_mode="replicate")

    def forward(self, enc: torch.Tensor, stats_out: torch.Tensor, trace: Trace | None = None) -> torch.Tensor:
        """enc (B, d, L), stats_out (B, 1, 2) -> power (B, D, L) in scaled units."""
        out = self.DownstreamTaskHead(enc)  # (B, D, L)
        put(trace, "head.conv", out, ("batch", "device", "time"), "10", SECTION, "conv head, normalised units")
        power = out * stats_out[:, :, 1:2] + stats_out[:, :, 0:1]  # (B, D, L)
        put(trace, "output.power", power, ("batch", "device", "time"), "12", SECTION, "out * std' + mean'")
        return power
