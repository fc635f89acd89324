"""Upstream architectures: CondiNILM (github.com/davidzha712/CondiNILM, src/nilmformer/model.py) and the original
NILMFormer (Petralia et al., KDD 2025, github.com/adrienpetralia/NILMFormer), as first-class nilmbuild models.

The interface the importer (`nilmbuild import`) builds on:

build_from_upstream(arch, config, state_dict, criterion=None, names=None) -> UpstreamNILMFormer
    arch: "condinilm" | "nilmformer".
    config: the upstream configuration as parsed from its file. CondiNILM: its experiment_config.json dict.
        The original: the resolved experiment config (configs/*.yaml merged with the command line).
        Device order = config["app"] (a list, or one name). names: the model's device names in that order
        (the importer passes nilmbuild's names, importer/device_names.py); None keeps `app`'s.
    state_dict: keys as the upstream model's own state_dict() (the importer strips `model.` / `module.`),
        tensors on the CPU.
    criterion: CondiNILM's `criterion.gate_*` tensors with the prefix stripped (gate_soft_scales, gate_floors,
        gate_biases; others such as device_weights are ignored), or None. With them the model applies
        CondiNILM's per-device soft gate; without, the config's gate_soft_scale / gate_floor, as its
        evaluation falls back to.
    Raises a one-line UserError for missing or unexpected keys, shapes that do not fit the config, a head count
    the config does not give, a sparse/criterion size that does not match the devices, an unsupported option.

scalers_from_nilmscaler(fields) -> dict
    NILMscaler JSON fields (power_scaling_type, appliance_scaling_type, power_stat1, power_stat2,
    appliance_stat1, appliance_stat2 in device order, devices) -> the `scalers` a checkpoint stores
    ({"aggregate": ..., "appliances": {device: ...}}, affine scalers). UserError if a field or a device's
    statistics are missing; check_scalers(scalers, devices) raises if a model device has no scaler.

Saving: nilmbuild.model.checkpoint.save_checkpoint(path, model, scalers=, provenance=, extra=) writes any
architecture (it records model.cfg.arch and the whole upstream config); load_checkpoint rebuilds it;
nilmbuild.load_model(path).run_window(watts, start) returns what the upstream's evaluation computes, in watts.
"""

from __future__ import annotations

import torch

from nilmbuild.errors import UserError

from .config import ARCHITECTURES, UpstreamConfig
from .inputs import check_scalers, scalers_from_nilmscaler, time_features
from .keymap import map_state_dict
from .model import UpstreamNILMFormer, UpstreamOutput
from .parse import GATE_KEYS, config_from_upstream

__all__ = [
    "ARCHITECTURES",
    "UpstreamConfig",
    "UpstreamNILMFormer",
    "UpstreamOutput",
    "build_from_upstream",
    "check_scalers",
    "load_weights",
    "scalers_from_nilmscaler",
    "time_features",
]


def _criterion_tensors(criterion: dict | None, n_devices: int) -> dict:
    if not criterion or not all(k in criterion for k in GATE_KEYS):
        return {}
    out = {}
    for k in GATE_KEYS:
        t = torch.as_tensor(criterion[k]).detach().float().reshape(-1)
        if t.numel() != n_devices:
            raise UserError(f"criterion.{k} has {t.numel()} values for {n_devices} devices: config and weights differ")
        out[f"criterion.{k}"] = t
    return out


def load_weights(model: torch.nn.Module, state_dict: dict) -> None:
    """load_state_dict(strict=True) with a one-line UserError naming the first problem."""
    try:
        model.load_state_dict(state_dict, strict=True)
    except RuntimeError as e:
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        detail = lines[1] if len(lines) > 1 else (lines[0] if lines else "mismatch")
        raise UserError(f"the weights do not fit the config ({detail[:300]}): pass the config of this run") from None


def build_from_upstream(
    arch: str, config: dict, state_dict: dict, criterion: dict | None = None, names=None
) -> UpstreamNILMFormer:
    """See the module docstring."""
    crit = _criterion_tensors(criterion, len(_devices(config)))
    cfg = config_from_upstream(arch, config, has_criterion=bool(crit), names=names)
    model = UpstreamNILMFormer(cfg)
    weights = map_state_dict(dict(state_dict), cfg.n_encoder_layers)
    weights.update(crit)
    if arch == "condinilm" and not crit:  # the config gate keeps its values from the config, not from weights
        weights.update({k: v for k, v in model.state_dict().items() if k.startswith("criterion.")})
    load_weights(model, weights)
    return model.eval()


def _devices(config: dict) -> list[str]:
    from .parse import devices_of

    if not isinstance(config, dict):
        raise UserError("the upstream config must be a mapping (JSON object / YAML mapping)")
    return devices_of(config)
