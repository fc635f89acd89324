"""Folders of pickled cache entries (KEY.pkl) under $XDG_CACHE_HOME/nilmbuild (default ~/.cache/nilmbuild).

Used by the capture cache (nilmbuild.capture.cache) and the site cache (nilmbuild.site.site_cache): entries are
written atomically (a temporary file in the same folder, then a rename), an unreadable entry reads as absent, and
clearing removes only the *.pkl entries (and stale temporary files) of the folder.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from pathlib import Path

SUFFIX = ".pkl"


def cache_home(name: str) -> Path:
    """$XDG_CACHE_HOME/nilmbuild/NAME, or ~/.cache/nilmbuild/NAME."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nilmbuild" / name


def load(directory: Path, key: str):
    """The object stored under `key`, or None (absent or unreadable: the caller makes it afresh)."""
    try:
        with open(directory / f"{key}{SUFFIX}", "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        return None


def save(directory: Path, key: str, obj) -> Path | None:
    """Write `obj` atomically under `key`; None (and no entry) if the folder is not writable."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, directory / f"{key}{SUFFIX}")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return None
    return directory / f"{key}{SUFFIX}"


def clear(directory: Path) -> int:
    """Remove every entry (*.pkl, and stale *.tmp files of ours) from `directory`; return how many."""
    if not directory.is_dir():
        return 0
    n = 0
    for f in sorted(directory.glob(f"*{SUFFIX}")) + sorted(directory.glob(".*.tmp")):
        if f.is_file() and not f.is_symlink():
            f.unlink()
            n += 1
    return n
