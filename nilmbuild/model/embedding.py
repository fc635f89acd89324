"""Stage 2: dilated convolution embedding (architecture.md section 5, forward-pass.md stage 2)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .trace import Trace, put


class ResUnit(nn.Module):
    """Conv1d(k, dilation d, 'same' padding) -> GELU -> BatchNorm, plus a residual.

    The residual is the identity when channels match, else a bias-free 1x1 conv (7 -> 8: 56 weights;
    with it the block has the spec's 896 parameters).
    """

    def __init__(self, c_in: int, c_out: int, kernel_size: int, dilation: int) -> None:
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(c_in, c_out, kernel_size, dilation=dilation, padding=pad)
        self.bn = nn.BatchNorm1d(c_out)
        self.residual = nn.Conv1d(c_in, c_out, 1, bias=False) if c_in != c_out else nn.Identity()

    def forward(self, x: torch.Tensor, trace: Trace | None = None, name: str = "") -> torch.Tensor:
        # x: (B, C_in, L)
        h = self.conv(x)  # (B, C_out, L)
        put(
            trace,
            f"{name}.conv",
            h,
            ("batch", "channel", "time"),
            "2",
            "architecture.md 5",
            "dilated convolution output, before GELU",
        )
        h = self.bn(F.gelu(h))  # (B, C_out, L)
        out = h + self.residual(x)  # (B, C_out, L)
        put(
            trace,
            f"{name}.out",
            out,
            ("batch", "channel", "time"),
            "2",
            "architecture.md 5",
            "GELU -> BatchNorm, plus residual",
        )
        return out


class DilatedBlock(nn.Module):
    """Four ResUnits with dilations 1, 2, 4, 8: receptive field 3 -> 7 -> 15 -> 31 time steps."""

    def __init__(self, c_in: int, c_out: int, kernel_size: int, dilations: tuple[int, ...]) -> None:
        super().__init__()
        chans = [c_in] + [c_out] * len(dilations)
        self.units = nn.ModuleList(ResUnit(chans[i], chans[i + 1], kernel_size, d) for i, d in enumerate(dilations))

    @staticmethod
    def receptive_fields(kernel_size: int, dilations: tuple[int, ...]) -> list[int]:
        """Receptive field after each unit: 1 + sum (k - 1) * d, i.e. [3, 7, 15, 31] for the defaults."""
        out, rf = [], 1
        for d in dilations:
            rf += (kernel_size - 1) * d
            out.append(rf)
        return out

    def forward(self, x: torch.Tensor, trace: Trace | None = None) -> torch.Tensor:
        # x: (B, 7, L) -> (B, 8, L)
        for i, unit in enumerate(self.units):
            x = unit(x, trace, f"embed.res{i}")
        return x
