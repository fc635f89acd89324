"""Nothing private in published pages: data sources and checkpoints are named by file or folder name plus a
content hash, never by the builder's local path.

A source given as ``csv:/home/me/data/house65`` is shown as ``csv:house65 (sha256 1f2e3d4c5b6a)``, the way the
checkpoint is shown as ``default.pt (sha256 ...)``. :func:`scrub` applies these names to anything that goes
into a page (provenance, training config, the capture's meta), and replaces any other absolute path it finds
(for example in a recorded command line) by its last component.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

#: Data files a source folder may hold (what the loaders read); others do not change the data's hash.
DATA_SUFFIXES = (".csv", ".gz", ".dat")

#: An absolute POSIX path with at least one folder (/home/me/x.csv, /tmp/a/), ~/..., or a Windows C:\... path.
_ABS_PATH = re.compile(r"(?<![\w.~/-])(?:~|[A-Za-z]:)?[/\\](?:[^\s/\\'\",;:=()\[\]{}]+[/\\])+[^\s/\\'\",;:=()\[\]{}]*")


def content_hash(path: str | Path, digits: int = 12) -> str | None:
    """sha256 of a file's bytes, or of a folder's data files (names and bytes, in name order); None if absent."""
    p = Path(path).expanduser()
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in DATA_SUFFIXES)
        house = sorted(d for d in p.iterdir() if d.is_dir())
        if not files and house:  # a dataset root (house_N/ folders): hash what is inside them
            files = sorted(f for d in house for f in d.iterdir() if f.is_file() and f.suffix in DATA_SUFFIXES)
    else:
        return None
    h = hashlib.sha256()
    for f in files:
        fh = hashlib.sha256()
        with open(f, "rb") as fp:
            for chunk in iter(lambda: fp.read(1 << 20), b""):
                fh.update(chunk)
        h.update(f"{f.relative_to(p) if f != p else f.name}\t{fh.hexdigest()}\n".encode())
    return h.hexdigest()[:digits]


def source_label(spec: str) -> str:
    """'csv:/home/me/data/house65' -> 'csv:house65 (sha256 1f2e3d4c5b6a)'; 'synthetic' stays as it is."""
    kind, sep, rest = str(spec).partition(":")
    if not sep or not rest or len(kind) == 1:  # synthetic, or a bare (Windows) path
        return str(spec) if not _ABS_PATH.search(str(spec)) else public_path(str(spec))
    p = Path(rest).expanduser()
    name = p.resolve().name if rest.strip(" /\\.") == "" or p.name in ("", ".", "..") else p.name
    digest = content_hash(p)
    return f"{kind}:{name}" + (f" (sha256 {digest})" if digest else "")


def public_path(text: str) -> str:
    """Replace every absolute path in `text` by its last component ('/home/me/runs/m.pt' -> 'm.pt')."""

    def last(m: re.Match) -> str:
        parts = [s for s in re.split(r"[/\\]", m.group(0)) if s]
        return parts[-1] if parts else m.group(0)

    return _ABS_PATH.sub(last, text)


def scrub(obj, replace: dict[str, str] | None = None):
    """A copy of a JSON-like `obj` (dicts, lists, strings, numbers) in which every string has the `replace`
    keys (longest first) replaced by their values, then any remaining absolute path reduced to its last part."""
    pairs = sorted(((k, v) for k, v in (replace or {}).items() if k), key=lambda kv: -len(kv[0]))

    def s(x):
        if isinstance(x, str):
            for k, v in pairs:
                if k in x:
                    x = x.replace(k, v)
            return public_path(x)
        if isinstance(x, dict):
            return {s(k) if isinstance(k, str) else k: s(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(s(v) for v in x)
        return x

    return s(obj)


def source_replacements(spec: str | None) -> dict[str, str]:
    """The spellings of a source spec (as given, with its path absolute) -> its public label."""
    if not spec or ":" not in spec:
        return {}
    kind, _, rest = spec.partition(":")
    label = source_label(spec)
    out = {spec: label}
    try:
        out[f"{kind}:{Path(rest).expanduser().resolve()}"] = label
    except OSError:
        pass
    return out
