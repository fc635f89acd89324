"""The site cache: `nilmbuild site` with every input unchanged writes the files it rendered last time, without
importing torch, loading the data or capturing. (When only the page code changed, the capture cache,
nilmbuild.capture.cache, still saves the capture.)

An entry is ``$XDG_CACHE_HOME/nilmbuild/sites/KEY.pkl`` (``~/.cache/nilmbuild/sites``): the rendered files
(relative path -> bytes) and the data signature they were made from. KEY is a sha256 of

- the checkpoint file's bytes (the shipped checkpoint when --checkpoint is not given);
- the command's arguments that choose data and pages: --source as given (none: the checkpoint's own), --house,
  --start/--end, --seed, --unit, --pages;
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
from pathlib import Path

from nilmbuild import pickle_store as store
from nilmbuild import provenance
from nilmbuild.provenance import ASSET_ROOT, PACKAGE_ROOT, checkpoint_file

#: Bump when an entry's meaning changes in a way the code hash would not show.
CODE_VERSION = 1
PACKAGES = ("torch", "numpy", "pandas", "onnx", "onnxruntime", "msgpack", "jinja2")


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/nilmbuild/sites, or ~/.cache/nilmbuild/sites."""
    return store.cache_home("sites")


def code_hash() -> str:
    """sha256 of everything a page is made by: the package's files, templates, static assets, the npm lock, and
    the versions of the Python packages in PACKAGES."""
    roots = [("nilmbuild", PACKAGE_ROOT)]
    for sub in ("templates", "static"):  # in a checkout; an installed wheel has them in the package (_assets)
        if PACKAGE_ROOT not in (ASSET_ROOT / sub).resolve().parents:
            roots.append((sub, ASSET_ROOT / sub))
    roots.append(("package-lock", ASSET_ROOT / "package-lock.json"))
    return provenance.code_fingerprint(roots, packages=PACKAGES, salt=f"site {CODE_VERSION}")


def site_key(checkpoint: str | None, args: dict) -> str | None:
    """The entry key for this checkpoint (--checkpoint, or the shipped one) and these command arguments; None when
    the checkpoint is unreadable (the build then reports it as usual)."""
    try:
        digest = provenance.checkpoint_fingerprint(checkpoint_file(checkpoint))
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
