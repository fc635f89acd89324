"""Upstream configuration dict -> UpstreamConfig, reading each value where the upstream code reads it.

CondiNILM: its experiment_config.json (window_size, list_exo_variables, sampling_rate, app, model_kwargs,
gate_soft_scale, gate_floor, ...). The original NILMFormer: the experiment config that scripts/run_one_expe.py
resolves (configs/*.yaml merged with the command line: window_size, list_exo_variables, sampling_rate, app,
model_kwargs). model_kwargs values the dict lacks take the upstream NILMFormerConfig defaults, as the upstream
code does; the device count is len(app) (CondiNILM overwrites model_kwargs.c_out with it before building).
"""

from __future__ import annotations

import json
import re

from nilmbuild.errors import UserError

from .config import ARCHITECTURES, UpstreamConfig
from .device_types import gate_logits_floors

#: The upstream NILMFormerConfig defaults (both codebases agree on these).
DEFAULTS = {
    "kernel_size": 3,
    "kernel_size_head": 3,
    "dilations": [1, 2, 4, 8],
    "conv_bias": True,
    "n_encoder_layers": 3,
    "d_model": 96,
    "dp_rate": 0.2,
    "pffn_ratio": 4,
    "norm_eps": 1e-5,
}
GATE_KEYS = ("gate_soft_scales", "gate_floors", "gate_biases")
_UNITS = {"s": 1, "sec": 1, "S": 1, "T": 60, "min": 60, "h": 3600, "H": 3600}


def step_seconds(rate) -> int:
    """A pandas frequency such as "1min", "30s", "10s", "1h" -> seconds."""
    m = re.fullmatch(r"\s*(\d*)\s*(s|sec|S|T|min|h|H)\s*", str(rate))
    if not m:
        raise UserError(f"sampling_rate {rate!r} is not a frequency such as 1min, 30s or 1h: fix the config")
    return int(m.group(1) or 1) * _UNITS[m.group(2)]


def devices_of(config: dict) -> list[str]:
    app = config.get("app", config.get("appliance"))
    if isinstance(app, str) and app:
        return [app]
    if isinstance(app, (list, tuple)) and app:
        return [str(a) for a in app]
    raise UserError("the config has no `app` (the device list): pass the upstream experiment configuration")


def _kwargs(config: dict) -> dict:
    mk = config.get("model_kwargs")
    if not isinstance(mk, dict):
        raise UserError("the config has no `model_kwargs`: pass the upstream experiment configuration")
    return {**DEFAULTS, **mk}


def _n_head(mk: dict) -> int:
    if "n_head" not in mk:
        raise UserError("the config's model_kwargs has no n_head and the weights cannot tell it: add n_head")
    return int(mk["n_head"])


def _common(arch: str, config: dict, mk: dict, devices: list[str]) -> dict:
    if "window_size" not in config:
        raise UserError("the config has no window_size: pass the upstream experiment configuration")
    return dict(
        arch=arch,
        window=int(config["window_size"]),
        devices=tuple(devices),
        d_model=int(mk["d_model"]),
        n_head=_n_head(mk),
        n_encoder_layers=int(mk["n_encoder_layers"]),
        pffn_ratio=int(mk["pffn_ratio"]),
        kernel_size=int(mk["kernel_size"]),
        kernel_size_head=int(mk["kernel_size_head"]),
        dilations=tuple(int(d) for d in mk["dilations"]),
        conv_bias=bool(mk["conv_bias"]),
        norm_eps=float(mk["norm_eps"]),
        dp_rate=float(mk["dp_rate"]),
        exo_variables=tuple(config.get("list_exo_variables") or ()),
        step_s=step_seconds(config.get("sampling_rate", "1min")),
        upstream=config,
    )


def _sparse_indices(config: dict, mk: dict, devices: list[str]) -> tuple[int, ...]:
    """CondiNILM's set_sparse_device_indices: devices named like its sparse_device_names (default kettle). It
    names devices from its per-device training statistics, which it computes for two or more devices only
    (scripts/run_experiment.py): a one-device run has no named device, so no sparse CNN."""
    if "sparse_device_indices" in config:  # an explicit override
        return tuple(int(i) for i in config["sparse_device_indices"])
    if len(devices) == 1:
        return ()
    names = [str(n).lower() for n in mk.get("sparse_device_names", ["kettle"])]
    return tuple(i for i, d in enumerate(devices) if d.lower() in names)


def _condinilm(config: dict, mk: dict, devices: list[str], has_criterion: bool) -> dict:
    for key in ("output_stats_mean_max", "output_stats_std_max"):
        if float(config.get(key, 0.0) or 0.0) > 0:
            raise UserError(f"{key} > 0 (the output-stats path) depends on the training epoch: not supported")
    type_ids = mk.get("type_ids_per_channel")
    return dict(
        mask_diagonal=bool(mk.get("mask_diagonal", True)),
        inst_norm_min_std=1e-2,
        use_film=bool(mk.get("use_film", True)),
        film_hidden_dim=int(mk.get("film_hidden_dim", 32)),
        use_elec_features=bool(mk.get("use_elec_features", True)),
        use_freq_features=bool(mk.get("use_freq_features", True)),
        type_ids_per_channel=tuple(type_ids) if type_ids is not None and len(type_ids) == len(devices) else None,
        sparse_indices=_sparse_indices(config, mk, devices),
        gate_logits_floors=tuple(gate_logits_floors(devices, config)) if len(devices) > 1 else (float("-inf"),),
        gate_source="criterion" if has_criterion else "config",
        gate_soft_scale=float(config.get("gate_soft_scale", 1.0)),
        gate_floor=float(config.get("gate_floor", 0.0)),
    )


def config_from_upstream(arch: str, config: dict, has_criterion: bool = False, names=None) -> UpstreamConfig:
    """names: the model's device names, one per `app` entry in its order (the importer's nilmbuild names); None:
    `app` as it is. What the upstream derives from a device's name (the sparse CNN, the gate-logit floor) is
    derived from its `app` name either way."""
    if arch not in ARCHITECTURES:
        raise UserError(f"unknown architecture {arch!r}: use one of {ARCHITECTURES}")
    if not isinstance(config, dict):
        raise UserError("the upstream config must be a mapping (JSON object / YAML mapping)")
    config = json.loads(json.dumps(config, default=str))  # plain JSON types: the checkpoint stores it whole
    devices, mk = devices_of(config), _kwargs(config)
    if arch == "nilmformer" and bool(mk.get("use_efficient_attention", False)):
        raise UserError(
            "use_efficient_attention (xformers, a +1 attention bias on the diagonal instead of a mask) is not "
            "supported: import a run trained with use_efficient_attention: false"
        )
    fields = _common(arch, config, mk, devices)
    if names is not None:
        if len(names) != len(devices):
            raise ValueError(f"{len(names)} device names for {len(devices)} `app` devices")
        fields["devices"] = tuple(names)
    if arch == "condinilm":
        fields.update(_condinilm(config, mk, devices, has_criterion))
    try:
        return UpstreamConfig(**fields)
    except (TypeError, ValueError) as e:
        raise UserError(f"the upstream config does not make a model: {e}") from None
