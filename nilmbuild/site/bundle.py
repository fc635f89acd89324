"""Bundle a page's ES modules into one script with esbuild (npm), or read the bundle shipped in the wheel.

Every page has one entry module in static/js (``page_SLUG.js``) that imports what it needs (our modules,
GLSL from static/glsl as text, regl and @msgpack/msgpack from node_modules) and calls ``registerPage``.
esbuild turns it into one IIFE script (deterministic: same inputs and esbuild version -> same bytes), which
the page inlines. Two sources, one result:

* a checkout with ``node_modules/.bin/esbuild`` (``npm ci``): bundled now, from the files as they are;
* an installed wheel (no Node.js): ``_assets/bundles/ENTRY``, written by setup.py with :func:`bundle`
  when the wheel was built.

This module imports nothing from nilmbuild, so setup.py can load it by path at wheel-build time.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

#: esbuild options for every page: one IIFE, text shaders, whitespace-minified (names kept; the pages'
#: size is mostly blobs), no source map, ES2020 (what the pages' Chromium and every current browser run).
ESBUILD_ARGS = (
    "--bundle",
    "--format=iife",
    "--target=es2020",
    "--charset=utf8",
    "--minify-whitespace",
    "--legal-comments=inline",
    "--loader:.vert=text",
    "--loader:.frag=text",
    "--log-level=error",
)

BUNDLES = "bundles"  # folder of prebuilt bundles inside the wheel's _assets/


class BundleError(Exception):
    """esbuild failed or is missing; the message says what to do."""


def esbuild(root: Path) -> Path | None:
    """The esbuild binary npm installed under root/node_modules, or None."""
    exe = root / "node_modules" / ".bin" / ("esbuild.cmd" if os.name == "nt" else "esbuild")
    return exe if exe.exists() else None


def entry_path(root: Path, entry: str | os.PathLike) -> Path:
    """``"page_attention.js"`` -> root/static/js/page_attention.js; a path with a folder is taken relative to root."""
    p = Path(entry)
    return p if p.is_absolute() else (root / p if len(p.parts) > 1 else root / "static" / "js" / p)


def _packages(inputs: list[str], root: Path) -> list[str]:
    """'name version' of every npm package whose files went into the bundle (from esbuild's metafile)."""
    found = {}  # name -> its folder, relative to root
    for rel in inputs:
        parts = Path(rel).parts  # node_modules/x/... (or ../elsewhere/node_modules/x/... through a symlink)
        if "node_modules" in parts[:-1]:
            i = parts.index("node_modules")
            n = 2 if parts[i + 1].startswith("@") else 1
            found.setdefault("/".join(parts[i + 1 : i + 1 + n]), Path(*parts[: i + 1 + n]))
    out = []
    for name, folder in sorted(found.items()):
        meta = json.loads((root / folder / "package.json").read_text(encoding="utf-8"))
        out.append(f"{name} {meta['version']}")
    return out


def bundle(root: Path, entry: str | os.PathLike) -> str:
    """Bundle one entry module with esbuild (run in root, so paths in the output are relative to it)."""
    exe = esbuild(root)
    if exe is None:
        raise BundleError("esbuild missing: run `npm ci` (or `make site`)")
    src = entry_path(root, entry)
    if not src.is_file():
        raise BundleError(f"{src}: no such page script")
    with tempfile.TemporaryDirectory(prefix="nilmbuild-esbuild-") as tmp:
        out, meta = Path(tmp) / "out.js", Path(tmp) / "meta.json"
        rel = os.path.relpath(src, root)
        r = subprocess.run(
            [str(exe), rel, *ESBUILD_ARGS, f"--outfile={out}", f"--metafile={meta}"],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise BundleError(f"esbuild could not bundle {rel}: {r.stderr.strip()}")
        code = out.read_text(encoding="utf-8")
        inputs = sorted(json.loads(meta.read_text(encoding="utf-8"))["inputs"])
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True).stdout.strip()
    npm = ", ".join(_packages(inputs, root)) or "none"
    head = f"/* {Path(rel).as_posix()} bundled by esbuild {version}; npm packages: {npm} */\n"
    return head + code


def prebuilt(root: Path, entry: str | os.PathLike) -> str | None:
    """The bundle shipped in the wheel for a page entry of static/js, or None."""
    p = Path(entry)
    if len(p.parts) > 1:
        return None
    path = root / BUNDLES / p.name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def page_entries(root: Path) -> list[str]:
    """Every page's entry module in static/js (what the wheel prebuilds)."""
    return sorted(p.name for p in (root / "static" / "js").glob("page_*.js"))


def write_prebuilt(root: Path, dest: Path) -> list[Path]:
    """Bundle every page entry of root into dest/bundles/ (setup.py, at wheel-build time)."""
    (dest / BUNDLES).mkdir(parents=True, exist_ok=True)
    written = []
    for name in page_entries(root):
        path = dest / BUNDLES / name
        path.write_text(bundle(root, name), encoding="utf-8")
        written.append(path)
    return written
