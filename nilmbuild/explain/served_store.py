"""The Why page's explanations stored with the checkpoint (`nilmbuild explain --store`), as `nilmbuild landscape`
stores the loss landscape: computed once per checkpoint, so a cold `nilmbuild site` does not run Captum.

The entry is ``extra["why"]`` of the checkpoint file: `served.explain_served`'s dict for one window (numpy arrays
as torch tensors, so the file still loads with `torch.load(weights_only=True)`), with what determines it:
- `version`: EXPLANATIONS_VERSION, an integer bumped by hand whenever a change to nilmbuild/explain (or to the
  model's forward pass) changes what `explain_served` returns. Not the code's fingerprint: every edit would
  invalidate the shipped entry. tests/test_explain_store.py recomputes the shipped entry and fails when the code
  and the entry disagree: then bump the version and run `nilmbuild explain --store` on the shipped checkpoint;
- `model_sha256`: the model it explains (config, scalers and weights; not the file's bytes, which the entry itself
  changes), so a checkpoint rewritten with other weights or gate thresholds (`nilmbuild calibrate` keeps `extra`)
  does not reuse it;
- `start` and `aggregate_sha256`: the served window (its start and its float32 watts' bytes);
- `settings`: the SiteSettings it was computed with.

`nilmbuild site` uses the entry only when all five match the window it serves (`stored_explanations`); else the
user's cache (served_cache.py), else it computes them.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict

import numpy as np
import torch

EXPLANATIONS_VERSION = 1
KEY = "why"


def window_sha256(aggregate_w) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(aggregate_w, dtype="<f4")).tobytes()).hexdigest()


def model_sha256(loaded) -> str:
    """sha256 of what the explained outputs depend on in a checkpoint: its architecture and config, its scalers and
    every weight (name, dtype, shape, bytes)."""
    import json

    h = hashlib.sha256()
    head = {"architecture": loaded.architecture, "config": loaded.cfg.to_dict(), "scalers": loaded.scalers}
    h.update(json.dumps(head, sort_keys=True, default=repr).encode())
    for name, t in sorted(loaded.model.state_dict().items()):
        t = t.detach().cpu().contiguous()
        h.update(f"\n{name} {t.dtype} {tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def identity(loaded, aggregate_w, start, settings) -> dict:
    """What an entry must match: the version, the model, the window and the settings."""
    return {
        "version": EXPLANATIONS_VERSION,
        "model_sha256": model_sha256(loaded),
        "start": str(np.datetime64(start, "s")),
        "aggregate_sha256": window_sha256(aggregate_w),
        "settings": asdict(settings),
    }


def to_stored(obj):
    """`obj` with every numpy array as a torch tensor and numpy scalars as Python numbers (weights_only loads it)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(obj))
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: to_stored(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_stored(v) for v in obj)
    return obj


def from_stored(obj):
    """The inverse of `to_stored`: tensors back to numpy arrays."""
    if isinstance(obj, torch.Tensor):
        return obj.numpy()
    if isinstance(obj, dict):
        return {k: from_stored(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(from_stored(v) for v in obj)
    return obj


def make_entry(loaded, served: dict, aggregate_w, start, settings) -> dict:
    return {**identity(loaded, aggregate_w, start, settings), "served": to_stored(served)}


def stored_explanations(loaded, aggregate_w, start, settings) -> dict | None:
    """The checkpoint's stored explanations of this window, or None when it has none or they are for another
    version, window or settings."""
    entry = (getattr(loaded, "extra", None) or {}).get(KEY)
    if not isinstance(entry, dict) or not isinstance(entry.get("served"), dict):
        return None
    if any(entry.get(k) != v for k, v in identity(loaded, aggregate_w, start, settings).items()):
        return None
    return from_stored(entry["served"])
