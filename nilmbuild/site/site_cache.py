"""The site cache: `nilmbuild site` with every input unchanged writes the files it rendered last time, without
importing torch, loading the data or capturing. (When only the page code changed, the capture cache,
nilmbuild.capture.cache, still saves the capture.)

An entry is ``$XDG_CACHE_HOME/nilmbuild/sites/KEY.pkl`` (``~/.cache/nilmbuild/sites``): the rendered files
(relative path -> bytes) and the data signature they were made from. KEY is a sha256 of

- the checkpoint file's bytes (the shipped checkpoint when --checkpoint is not given);
- the command's arguments that choose data and pages: --source as given (none: the checkpoint's own), --house,
  --seed, --unit, --pages;
- the code: every file of the nilmbuild package, templates/ and static/, package-lock.json, and the versions of
  the packages the build computes, exports or encodes with.

The data is checked, not hashed into the key: the entry keeps the source the build read (resolved from the
checkpoint when --source was not given) with the relative path, size and modification time of every file under
its path, and an entry is used only while they are the same. The simulator has no files: its data is a function
of the checkpoint (days, seed) and the code. Writes are atomic; `--no-cache` neither reads nor writes entries;
`--clear-cache` removes them (only *.pkl files of this folder).
"""

from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

import nilmbuild
from nilmbuild import pickle_store as store
from nilmbuild.site import assets

#: Bump when an entry's meaning changes in a way the code hash would not show.
CODE_VERSION = 1
PACKAGES = ("torch", "numpy", "pandas", "onnx", "onnxruntime", "msgpack", "jinja2")
PACKAGE_ROOT = Path(nilmbuild.__file__).resolve().parent


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/nilmbuild/sites, or ~/.cache/nilmbuild/sites."""
    return store.cache_home("sites")


def _hash_tree(h, root: Path, label: str) -> None:
    if not root.is_dir():
        return
    for f in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(f"{label}/{f.relative_to(root).as_posix()}\t".encode() + hashlib.sha256(f.read_bytes()).digest())


def code_hash() -> str:
    """sha256 of everything a page is made by: the package's files, templates, static assets, the npm lock, and
    the versions of the Python packages in PACKAGES."""
    h = hashlib.sha256(f"{CODE_VERSION}\n".encode())
    for name in PACKAGES:
        try:
            h.update(f"{name}={metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=none\n".encode())
    _hash_tree(h, PACKAGE_ROOT, "nilmbuild")
    for sub in ("templates", "static"):  # in a checkout; an installed wheel has them in the package (_assets)
        if PACKAGE_ROOT not in (assets.ROOT / sub).resolve().parents:
            _hash_tree(h, assets.ROOT / sub, sub)
    lock = assets.ROOT / "package-lock.json"
    if lock.is_file():
        h.update(b"package-lock\t" + hashlib.sha256(lock.read_bytes()).digest())
    return h.hexdigest()


def checkpoint_file(checkpoint: str | None) -> Path:
    """The checkpoint `nilmbuild site` loads: --checkpoint, or the shipped one (model.checkpoint's default)."""
    return Path(checkpoint) if checkpoint is not None else PACKAGE_ROOT / "checkpoints" / "default.pt"


def site_key(checkpoint: str | None, args: dict) -> str | None:
    """The entry key for this checkpoint and these command arguments; None when the checkpoint is unreadable
    (the build then reports it as usual)."""
    try:
        digest = hashlib.sha256(checkpoint_file(checkpoint).read_bytes()).hexdigest()
    except OSError:
        return None
    h = hashlib.sha256(f"checkpoint\t{digest}\ncode\t{code_hash()}\n".encode())
    h.update(repr(sorted(args.items())).encode())
    return h.hexdigest()


def data_signature(source: str) -> list:
    """[source, [(relative path, size, mtime_ns) of every file under its path]]; a source without a path (the
    simulator) has no files."""
    _, sep, rest = source.partition(":")
    if not sep:
        return [source, []]
    path = Path(rest)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    stats = []
    for f in files:
        st = f.stat()
        stats.append((f.relative_to(path).as_posix() if f != path else f.name, st.st_size, st.st_mtime_ns))
    return [source, stats]


def load(key: str, directory: Path | None = None) -> dict[str, bytes] | None:
    """The files cached under `key`, if the data they were made from is unchanged; else None."""
    entry = store.load(directory or cache_dir(), key)
    try:
        return entry["files"] if data_signature(entry["data"][0]) == entry["data"] else None
    except (KeyError, TypeError, IndexError, OSError):
        return None


def save(key: str, files: dict[str, bytes], source: str, directory: Path | None = None) -> Path | None:
    """Write the entry atomically; None (and no entry) if the folder is not writable."""
    return store.save(directory or cache_dir(), key, {"files": files, "data": data_signature(source)})


def clear(directory: Path | None = None) -> int:
    """Remove every entry (*.pkl) of the site cache; return how many."""
    return store.clear(directory or cache_dir())
