"""The capture cache: a rebuild with the same checkpoint, data and code reuses the capture instead of re-running it.

An entry is the pickled `Capture` of one example batch, stored as ``$XDG_CACHE_HOME/nilmbuild/captures/KEY.pkl``
(``~/.cache/nilmbuild/captures`` when XDG_CACHE_HOME is unset). KEY is a sha256 of everything the capture is a
function of:

- the checkpoint file's bytes;
- the example batch itself (x, y and window starts, bytes and shapes): the content of the data that goes in,
  whatever the source, its preprocessing or the seed that picked the windows;
- the capture settings (ablations, extra meta);
- the capture code: CODE_VERSION, the source text of nilmbuild/capture and nilmbuild/model, and the torch and
  numpy versions.

Entries are written atomically (temporary file in the same folder, then rename), so an interrupted build
leaves no half entry. `nilmbuild site --no-cache` neither reads nor writes the cache; `nilmbuild site
--clear-cache` (or ``rm -r ~/.cache/nilmbuild/captures``) empties it. Only files named *.pkl in that folder
are ever removed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from nilmbuild import pickle_store as store
from nilmbuild.provenance import PACKAGE_ROOT, code_fingerprint

#: Bump when the meaning of a cached Capture changes in a way the source hash below would not show.
CODE_VERSION = 1
_CODE_DIRS = ("capture", "model")


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/nilmbuild/captures, or ~/.cache/nilmbuild/captures."""
    return store.cache_home("captures")


def code_hash() -> str:
    """sha256 of the capture code: CODE_VERSION, nilmbuild/capture/, nilmbuild/model/, torch, numpy."""
    roots = [(d, PACKAGE_ROOT / d) for d in _CODE_DIRS]
    return code_fingerprint(roots, packages=("torch", "numpy"), salt=f"capture {CODE_VERSION}")


def _array_digest(h, a) -> None:
    a = np.asarray(a)
    if np.issubdtype(a.dtype, np.datetime64):
        a = a.astype("datetime64[s]").astype(np.int64)
    a = np.ascontiguousarray(a)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.tobytes())


def capture_key(checkpoint_sha256: str, x, y, t0, settings: dict) -> str:
    """The cache key of one capture (hex sha256); see the module doc for what goes in."""
    h = hashlib.sha256()
    h.update(f"checkpoint\t{checkpoint_sha256}\ncode\t{code_hash()}\n".encode())
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    for a in (x, y, t0):
        h.update(b"\x00" if a is None else b"\x01")
        if a is not None:
            _array_digest(h, a)
    return h.hexdigest()


def allowed() -> frozenset:
    """The classes an entry may name, where they are defined now (pickle_store refuses any other global)."""
    from nilmbuild.capture.records import Capture, CaptureRecord

    return frozenset((c.__module__, c.__qualname__) for c in (Capture, CaptureRecord))


def load(key: str, directory: Path | None = None):
    """The cached Capture for `key`, or None (absent, unreadable or refused: the caller captures afresh)."""
    from nilmbuild.capture.records import Capture

    entry = store.load(directory or cache_dir(), key, allowed())
    return entry if isinstance(entry, Capture) else None


def save(key: str, capture, directory: Path | None = None) -> Path | None:
    """Write `capture` atomically under `key`; None (and no entry) if the folder is not writable."""
    return store.save(directory or cache_dir(), key, capture)


def clear(directory: Path | None = None) -> int:
    """Remove every cache entry (*.pkl, and stale *.tmp files of ours) from the cache folder; return how many."""
    return store.clear(directory or cache_dir())
