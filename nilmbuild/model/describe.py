"""What `nilmbuild info` says about a model of any architecture: parameters per module and which stages exist.

The stage list comes from the model's own forward pass (the names it traces on one window of zeros), never
from a list written here, so a model without FiLM or a gate lists none.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from .trace import Trace


def count_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def module_params(model: nn.Module) -> dict:
    """{top-level module: parameters, ..., "total": n}; a module with children lists them under "<name>.<child>"."""
    out = {}
    for name, child in model.named_children():
        out[name] = count_params(child)
        for sub, grand in child.named_children():
            out[f"{name}.{sub}"] = count_params(grand)
    loose = {n: p.numel() for n, p in model.named_parameters(recurse=False)}
    return {**out, **loose, "total": count_params(model)}


def traced_names(model: nn.Module) -> list[str]:
    """Every record name the forward pass puts when everything is traced, on one window of zeros."""
    cfg = model.cfg
    x = torch.zeros(1, cfg.n_channels, cfg.window)
    trace = Trace(copy=False)  # keeps all, so attention takes its explicit path and traces q, k, v, weights
    with torch.no_grad():
        model.eval()(x, trace=trace)
    return trace.names()


def stage_groups(names: list[str]) -> dict[str, int]:
    """Record names grouped with layer numbers folded: {"encoder.{l}.attn.q": 3, "stats_token": 1, ...}."""
    groups: dict[str, int] = {}
    for n in names:
        key = re.sub(r"(?<=\.)\d+(?=\.|$)", "{l}", n)
        groups[key] = groups.get(key, 0) + 1
    return groups
