"""Stage 2: dilated convolution embedding (architecture.md section 5, forward-pass.md stage 2)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .trace import Trace, put


class ResUnit(nn.Module):
    """Conv1d(k, dilation d, 'same' padding) -> GELU -> BatchNorm, plus a residual.

    residual "spec": the identity when channels match, else a bias-free 1x1 conv (7 -> 8: 56 weights; with it
    the block has the spec's 896 parameters).
    residual "upstream" (CondiNILM and the original NILMFormer): a 1x1 conv *with* bias only when c_in > 1 and
    c_in != c_out; else the identity, so a single input channel is broadcast-added to all c_out channels
    (their stem's first unit, 1 -> 72). conv_bias: whether the dilated conv has a bias (upstream `conv_bias`).
    An even kernel gets PyTorch's asymmetric "same" padding, as upstream's padding="same" does.
    """

    def __init__(
        self,
        c_in: int,
        c_out: int,
        kernel_size: int,
        dilation: int,
        residual: str = "spec",
        conv_bias: bool = True,
    ) -> None:
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2 if kernel_size % 2 else "same"
        self.conv = nn.Conv1d(c_in, c_out, kernel_size, dilation=dilation, padding=pad, bias=conv_bias)
        self.bn = nn.BatchNorm1d(c_out)
        self.residual = _residual(residual, c_in, c_out)

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


def _residual(kind: str, c_in: int, c_out: int) -> nn.Module:
    """The ResUnit's skip path (see ResUnit): "spec" or "upstream"."""
    if kind == "spec":
        return nn.Conv1d(c_in, c_out, 1, bias=False) if c_in != c_out else nn.Identity()
    if kind == "upstream":
        return nn.Conv1d(c_in, c_out, 1) if c_in > 1 and c_in != c_out else nn.Identity()
    raise ValueError(f"unknown residual kind {kind!r} (expected 'spec' or 'upstream')")


class DilatedBlock(nn.Module):
    """Four ResUnits with dilations 1, 2, 4, 8: receptive field 3 -> 7 -> 15 -> 31 time steps."""

    def __init__(
        self,
        c_in: int,
        c_out: int,
        kernel_size: int,
        dilations: tuple[int, ...],
        residual: str = "spec",
        conv_bias: bool = True,
    ) -> None:
        super().__init__()
        chans = [c_in] + [c_out] * len(dilations)
        self.units = nn.ModuleList(
            ResUnit(chans[i], chans[i + 1], kernel_size, d, residual, conv_bias) for i, d in enumerate(dilations)
        )

    @staticmethod
    def receptive_fields(kernel_size: int, dilations: tuple[int, ...]) -> list[int]:
        """Receptive field after each unit: 1 + sum (k - 1) * d, i.e. [3, 7, 15, 31] for the defaults."""
        out, rf = [], 1
        for d in dilations:
            rf += (kernel_size - 1) * d
            out.append(rf)
        return out

    def forward(self, x: torch.Tensor, trace: Trace | None = None) -> torch.Tensor:
        # x: (B, 7, L) -> (B, 8, L) (spec); (B, 1, L) -> (B, 3 d_model / 4, L) (upstream stems)
        for i, unit in enumerate(self.units):
            x = unit(x, trace, f"embed.res{i}")
        return x
