"""The shared runtime file `nilmbuild-runtime.js` that pages carrying the live model load once, on demand.

It holds onnxruntime-web's wasm build from node_modules (npm lockfile): the classic `ort.wasm.min.js`
concatenated with our worker (static/js/live_worker.js) as the worker's source text, the emscripten glue
`.mjs` as text, and the `.wasm` gzipped (deterministically) as base64, so nothing is fetched at run time:
the page turns the worker source into a Blob URL and posts the glue and wasm to it. Loading it with a classic
`<script src>` works from file://, on GitHub Pages and inside an iframe (docs/live-model.md).
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from concurrent.futures import Future
from pathlib import Path

from nilmbuild.errors import UserError
from nilmbuild.threads import start_once

RUNTIME_FILE = "nilmbuild-runtime.js"
PACKAGE = "onnxruntime-web"
ORT_JS = "dist/ort.wasm.min.js"
GLUE = "dist/ort-wasm-simd-threaded.mjs"
WASM = "dist/ort-wasm-simd-threaded.wasm"
FILES = ("package.json", ORT_JS, GLUE, WASM)  # what setup.py copies into the wheel


def _read(root: Path, rel: str) -> bytes:
    path = root / "node_modules" / PACKAGE / rel
    if not path.is_file():
        path = root / PACKAGE / rel  # an installed wheel's _assets/ (setup.py copy_live_runtime)
    if not path.is_file():
        raise UserError("onnxruntime-web missing from node_modules: run `npm ci` (or `make site`)")
    return path.read_bytes()


@functools.lru_cache(maxsize=2)  # five pages of a site carry it: read and encode it once per build
def runtime_script(root: Path) -> bytes:
    """The runtime file's bytes (deterministic for the same node_modules and worker source)."""
    import re

    version = json.loads(_read(root, "package.json"))["version"]
    ort_js = re.sub(r"^//# sourceMappingURL=.*$", "", _read(root, ORT_JS).decode("utf-8"), flags=re.M)
    worker = ort_js + "\n" + (root / "static" / "js" / "live_worker.js").read_text(encoding="utf-8")
    wasm = base64.b64encode(gzipped_wasm(root)).decode("ascii")
    payload = {"version": version, "worker": worker, "glue": _read(root, GLUE).decode("utf-8")}
    head = (
        f"/* nilmbuild live-model runtime: {PACKAGE} {version} (npm, MIT licence), wasm build, inlined "
        f"verbatim; loaded once by the pages that run the model (docs/live-model.md) */\n"
    )
    body = json.dumps(payload, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return (head + f'self.nilmbuildRuntime = Object.assign({body}, {{wasmGzipBase64: "{wasm}"}});\n').encode("ascii")


_GZIPPED: dict[Path, Future] = {}  # root -> its gzipped wasm, made once per process in a thread


# zlib level of the gzipped wasm: 6 takes 0.78 s of a core for 3.669 MB, 9 took 1.14 s for 3.653 MB (+0.4 %), on a
# build's 2 cores, where this thread runs beside the capture
WASM_GZIP_LEVEL = 6


def prefetch_gzipped_wasm(root: Path) -> Future:
    """Start gzipping root's wasm in a thread, once per process, so that its ~0.8 s of zlib (which releases the GIL)
    overlaps the capture on the other core. A missing runtime is reported when gzipped_wasm reads the result."""
    return start_once(_GZIPPED, root, "wasm-gzip", _gzipped_wasm, root)


def gzipped_wasm(root: Path) -> bytes:
    """The runtime .wasm, gzipped (14 MB -> 3.7 MB; ~0.8 s of an idle core, so also cached on disk)."""
    return prefetch_gzipped_wasm(root).result()


def _gzipped_wasm(root: Path) -> bytes:
    import hashlib

    from nilmbuild.live.cache import cached

    raw = _read(root, WASM)
    key = hashlib.sha256(raw).hexdigest()[:24]
    return cached(
        f"{key}-z{WASM_GZIP_LEVEL}.wasm.gz", lambda: gzip.compress(raw, compresslevel=WASM_GZIP_LEVEL, mtime=0)
    )
