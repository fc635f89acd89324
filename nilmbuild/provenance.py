"""Identity, at the bottom of the house: where nilmbuild's files are, and the fingerprints that name a checkpoint
and the code that works on it.

- `PACKAGE_ROOT`, `ASSET_ROOT` (templates/, static/, node_modules/: the repository root in a checkout, the
  package's `_assets/` in an installed wheel) and `default_checkpoint_path()` are defined here and nowhere else.
- `checkpoint_fingerprint(path)`: the sha256 of a checkpoint file's bytes, computed once per process and file
  version (`load_checkpoint` hands the bytes it read to `bytes_fingerprint`, and a `Loaded` carries the result as
  `.fingerprint`); the site, capture and live-graph caches key off it.
- `code_fingerprint(roots, packages=...)`: the one helper that hashes code (files and package versions) for a cache
  key.

Imports nothing of nilmbuild, so every floor can use it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent
#: An installed wheel's copy of templates/, static/ and the prebundled JS (written by setup.py's build hook).
PACKAGED_ASSETS = PACKAGE_ROOT / "_assets"
ASSET_ROOT = PACKAGED_ASSETS if (PACKAGED_ASSETS / "templates").is_dir() else PACKAGE_ROOT.parent

_FINGERPRINTS: dict[tuple, str] = {}  # file identity (stat) -> sha256 hex
_LOCK = threading.Lock()


def default_checkpoint_path() -> Path:
    """The checkpoint shipped inside the package (trained on the built-in simulator)."""
    return PACKAGE_ROOT / "checkpoints" / "default.pt"


def checkpoint_file(checkpoint: str | os.PathLike | None) -> Path:
    """The checkpoint a command loads: the one given, or the shipped one."""
    return Path(checkpoint) if checkpoint is not None else default_checkpoint_path()


def _identity(path: Path) -> tuple:
    """What changes whenever a file's bytes may have changed (a rewrite changes ctime, a rename the inode)."""
    st = path.stat()
    return (str(path.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def bytes_fingerprint(path: str | os.PathLike, data: bytes) -> str:
    """sha256 hex of `data`, the bytes just read from `path`; remembered for `checkpoint_fingerprint(path)`."""
    ident = _identity(Path(path))
    with _LOCK:
        known = _FINGERPRINTS.get(ident)
    if known is None:
        known = hashlib.sha256(data).hexdigest()
        with _LOCK:
            _FINGERPRINTS[ident] = known
    return known


def checkpoint_fingerprint(path: str | os.PathLike) -> str:
    """sha256 hex of a checkpoint file's bytes, read and hashed once per process while the file is unchanged.
    Raises OSError when the file cannot be read."""
    path = Path(path)
    ident = _identity(path)
    with _LOCK:
        known = _FINGERPRINTS.get(ident)
    return known if known is not None else bytes_fingerprint(path, path.read_bytes())


def _files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def package_version(name: str) -> str:
    """The installed version of a Python package, or "none"."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


def code_fingerprint(roots: Iterable[tuple[str, Path]], *, packages: Iterable[str] = (), salt: str = "") -> str:
    """sha256 hex of code: for each (label, path) of `roots` (a file, or a folder walked recursively without
    __pycache__), every file's label/relative path and bytes; plus `salt` and the installed versions of `packages`.
    A missing path counts as empty."""
    h = hashlib.sha256(f"{salt}\n".encode())
    for name in packages:
        h.update(f"{name}={package_version(name)}\n".encode())
    for label, root in roots:
        root = Path(root)
        for f in _files(root):
            rel = f.relative_to(root).as_posix() if f != root else f.name
            h.update(f"{label}/{rel}\t".encode() + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()
