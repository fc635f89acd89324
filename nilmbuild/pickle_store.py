"""Folders of pickled cache entries (KEY.pkl) under $XDG_CACHE_HOME/nilmbuild (default ~/.cache/nilmbuild).

Used by the capture cache (nilmbuild.capture.cache) and the site cache (nilmbuild.site.site_cache): entries are
written atomically (a temporary file in the same folder, then a rename), an unreadable entry reads as absent, and
clearing removes only the *.pkl entries (and stale temporary files) of the folder.

Reading an entry never runs code from it: anyone who can write into the cache folder could otherwise make the
next build run theirs. The unpickler resolves no global except the ones a caller allows (its own dataclasses) and
the numpy array constructors (`ARRAY_GLOBALS`); plain containers, strings, bytes and numbers need none. An entry
that asks for anything else is refused with one line on stderr and read as absent (the caller then rebuilds and
overwrites it).
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import tempfile
from pathlib import Path

SUFFIX = ".pkl"

#: What numpy arrays, dtypes and scalars pickle as (numpy 2 writes numpy._core, numpy 1 numpy.core): constructors
#: from bytes, shapes and dtypes that run nothing else.
ARRAY_GLOBALS = frozenset(
    (mod, name)
    for core in ("numpy._core", "numpy.core")
    for mod, name in (
        (f"{core}.multiarray", "_reconstruct"),
        (f"{core}.multiarray", "scalar"),
        (f"{core}.numeric", "_frombuffer"),
    )
) | {("numpy", "ndarray"), ("numpy", "dtype")}


class Refused(pickle.UnpicklingError):
    """An entry that names a global outside the allowed set."""


class _Restricted(pickle.Unpickler):
    def __init__(self, f, allowed: frozenset):
        super().__init__(f)
        self.allowed = allowed

    def find_class(self, module: str, name: str):
        if (module, name) in self.allowed or (module, name) in ARRAY_GLOBALS:
            return super().find_class(module, name)
        raise Refused(f"{module}.{name}")


def loads(data: bytes, allowed=frozenset()):
    """Unpickle `data`, resolving only ARRAY_GLOBALS and `allowed` ((module, name) pairs); Refused otherwise."""
    return _Restricted(io.BytesIO(data), frozenset(allowed)).load()


def cache_home(name: str) -> Path:
    """$XDG_CACHE_HOME/nilmbuild/NAME, or ~/.cache/nilmbuild/NAME."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nilmbuild" / name


def load(directory: Path, key: str, allowed=frozenset()):
    """The object stored under `key`, or None (absent, unreadable, or refused: the caller makes it afresh).
    allowed: the (module, name) globals the entry may name besides numpy's arrays (the caller's classes)."""
    path = directory / f"{key}{SUFFIX}"
    try:
        return loads(path.read_bytes(), allowed)
    except Refused as e:
        print(f"nilmbuild: ignored cache entry {path}: it names {e}, which no entry of ours holds", file=sys.stderr)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
        pass
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
