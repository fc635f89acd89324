"""What an imported checkpoint records about where it came from: each input file by name and sha256 (never a
local path), the detected format, the architecture, the whole upstream config, and what the importer derived
that the upstream does not store."""

from __future__ import annotations

import shlex
from pathlib import Path

from nilmbuild import __version__

from .detect import Upstream
from .device_names import renamed
from .reading import file_identity
from .upstream_config import UpstreamConfig


def import_provenance(
    up: Upstream,
    cfg: UpstreamConfig,
    *,
    checkpoint: Path,
    config: Path,
    scaler: Path | None,
    scaler_from: str,
    source: str | None = None,
) -> dict:
    """The provenance dict of an imported checkpoint (`provenance["upstream"]` holds the upstream's side)."""
    files = {"checkpoint": file_identity(checkpoint), "config": file_identity(config)}
    files["scaler"] = file_identity(scaler) if scaler is not None else {"from": scaler_from}
    upstream = {
        "format": up.format,
        "architecture": up.architecture,
        "files": files,
        "weights_key": up.weights_key,
        "criterion": sorted(up.criterion) if up.criterion else None,
        "meta": up.meta,
        "config": cfg.raw,
        "devices": list(cfg.devices),  # `app` as the upstream names them
        "device_names": renamed(cfg.devices, cfg.names),  # {upstream name: nilmbuild name} where they differ
        "derived": {"step_s": cfg.step_s, "window": cfg.window},
    }
    return {
        "upstream": upstream,
        # the data settings pages prepare their example data with (pipeline.data_settings): the model's step,
        # window and devices, in its output order
        "prep": {"resample_s": cfg.step_s, "window": cfg.window, "devices": list(cfg.names)},
        "command": _command(checkpoint, config, scaler, scaler_from if source is not None else None),
        "nilmbuild_version": __version__,
    }


def _command(checkpoint: Path, config: Path, scaler: Path | None, refit_from: str | None = None) -> str:
    """The import command line with file names only (what a reader of the pages may see)."""
    parts = ["nilmbuild", "import", checkpoint.name, "--config", config.name]
    if scaler is not None:
        parts += ["--scaler", scaler.name]
    if refit_from is not None:  # "refit from ukdale:FOLDER": the source with its folder's name only
        parts += ["--source", refit_from.removeprefix("refit from ")]
    return " ".join(shlex.quote(p) for p in parts)
