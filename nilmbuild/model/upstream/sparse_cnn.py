"""CondiNILM's sparse CNN: for a kettle, a small CNN on the *raw* scaled aggregate (not instance-normalised)
replaces the Transformer's output. Parameter names follow CondiNILM's `sparse_cnn.simple_head.*` state_dict.

It always has two device heads (CondiNILM builds it for up to two sparse devices and keeps both in every
checkpoint); the model uses head k for its k-th sparse device. Its outputs, as CondiNILM's evaluation reads
them (forward_with_gate): the ungated amplitude relu(reg) * softplus(amplitude_scale) and the gate logit.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..trace import Trace, put

N_HEADS = 2  # CondiNILM's max_sparse_devices


class SparseHeads(nn.Module):
    """shared_conv: Conv1d(1, H, 5) -> ReLU -> Conv1d(H, H, 5) -> ReLU; per head: cls and reg branches
    Conv1d(H, H/2, 3) -> ReLU -> Conv1d(H/2, 1, 1). H = d_model."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.shared_conv = nn.Sequential(
            nn.Conv1d(1, hidden, 5, padding=2), nn.ReLU(), nn.Conv1d(hidden, hidden, 5, padding=2), nn.ReLU()
        )
        self.device_heads = nn.ModuleList(
            nn.ModuleDict(
                {
                    "cls_conv": nn.Conv1d(hidden, hidden // 2, 3, padding=1),
                    "cls_out": nn.Conv1d(hidden // 2, 1, 1),
                    "reg_conv": nn.Conv1d(hidden, hidden // 2, 3, padding=1),
                    "reg_out": nn.Conv1d(hidden // 2, 1, 1),
                }
            )
            for _ in range(N_HEADS)
        )
        self.amplitude_scales = nn.Parameter(torch.full((N_HEADS,), 2.0))
        self.cls_thresholds = nn.Parameter(torch.zeros(N_HEADS))  # used by CondiNILM's hard-gated forward only

    def forward(self, x_main: torch.Tensor, k: int, trace: Trace | None = None, name: str = "sparse"):
        """x_main (B, 1, L) scaled aggregate -> (amplitude (B, 1, L), gate logit (B, 1, L)) of head k."""
        head = self.device_heads[k]
        feat = self.shared_conv(x_main)  # (B, H, L)
        put(trace, f"{name}.features", feat, ("batch", "channel", "time"), "10", "sparse CNN", "shared conv features")
        logit = head["cls_out"](F.relu(head["cls_conv"](feat)))  # (B, 1, L)
        amp = F.relu(head["reg_out"](F.relu(head["reg_conv"](feat)))) * F.softplus(self.amplitude_scales[k])
        put(trace, f"{name}.amplitude", amp[:, 0], ("batch", "time"), "10", "sparse CNN", "ungated amplitude")
        put(trace, f"{name}.gate_logit", logit[:, 0], ("batch", "time"), "10", "sparse CNN", "gate logit")
        return amp, logit


class SparseCNN(nn.Module):
    """The `sparse_cnn` module: its one child `simple_head` (CondiNILM's names)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.simple_head = SparseHeads(hidden)

    def forward(self, x_main: torch.Tensor, k: int, trace: Trace | None = None, name: str = "sparse"):
        return self.simple_head(x_main, k, trace, name)
