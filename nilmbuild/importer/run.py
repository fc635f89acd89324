"""`import_upstream`: an upstream checkpoint + its config + its scaler -> one nilmbuild checkpoint.

Everything is read and checked before anything is written; OUT is then written atomically, so a bad input
leaves no file behind and a good one never leaves half a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from nilmbuild.errors import UserError

from .detect import CONDINILM, NILMFORMER, Upstream, detect
from .provenance import import_provenance
from .reading import read_torch_file
from .scaler_fields import check_fields, check_types, read_scaler
from .upstream_config import UpstreamConfig, read_config


@dataclass(frozen=True)
class Imported:
    out: Path
    format: str
    architecture: str
    devices: list[str]
    window: int
    step_s: int
    upstream_devices: list[str]  # `app` as the upstream names them (devices: nilmbuild's names, same order)


def import_upstream(checkpoint, config, scaler=None, out="imported.pt", source=None) -> Imported:
    """Read, check and convert; write `out` only when every check passed. The scaler is `scaler` (a JSON of the
    NILMscaler's fields), or refitted from `source` (ukdale:PATH) as CondiNILM fits it, or the config's block."""
    checkpoint, config, out = Path(checkpoint), Path(config), Path(out)
    scaler = Path(scaler) if scaler is not None else None
    if scaler is not None and source is not None:
        raise UserError(
            "pass --scaler or --source, not both: --scaler reads the fitted scaler, --source refits it from the data"
        )
    _check_out(out, [checkpoint, config, scaler])
    cfg = read_config(config)
    fields, scaler_from = read_scaler(scaler, cfg) if source is None else ({}, "")
    up = detect(read_torch_file(checkpoint), checkpoint.name)
    check_fits(up, cfg, checkpoint.name)
    if source is not None:
        fields, scaler_from = refit(source, cfg, up)
    check_types(fields, up.architecture, scaler_from)
    cross_check(fields, cfg, refitted=source is not None)
    model, scalers = _build(up, cfg, fields)
    prov = import_provenance(
        up, cfg, checkpoint=checkpoint, config=config, scaler=scaler, scaler_from=scaler_from, source=source
    )
    from nilmbuild.model.checkpoint import save_checkpoint

    save_checkpoint(out, model, scalers=scalers, provenance=prov)
    return Imported(out, up.format, up.architecture, list(cfg.names), cfg.window, cfg.step_s, list(cfg.devices))


def refit(source: str, cfg: UpstreamConfig, up: Upstream) -> tuple[dict, str]:
    """(the NILMscaler fields refitted from `source`, where they came from: the source's folder name, no path)."""
    if up.format == NILMFORMER:
        raise UserError(
            "--source refits CondiNILM's scaler only; the original NILMFormer's --config carries its fitted scaler "
            "in a `scaler` block (docs/upstream-models.md shows the lines that save it): drop --source"
        )
    from .scaler_refit import refit_scaler, source_root

    where = f"refit from ukdale:{source_root(source).name}"
    return check_fields(refit_scaler(source, cfg), cfg, where), where


def _build(up: Upstream, cfg: UpstreamConfig, fields: dict):
    """The nilmbuild model and scalers (nilmbuild.model.upstream builds the architecture and checks the weights),
    both under nilmbuild's device names (the scaler fields name the upstream's, in the config's order)."""
    from nilmbuild.model.upstream import build_from_upstream, check_scalers, scalers_from_nilmscaler

    model = build_from_upstream(up.architecture, cfg.raw, up.state_dict, up.criterion, names=cfg.names)
    scalers = scalers_from_nilmscaler({**fields, "devices": list(cfg.names)})
    check_scalers(scalers, model.cfg.device_names)
    return model, scalers


def _check_out(out: Path, inputs: list[Path | None]) -> None:
    if out.is_dir():
        raise UserError(f"--out {out} is a folder: pass a file name such as {out / 'imported.pt'}")
    for p in inputs:
        if p is not None and p.exists() and out.exists() and out.resolve() == p.resolve():
            raise UserError(f"--out {out.name} is one of the input files: pass a new file name such as imported.pt")
    if out.exists() and not _is_nilmbuild_checkpoint(out):
        raise UserError(
            f"--out {out.name} exists and is not a nilmbuild checkpoint, so nilmbuild will not replace it: "
            "pass a new file name"
        )


def _is_nilmbuild_checkpoint(path: Path) -> bool:
    """Whether `path` is a file nilmbuild wrote (the only kind an import may replace)."""
    from nilmbuild.model.checkpoint import FORMAT

    try:
        payload = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # not a torch file, or one with other objects: not ours
        return False
    return isinstance(payload, dict) and payload.get("format") == FORMAT


def check_fits(up: Upstream, cfg: UpstreamConfig, name: str) -> None:
    """What the importer can check before building: one device for the original NILMFormer, and one value per
    device in each of CondiNILM's criterion gate tensors."""
    n = len(cfg.devices)
    if up.format == NILMFORMER and n != 1:
        raise UserError(
            f"{name} is an original NILMFormer log (one appliance per model) but --config {cfg.name} `app` names "
            f"{n} devices: pass the config of this run, whose `app` is its one appliance"
        )
    if up.format == CONDINILM:
        for key, t in (up.criterion or {}).items():
            if t.numel() != n:
                raise UserError(
                    f"{name}: criterion.{key} has {t.numel()} values but --config {cfg.name} `app` has {n} devices "
                    f"({', '.join(cfg.devices)}): pass the config of the run that wrote this checkpoint"
                )


def cross_check(fields: dict, cfg: UpstreamConfig, refitted: bool = False) -> None:
    """The scaler against what the config recorded of the same fit: its scaling types and `cutoff`, which both
    upstreams set to appliance_stat2[0] right after fitting. A mismatch means a scaler from another run (or, when
    refitted from --source, other data than the run trained on)."""
    what = (
        "check --source: it is not the data this run trained on"
        if refitted
        else "pass the scaler of the run that trained this model"
    )
    for key in ("power_scaling_type", "appliance_scaling_type"):
        if key in cfg.raw and cfg.raw[key] != fields[key]:
            raise UserError(
                f"the scaler's {key} is {fields[key]!r} but --config {cfg.name} says {cfg.raw[key]!r}: "
                "pass the scaler of the run that trained this model"
            )
    cutoff, first = cfg.raw.get("cutoff"), fields["appliance_stat2"][0]
    if isinstance(cutoff, (int, float)) and abs(cutoff - first) > 1e-6 * max(abs(cutoff), 1.0):
        raise UserError(
            f"the scaler's appliance_stat2 for {cfg.devices[0]} is {first:.10g} but --config {cfg.name} recorded "
            f"cutoff {cutoff:.10g} from the same fit: {what}"
        )
