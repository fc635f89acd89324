"""Stage 10: device heads and the gate (architecture.md 9, forward-pass.md stage 10).

Both heads return (gate_logit, power_raw), each (B, 1, L), with the gate probability p = sigmoid(gate_logit)
in [0, 1]. The regular head's spec output cls_prob = 2 sigmoid(logit) lies in [0, 2]; smoothstep must act on
s = cls_prob / 2 = p (forward-pass.md stage 10; smoothstep on [0, 2] would not be monotone), and the hard gate
compares p with the device threshold.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .trace import Trace, put


def smoothstep(p: torch.Tensor) -> torch.Tensor:
    """s(p) = p^2 (3 - 2p) for p in [0, 1]: S-shaped, s(0) = 0, s(1/2) = 1/2, s(1) = 1."""
    return p * p * (3.0 - 2.0 * p)


class SimpleDeviceHead(nn.Module):
    """Regular devices: shared convs 96 -> 128 -> 128, then a classification and a regression 1x1 conv."""

    def __init__(self, d_model: int, hidden: int = 128) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(d_model, hidden, 3, padding=1)
        self.conv2 = nn.Conv1d(hidden, hidden, 3, padding=1)
        self.cls = nn.Conv1d(hidden, 1, 1)
        self.reg = nn.Conv1d(hidden, 1, 1)
        # softplus amplitude: a learnable output scale, softplus(a) > 0, starting at exactly 1
        self.amp = nn.Parameter(torch.tensor(math.log(math.e - 1.0)))

    def forward(
        self, x: torch.Tensor, trace: Trace | None = None, name: str = "head"
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # x: (B, d_model, L)
        f = F.relu(self.conv2(F.relu(self.conv1(x))))  # (B, 128, L)
        put(
            trace,
            f"{name}.features",
            f,
            ("batch", "channel", "time"),
            "10",
            "architecture.md 9.1",
            "shared features Conv(96,128) ReLU Conv(128,128) ReLU",
        )
        logit = self.cls(f)  # (B, 1, L)
        put(
            trace,
            f"{name}.cls_prob",
            2.0 * torch.sigmoid(logit[:, 0]),
            ("batch", "time"),
            "10",
            "architecture.md 9.1",
            "classification branch 2 sigmoid(logit), range [0, 2]",
        )
        raw = self.reg(f)  # (B, 1, L)
        power_raw = F.softplus(self.amp) * torch.log1p(F.softplus(raw))  # (B, 1, L), > 0
        return logit, power_raw


class SparseDeviceCNN(nn.Module):
    """Sparse two-state devices: Conv(96,64,d1) GELU BN, Conv(64,64,d2) GELU BN, Conv(64,2,1) -> [power, gate logit]."""

    def __init__(self, d_model: int, hidden: int = 64) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(d_model, hidden, 3, dilation=1, padding=1)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.conv2 = nn.Conv1d(hidden, hidden, 3, dilation=2, padding=2)
        self.bn2 = nn.BatchNorm1d(hidden)
        self.out = nn.Conv1d(hidden, 2, 1)

    def forward(
        self, x: torch.Tensor, trace: Trace | None = None, name: str = "head"
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # x: (B, d_model, L)
        f = self.bn2(F.gelu(self.conv2(self.bn1(F.gelu(self.conv1(x))))))  # (B, 64, L)
        put(
            trace,
            f"{name}.features",
            f,
            ("batch", "channel", "time"),
            "10",
            "forward-pass.md 10",
            "dilated conv stack 96 -> 64 -> 64",
        )
        o = self.out(f)  # (B, 2, L)
        return o[:, 1:2], F.softplus(o[:, 0:1])  # gate logit, power > 0


def make_head(kind: str, d_model: int) -> nn.Module:
    if kind == "sparse":
        return SparseDeviceCNN(d_model)
    if kind == "regular":
        return SimpleDeviceHead(d_model)
    raise ValueError(f"unknown head kind {kind!r} (expected 'sparse' or 'regular')")
