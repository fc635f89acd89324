"""A small on-disk cache for the live model's slow build products (ONNX export, gzipped runtime wasm).

Files live in $NILMBUILD_CACHE/live (default ~/.cache/nilmbuild/live), named by a content key that covers
every input, so a stale entry is never read; writes are atomic.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("NILMBUILD_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "nilmbuild"
    )
    return Path(base) / "live"


def cached(name: str, make: Callable[[], bytes]) -> bytes:
    """The bytes stored under `name`, or make() them and store them."""
    path = cache_dir() / name
    if path.is_file():
        return path.read_bytes()
    data = make()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home only costs the next build the time again
    return data
