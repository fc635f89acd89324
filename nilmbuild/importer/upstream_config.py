"""The upstream experiment configuration that `--config` points at, read and checked.

- CondiNILM writes `experiment_config.json` next to its results (OmegaConf's resolved config, JSON).
- The original NILMFormer stores none: `--config` is the configuration its `scripts/run_one_expe.py` resolves
  (configs/expes.yaml + the model's and the appliance's entries + the command line), saved by the user as JSON or
  YAML, with a `scaler` block of the NILMscaler's fields (docs/upstream-models.md shows how).

What nilmbuild reads from it: `app` (the device order: a list for CondiNILM, one name for the original; each name
mapped onto nilmbuild's own by device_names.py),
`window_size`, `sampling_rate` (the step between samples, which fixes the time features), `name_model` (must be
NILMFormer) and `model_kwargs` (the architecture's sizes; the architecture builder checks them against the
weights). The whole config is kept in the checkpoint as it was read. Device names and every other string here
are the user's: they reach the pages only through autoescaping templates and JSON, never as markup or code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nilmbuild.errors import UserError

from .device_names import canonical_devices


@dataclass(frozen=True)
class UpstreamConfig:
    raw: dict  # the whole config, JSON-able
    devices: list[str]  # the config's `app`, in order, as the upstream names them (scaler, data, provenance)
    names: list[str]  # nilmbuild's name for each of `devices` (device_names.py): the model's output channels
    window: int
    step_s: int
    name: str  # the file's name, for messages


def read_config(path: Path) -> UpstreamConfig:
    """Parse and check `--config` (JSON or YAML) -> UpstreamConfig; a one-line UserError when it cannot be used."""
    raw = _jsonable(_parse(path), path.name)
    if not isinstance(raw, dict):
        raise UserError(f"--config {path.name} holds a {type(raw).__name__}, not a mapping: {_WHAT}")
    model = raw.get("name_model", "NILMFormer")
    if model != "NILMFormer":
        raise UserError(f"--config {path.name}: name_model is {model!r}; only NILMFormer checkpoints can be imported")
    if not isinstance(raw.get("model_kwargs"), dict):
        raise UserError(f"--config {path.name} has no `model_kwargs` mapping (the model's sizes): {_WHAT}")
    devices = _devices(raw, path.name)
    return UpstreamConfig(
        raw=raw,
        devices=devices,
        names=canonical_devices(devices, path.name),
        window=_window(raw, path.name),
        step_s=step_seconds(raw.get("sampling_rate"), path.name),
        name=path.name,
    )


_WHAT = (
    "pass CondiNILM's experiment_config.json, or the original NILMFormer's resolved experiment config "
    "(see docs/upstream-models.md)"
)


def _parse(path: Path):
    if not path.is_file():
        raise UserError(f"--config {path} does not exist: {_WHAT}")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        pass
    import yaml  # only for the YAML a user saved by hand; JSON needs nothing

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        line = f" line {where.line + 1}" if where is not None else ""
        raise UserError(f"--config {path.name}{line} is neither JSON nor YAML: {_WHAT}") from None


def _jsonable(obj, name: str):
    """The config as plain JSON values (YAML may give dates), so the checkpoint stays weights-only readable."""
    try:
        return json.loads(json.dumps(obj, default=str, allow_nan=True))
    except (TypeError, ValueError):
        raise UserError(f"--config {name} has keys that are not strings: {_WHAT}") from None


def _devices(raw: dict, name: str) -> list[str]:
    app = raw.get("app")
    apps = [app] if isinstance(app, (str, int)) else app
    if not isinstance(apps, list) or not apps or not all(isinstance(a, (str, int)) for a in apps):
        raise UserError(
            f"--config {name} has no device list `app` (a name, or a list of names in the model's output order): "
            f"{_WHAT}"
        )
    devices = [str(a) for a in apps]  # upstream names its channels str(x)
    dup = sorted({d for d in devices if devices.count(d) > 1})
    if dup or any(not d.strip() for d in devices):
        raise UserError(f"--config {name}: `app` has repeated or empty device names ({', '.join(dup)}): fix `app`")
    return devices


def _window(raw: dict, name: str) -> int:
    w = raw.get("window_size")
    if isinstance(w, bool) or not isinstance(w, int) or w < 2:
        raise UserError(
            f"--config {name}: window_size is {w!r}, not a number of steps: pass the resolved window size the "
            "model was trained with (e.g. 128)"
        )
    return w


def step_seconds(rate, name: str) -> int:
    """The sampling rate in seconds, read as the architecture reads it (model.upstream.parse.step_seconds: '1min'
    -> 60, '30s' -> 30, '1T' -> 60), so the provenance and the model agree; the message names the file."""
    from nilmbuild.model.upstream.parse import step_seconds as upstream_step

    try:
        return upstream_step(rate) if rate is not None else upstream_step("")
    except UserError:
        raise UserError(
            f"--config {name}: sampling_rate is {rate!r}; pass the rate the model was trained at, such as '1min', "
            "'30s' or '10s'"
        ) from None
