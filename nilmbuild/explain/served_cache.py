"""The Why page's explanations, cached like the capture (nilmbuild/capture/cache.py): a rebuild with the same
checkpoint, window and code reuses them instead of running Captum again. A checkpoint that stores them for the
served window (`nilmbuild explain --store`, served_store.py; the shipped one does) is used before this cache.

An entry is `served.explain_served`'s dict (numpy arrays, lists, numbers: nothing else unpickles), stored as
``$XDG_CACHE_HOME/nilmbuild/explanations/KEY.pkl``. KEY is a sha256 of the checkpoint's fingerprint, the window
(its watts and start), the site settings and the code it runs: nilmbuild/explain and nilmbuild/model, and the
torch, captum and numpy versions. `nilmbuild site --no-cache` neither reads nor writes it; `--clear-cache` empties it.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path

import numpy as np

from nilmbuild import pickle_store as store
from nilmbuild.provenance import PACKAGE_ROOT, code_fingerprint

CODE_VERSION = 1


def cache_dir() -> Path:
    return store.cache_home("explanations")


def key(fingerprint: str, aggregate_w, start, settings) -> str:
    """The entry's key (hex sha256); see the module doc for what goes in."""
    code = code_fingerprint(
        [(d, PACKAGE_ROOT / d) for d in ("explain", "model")],
        packages=("torch", "captum", "numpy"),
        salt=f"explanations {CODE_VERSION}",
    )
    h = hashlib.sha256(f"checkpoint\t{fingerprint}\ncode\t{code}\nstart\t{np.datetime64(start, 's')}\n".encode())
    h.update(repr(sorted(asdict(settings).items())).encode())
    h.update(np.ascontiguousarray(np.asarray(aggregate_w, dtype="<f4")).tobytes())
    return h.hexdigest()


def cached_explain(loaded, aggregate_w, start, *, cache: bool = True, settings=None) -> dict:
    """served.explain_served(loaded, aggregate_w, start): the checkpoint's stored entry when it is for this window
    (served_store.py; whatever `cache` says: it is part of the checkpoint, not a cache), else the same dict from
    the cache, else computed."""
    from .served import SITE, explain_served
    from .served_store import stored_explanations

    settings = settings or SITE
    stored = stored_explanations(loaded, aggregate_w, start, settings)
    if stored is not None:
        return stored
    if not cache or not loaded.fingerprint:
        return explain_served(loaded, aggregate_w, start, settings)
    k = key(loaded.fingerprint, aggregate_w, start, settings)
    entry = store.load(cache_dir(), k)
    if isinstance(entry, dict):
        return entry
    entry = explain_served(loaded, aggregate_w, start, settings)
    store.save(cache_dir(), k, entry)
    return entry


def clear(directory: Path | None = None) -> int:
    return store.clear(directory or cache_dir())
