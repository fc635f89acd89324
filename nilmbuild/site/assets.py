"""Reading and safely inlining the pieces of a page: our JS, GLSL, third-party JS from node_modules, blobs.

Everything ends up inside inline ``<script>`` elements, so every string that goes there is passed through
:func:`script_safe`, which makes ``</script`` and ``<!--`` harmless without changing what the JS means.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from nilmbuild.errors import UserError

#: Where templates/, static/ and node_modules/ live: the repository root in a checkout (and in editable
#: installs); in an installed wheel, the package's own copy `nilmbuild/_assets/` (written by setup.py's
#: build hook, with only the vendored files of VENDOR_FILES under node_modules/).
PACKAGED = Path(__file__).resolve().parents[1] / "_assets"
ROOT = PACKAGED if (PACKAGED / "templates").is_dir() else Path(__file__).resolve().parents[2]

#: Third-party scripts we inline: short name -> (npm package, file inside the package).
#: The UMD build of @msgpack/msgpack defines the global ``MessagePack``; regl defines ``createREGL``.
VENDOR_FILES: dict[str, tuple[str, str]] = {
    "regl": ("regl", "dist/regl.min.js"),
    "msgpack": ("@msgpack/msgpack", "dist.umd/msgpack.min.js"),
    # the live model's runtime (nilmbuild/live/runtime.py writes them into nilmbuild-runtime.js, never a page)
    "ort": ("onnxruntime-web", "dist/ort.wasm.min.js"),
    "ort-glue": ("onnxruntime-web", "dist/ort-wasm-simd-threaded.mjs"),
    "ort-wasm": ("onnxruntime-web", "dist/ort-wasm-simd-threaded.wasm"),
}

NPM_MISSING = "JS dependencies missing: run `npm ci` (or `make site`)"

_SCRIPT_CLOSE = re.compile(r"</(script)", re.IGNORECASE)
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)
_BLOB_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def script_safe(text: str) -> str:
    """Make ``text`` safe inside an inline ``<script>``: ``</script`` -> ``<\\/script``, ``<!--`` -> ``<\\!--``.

    Inside JS string literals, regex literals and comments (the only places these sequences occur in
    practice) the backslash escapes are no-ops, so the script means the same.
    """
    text = _SCRIPT_CLOSE.sub(lambda m: "<\\/" + m.group(1), text)
    return text.replace("<!--", "<\\!--")


def js_string(value: object) -> str:
    """A JSON literal that is safe inside an inline script (and a valid JS expression)."""
    s = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    # JSON allows "\/"; U+2028/2029 are already escaped by ensure_ascii.
    return s.replace("</", "<\\/").replace("<!--", "<\\u0021--")


@dataclass(frozen=True)
class VendorScript:
    name: str  # short name ("regl")
    package: str  # npm package name
    version: str  # from the package's package.json
    code: str  # the file, script-safe, source-map comment removed

    def html(self) -> str:
        return f"<script>/* {self.package} {self.version} (npm, inlined verbatim) */\n{self.code}\n</script>"


def node_modules(root: Path | None = None) -> Path:
    return (root or ROOT) / "node_modules"


def vendor_script(name: str, root: Path | None = None) -> VendorScript:
    """Read a third-party script from node_modules; :class:`UserError` if npm has not been run."""
    try:
        package, rel = VENDOR_FILES[name]
    except KeyError:
        raise UserError(f"unknown third-party script {name!r}; known: {', '.join(sorted(VENDOR_FILES))}") from None
    pkg_dir = node_modules(root) / package
    path = pkg_dir / rel
    if not path.is_file() or not (pkg_dir / "package.json").is_file():
        raise UserError(NPM_MISSING)
    version = json.loads((pkg_dir / "package.json").read_text(encoding="utf-8"))["version"]
    code = _SOURCE_MAP.sub("", path.read_text(encoding="utf-8")).rstrip()
    return VendorScript(name, package, version, script_safe(code))


def read_js(name: str, root: Path | None = None) -> str:
    """One of our scripts from static/js (``name`` like ``"core.js"`` or ``"core"``)."""
    if not name.endswith(".js"):
        name += ".js"
    path = (root or ROOT) / "static" / "js" / name
    if not path.is_file():
        raise UserError(f"{path}: no such JS module; check the page's js_modules")
    return path.read_text(encoding="utf-8")


def read_shader(name: str, root: Path | None = None) -> str:
    path = (root or ROOT) / "static" / "glsl" / name
    if not path.is_file():
        raise UserError(f"{path}: no such shader; check the page's shaders")
    return path.read_text(encoding="utf-8")


def read_css(root: Path | None = None) -> str:
    return ((root or ROOT) / "static" / "css" / "site.css").read_text(encoding="utf-8")


def bundle(js_modules: list[str], shaders: list[str], data: dict, root: Path | None = None) -> str:
    """Our JS for one page as one script body: core.js first, then the declared modules in order, then the
    shaders (``NB.shaders[name] = "..."``) and page data (``NB.page``)."""
    names = ["core.js"] + [m if m.endswith(".js") else m + ".js" for m in js_modules]
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    parts = [f"/* ---- static/js/{n} ---- */\n{read_js(n, root).rstrip()}\n" for n in seen]
    for s in shaders:
        parts.append(f"NB.shaders[{js_string(s)}] = {js_string(read_shader(s, root))};\n")
    parts.append(f"NB.page = {js_string(data)};\n")
    return script_safe("".join(parts))


def blob_html(name: str, payload: bytes) -> str:
    """``<script type="application/octet-stream" id="nb-blob-NAME">BASE64</script>`` (base64 never contains '<')."""
    if not _BLOB_NAME.match(name):
        raise UserError(f"blob name {name!r}: use letters, digits, '.', '_' or '-' only")
    b64 = base64.b64encode(bytes(payload)).decode("ascii")
    return f'<script type="application/octet-stream" id="nb-blob-{name}">{b64}</script>'


def json_script(element_id: str, value: object) -> str:
    """``<script type="application/json" id=ID>JSON</script>`` (script-safe)."""
    return f'<script type="application/json" id="{element_id}">{js_string(value)}</script>'


def esbuild_bundle(entry: str, root: Path | None = None) -> str:
    """An ES-module entry in static/js bundled by esbuild (npm devDependency) into one IIFE, script-safe."""
    import subprocess
    import tempfile

    root = root or ROOT
    exe = root / "node_modules" / ".bin" / "esbuild"
    if not exe.exists():
        raise UserError("esbuild missing from node_modules: run `npm ci` (or `make site`)")
    with tempfile.TemporaryDirectory(prefix="nilmbuild-esbuild-") as tmp:
        out = Path(tmp) / "out.js"
        r = subprocess.run([str(exe), f"static/js/{entry}", "--bundle", "--format=iife", "--target=es2020",
                            "--minify-whitespace", "--log-level=error", f"--outfile={out}"],
                           cwd=root, capture_output=True, text=True)
        if r.returncode != 0:
            raise UserError(f"esbuild could not bundle {entry}: {r.stderr.strip()}")
        return script_safe(out.read_text(encoding="utf-8"))
