"""CondiNILM's output head: SharedHead conv, per-device adapters, shared power and gate heads, output FiLM,
ReLU. Parameter names follow CondiNILM's state_dict (prefixed `head.` here; see keymap.py).

  shared  = SharedHead(enc)                       Conv1d(d, d, k_head, replicate padding)   (B, d, L)
  adapted = shared + 0.4 * adapter_i(shared)      Conv1d(d, d/2, 1) -> ReLU -> Conv1d(d/2, d, 1)
  power_i = PowerHead(adapted_i)[:, i]            Conv1d(d, D, 1), device i reads its own channel
  gate_i  = GateHead(adapted_i)[:, i]
With type_ids_per_channel, devices of one type share one pair of heads (type_power_heads / type_gate_heads,
one output channel per device of the group). Then the output FiLM acts *before* the ReLU and before any gate:
power = relu((1 + gamma_i) * power_i + beta_i).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..trace import Trace, put
from .config import UpstreamConfig

SECTION = "CondiNILM head"
AX = ("batch", "device", "time")


def _group_indices(type_ids: tuple[int, ...]) -> list[list[int]]:
    """Device indices per type id 0 .. max (an id without devices gets an empty group and no heads)."""
    return [[i for i, t in enumerate(type_ids) if t == gid] for gid in range(max(type_ids) + 1)]


class SharedHeadBlock(nn.Module):
    def __init__(self, cfg: UpstreamConfig) -> None:
        super().__init__()
        d, k = cfg.d_model, cfg.kernel_size_head
        self.SharedHead = nn.Conv1d(d, d, k, padding=k // 2, padding_mode="replicate")
        self.device_adapters = nn.ModuleList(
            nn.Sequential(nn.Conv1d(d, d // 2, 1), nn.ReLU(), nn.Conv1d(d // 2, d, 1)) for _ in range(cfg.c_out)
        )
        self.groups = None
        if cfg.type_ids_per_channel is not None and cfg.c_out > 1 and max(cfg.type_ids_per_channel) >= 0:
            self.groups = [g for g in _group_indices(cfg.type_ids_per_channel) if g]
            self.type_power_heads = nn.ModuleList(nn.Conv1d(d, len(g), 1) for g in self.groups)
            self.type_gate_heads = nn.ModuleList(nn.Conv1d(d, len(g), 1) for g in self.groups)
        else:
            self.PowerHead = nn.Conv1d(d, cfg.c_out, 1)
            self.GateHead = nn.Conv1d(d, cfg.c_out, 1)
        self.names = cfg.device_names

    def _heads_for(self, i: int) -> tuple[nn.Module, nn.Module, int]:
        """Device i's power head, gate head and its output channel in them."""
        if self.groups is None:
            return self.PowerHead, self.GateHead, i
        for m, g in enumerate(self.groups):
            if i in g:
                return self.type_power_heads[m], self.type_gate_heads[m], g.index(i)
        raise ValueError(f"device {i} has no type group")

    def forward(self, enc: torch.Tensor, gamma, beta, trace: Trace | None = None):
        """enc (B, d, L), gamma/beta (B, D, 1) or None -> (power (B, D, L) >= 0, gate logit (B, D, L))."""
        shared = self.SharedHead(enc)  # (B, d, L)
        put(trace, "head.shared", shared, ("batch", "feature", "time"), "10", SECTION, "SharedHead conv")
        powers, gates = [], []
        for i, name in enumerate(self.names):
            adapted = shared + 0.4 * self.device_adapters[i](shared)  # (B, d, L)
            put(trace, f"head.adapted.{name}", adapted, ("batch", "feature", "time"), "10", SECTION, "adapter")
            p_head, g_head, c = self._heads_for(i)
            powers.append(p_head(adapted)[:, c : c + 1]), gates.append(g_head(adapted)[:, c : c + 1])
        power, gate = torch.cat(powers, dim=1), torch.cat(gates, dim=1)  # (B, D, L) each
        put(trace, "head.power_raw", power, AX, "10", SECTION, "power head, before the output FiLM")
        put(trace, "head.gate_logit", gate, AX, "10", SECTION, "gate head logit")
        if gamma is not None:
            power = (1.0 + gamma) * power + beta
            put(trace, "head.power_film", power, AX, "11", SECTION, "(1 + gamma) * power + beta, before the ReLU")
        power = F.relu(power)
        put(trace, "head.power", power, AX, "11", SECTION, "ReLU: the Transformer's ungated power")
        return power, gate
