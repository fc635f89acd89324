"""The upstream stem: instance norm of the power channel, the 1 -> 3d/4 dilated stem beside a 1x1 conv of the
time features -> d/4, and the mean/std stats token (L + 1 tokens go through attention).

Differences from the spec's stem (nilmbuild/model/nilmformer.py _stem), each one changes the numbers:
- only the power channel is instance-normalised (the time features are not), with the population std
  sqrt(var + 1e-6), clamped below at `min_std` (CondiNILM 1e-2; the original NILMFormer does not clamp);
- no positional encoding: the time features are the only position signal, projected by a 1x1 conv;
- the window's mean and std, projected by Linear(2, d_model), are appended as token L + 1.
"""

from __future__ import annotations

import torch
from torch import nn

from ..embedding import DilatedBlock
from ..trace import Trace, put
from .config import UpstreamConfig

SECTION = "upstream stem"


def stats_token_index(cfg) -> int:
    """Where UpstreamStem puts the stats token among the encoder's L + 1 tokens: last, after the L time steps
    (index L counted from 0, token L + 1 counted from 1)."""
    return int(cfg.window)


def instance_norm(x_main: torch.Tensor, min_std: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(B, 1, L) scaled power -> (normalised (B, 1, L), mean (B, 1, 1), std (B, 1, 1))."""
    mean = x_main.mean(dim=-1, keepdim=True)
    std = torch.sqrt(torch.var(x_main, dim=-1, keepdim=True, unbiased=False) + 1e-6)
    if min_std > 0:
        std = torch.clamp(std, min=min_std)
    return (x_main - mean) / std, mean, std


class UpstreamStem(nn.Module):
    """(B, 1 + E, L) input -> (tokens (B, L + 1, d_model), mean (B, 1, 1), std (B, 1, 1), stats token (B, 1, d))."""

    def __init__(self, cfg: UpstreamConfig) -> None:
        super().__init__()
        self.min_std = cfg.inst_norm_min_std
        self.EmbedBlock = DilatedBlock(1, cfg.d_stem, cfg.kernel_size, cfg.dilations, "upstream", cfg.conv_bias)
        self.ProjEmbedding = nn.Conv1d(cfg.c_embedding, cfg.d_time, kernel_size=1)
        self.ProjStats1 = nn.Linear(2, cfg.d_model)

    def forward(self, x: torch.Tensor, trace: Trace | None = None):
        x_main, time_feats = x[:, :1], x[:, 1:]  # (B, 1, L), (B, E, L)
        h, mean, std = instance_norm(x_main, self.min_std)
        put(trace, "stats.mean", mean[:, 0], ("batch", "one"), "1", SECTION, "window mean of the scaled power")
        put(trace, "stats.std", std[:, 0], ("batch", "one"), "1", SECTION, "window std, sqrt(var + 1e-6), clamped")
        put(trace, "instance_norm", h, ("batch", "channel", "time"), "1", SECTION, "(power - mean) / std")
        h = self.EmbedBlock(h, trace)  # (B, 3d/4, L)
        t = self.ProjEmbedding(time_feats)  # (B, d/4, L)
        put(trace, "time_proj", t, ("batch", "channel", "time"), "3", SECTION, "1x1 conv of the time features")
        tokens = torch.cat([h, t], dim=1).permute(0, 2, 1)  # (B, L, d_model)
        stats_token = self.ProjStats1(torch.cat([mean, std], dim=1).permute(0, 2, 1))  # (B, 1, d_model)
        put(trace, "stats_token", stats_token, ("batch", "token", "feature"), "4", SECTION, "Linear(2, d) of mean, std")
        tokens = torch.cat([tokens, stats_token], dim=1)  # (B, L + 1, d_model): stats_token_index(cfg) = L
        put(trace, "tokens", tokens, ("batch", "time", "feature"), "5", SECTION, "L time tokens + the stats token")
        return tokens, stats_token
