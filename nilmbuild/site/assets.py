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
}

NPM_MISSING = "JS dependencies missing: run `npm ci` (or `make site`)"

_SCRIPT_CLOSE = re.compile(r"</(script)", re.IGNORECASE)
_SOURCE_MAP = re.compile(r"^//# sourceMappingURL=.*$", re.MULTILINE)
_BLOB_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")

#: ES modules every page gets after core.js (URL-fragment state, the iframe height message; docs/embedding.md).
EMBED_MODULES = ("url_state.js", "embed_height.js")
_ESM_IMPORT = re.compile(r'^import \{([^}]*)\} from "\./([A-Za-z0-9_]+)\.js";\s*$', re.MULTILINE)
_ESM_EXPORT = re.compile(r"^export (?:async )?(?:function\*?|const|let|class) ([A-Za-z_$][\w$]*)", re.MULTILINE)


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


def module_namespace(name: str) -> str:
    """``NB`` property an ES module's exports get in a classic page script: embed_height.js -> embedHeight."""
    head, *rest = Path(name).stem.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def esm_as_script(name: str, source: str) -> str:
    """An ES module of ours (``export function ...``, ``import {a} from "./x.js"``) as a classic script: its body
    in a function scope, imports read from ``NB.<namespace>``, exports put on ``NB.<namespace>``. Files without
    ``export`` are returned unchanged. (A bridge until the pages are bundled as modules.)"""
    exports = _ESM_EXPORT.findall(source)
    if not exports:
        return source

    def imported(m: re.Match) -> str:
        ns = module_namespace(m.group(2))
        return "".join(f"var {n.strip()} = NB.{ns}.{n.strip()};" for n in m.group(1).split(",") if n.strip())

    body = _ESM_IMPORT.sub(imported, source)
    body = re.sub(r"^export (?=(?:async )?(?:function|const|let|class) )", "", body, flags=re.MULTILINE)
    names = ", ".join(f"{n}: {n}" for n in exports)
    return (f"(function () {{\nvar NB = (window.NB = window.NB || {{}});\n{body.rstrip()}\n"
            f"NB.{module_namespace(name)} = {{ {names} }};\n}})();")


def read_shader(name: str, root: Path | None = None) -> str:
    path = (root or ROOT) / "static" / "glsl" / name
    if not path.is_file():
        raise UserError(f"{path}: no such shader; check the page's shaders")
    return path.read_text(encoding="utf-8")


def read_css(root: Path | None = None) -> str:
    return ((root or ROOT) / "static" / "css" / "site.css").read_text(encoding="utf-8")


def bundle(js_modules: list[str], shaders: list[str], data: dict, root: Path | None = None) -> str:
    """Our JS for one page as one script body: core.js and EMBED_MODULES first, then the declared modules in order
    (ES modules through :func:`esm_as_script`), then the
    shaders (``NB.shaders[name] = "..."``) and page data (``NB.page``)."""
    names = ["core.js", *EMBED_MODULES] + [m if m.endswith(".js") else m + ".js" for m in js_modules]
    seen: list[str] = []
    for n in names:
        if n not in seen:
            seen.append(n)
    parts = [f"/* ---- static/js/{n} ---- */\n{esm_as_script(n, read_js(n, root)).rstrip()}\n" for n in seen]
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
