"""One-file checkpoints: architecture, config, weights, scalers, device metadata, training log, version, provenance.

`architecture` is "spec" (nilmbuild's own model, model/nilmformer.py; a file without the key is one) or an
upstream architecture, "condinilm" or "nilmformer" (model/upstream/), whose config records the full upstream
configuration it was built from.

Loading never shows a traceback for a bad file: a truncated/corrupt file, a checkpoint of another format
version, or weights that do not fit their config each raise a one-line UserError that says what to do.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from nilmbuild import __version__
from nilmbuild.errors import UserError
from nilmbuild.provenance import bytes_fingerprint, default_checkpoint_path

from .config import NILMFormerConfig
from .nilmformer import NILMFormer

FORMAT = "nilmbuild-checkpoint"
FORMAT_VERSION = 1


@dataclass
class Loaded:
    model: NILMFormer  # or model.upstream.UpstreamNILMFormer (see `architecture`)
    cfg: NILMFormerConfig  # or model.upstream.UpstreamConfig
    scalers: dict = field(default_factory=dict)
    train_log: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)
    nilmbuild_version: str = __version__
    path: str = ""
    fingerprint: str = ""  # sha256 hex of the file's bytes (nilmbuild.provenance); "" for a model not from a file

    @property
    def devices(self) -> list[str]:
        return self.cfg.device_names

    @property
    def architecture(self) -> str:
        return getattr(self.cfg, "arch", "spec")


def atomic_write_bytes(path: str | os.PathLike, write) -> None:
    """Call write(fileobj) on a temp file beside `path`, then rename it over `path` (never a half-written file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; a written file gets the usual permissions
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def architecture_of(model) -> str:
    """ "spec" for nilmbuild's model, else the upstream architecture its config names."""
    return getattr(model.cfg, "arch", "spec")


def build_model(architecture: str, config: dict):
    """(model, cfg) of any architecture from a checkpoint's config dict."""
    if architecture == "spec":
        cfg = NILMFormerConfig.from_dict(config)
        return NILMFormer(cfg), cfg
    from .upstream import ARCHITECTURES, UpstreamConfig, UpstreamNILMFormer

    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    cfg = UpstreamConfig.from_dict(config)
    return UpstreamNILMFormer(cfg), cfg


def save_checkpoint(
    path,
    model,
    *,
    scalers: dict | None = None,
    train_log: dict | None = None,
    provenance: dict | None = None,
    extra: dict | None = None,
) -> None:
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nilmbuild_version": __version__,
        "architecture": architecture_of(model),
        "config": model.cfg.to_dict(),
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "scalers": scalers or {},
        "train_log": train_log or {},
        "provenance": provenance or {},
        "extra": extra or {},
    }
    atomic_write_bytes(path, lambda f: torch.save(payload, f))


def update_extra(path, key: str, value) -> None:
    """Set extra[key] = value in the checkpoint file at `path`, rewriting it atomically (weights untouched)."""
    load_checkpoint(path)  # one-line UserError for anything unreadable
    payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    payload["extra"] = {**(payload.get("extra") or {}), key: value}
    try:
        atomic_write_bytes(path, lambda f: torch.save(payload, f))
    except OSError as e:  # a read-only file system or folder, a full disk: the file is left as it was
        raise UserError(
            f"cannot rewrite checkpoint {path} ({e.strerror or type(e).__name__}): copy it somewhere writable "
            "and pass the copy with --checkpoint"
        ) from None


def load_checkpoint(path=None) -> Loaded:
    path = Path(path) if path is not None else default_checkpoint_path()
    if not path.is_file():
        raise UserError(f"checkpoint {path} does not exist: pass --checkpoint with a file written by `nilmbuild train`")
    data = path.read_bytes()
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # truncated zip, bad pickle, not a torch file at all
        raise UserError(
            f"checkpoint {path} is corrupt or truncated ({type(e).__name__}): "
            "re-copy it or write a new one with `nilmbuild train`"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise UserError(f"{path} is not a nilmbuild checkpoint: write one with `nilmbuild train`")
    if payload.get("format_version") != FORMAT_VERSION:
        raise UserError(
            f"checkpoint {path} has format version {payload.get('format_version')} "
            f"(written by nilmbuild {payload.get('nilmbuild_version')}), this nilmbuild {__version__} "
            f"reads version {FORMAT_VERSION}: retrain with `nilmbuild train` or use the matching nilmbuild"
        )
    try:
        model, cfg = build_model(payload.get("architecture", "spec"), payload["config"])
        model.load_state_dict(payload["state_dict"], strict=True)
    except (TypeError, ValueError, RuntimeError, KeyError, UserError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(
            f"checkpoint {path}: weights do not match its config ({first}): "
            "the file was edited or mixed from two runs; retrain with `nilmbuild train`"
        ) from None
    model.eval()
    return Loaded(
        model=model,
        cfg=cfg,
        scalers=payload.get("scalers", {}),
        train_log=payload.get("train_log", {}),
        provenance=payload.get("provenance", {}),
        extra=payload.get("extra", {}),
        nilmbuild_version=payload.get("nilmbuild_version", "?"),
        path=str(path),
        fingerprint=bytes_fingerprint(path, data),
    )
