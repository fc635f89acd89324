"""Reading and safely inlining the pieces of a page: its bundled JS (see bundle.py), its JSON payload, blobs, CSS.

Everything ends up inside inline ``<script>`` elements, so every string that goes there is passed through
:func:`script_safe`, which makes ``</script`` and ``<!--`` harmless without changing what the JS means.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import zlib
from pathlib import Path

from nilmbuild.errors import UserError
from nilmbuild.provenance import ASSET_ROOT
from nilmbuild.site import bundle as bundler

#: Where templates/, static/ and node_modules/ live (nilmbuild.provenance.ASSET_ROOT): the repository root in a
#: checkout (and in editable installs); in an installed wheel, the package's own copy `nilmbuild/_assets/`
#: (written by setup.py's build hook, with every page's JS prebundled under bundles/).
ROOT = ASSET_ROOT

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


def node_modules(root: Path | None = None) -> Path:
    return (root or ROOT) / "node_modules"


def page_script(entry: str | os.PathLike, root: Path | None = None) -> str:
    """A page's JS as one script body (script-safe): its entry module bundled by esbuild when
    node_modules/.bin/esbuild exists (a checkout after ``npm ci``), else the bundle shipped in the wheel."""
    root = root or ROOT
    try:
        if bundler.esbuild(root) is not None:
            code = bundler.bundle(root, entry)
        else:
            code = bundler.prebuilt(root, entry)
            if code is None:
                raise UserError(NPM_MISSING)
    except bundler.BundleError as e:
        raise UserError(str(e)) from None
    return script_safe(_SOURCE_MAP.sub("", code).rstrip())


def page_payload_html(payload: dict) -> str:
    """``<script type="application/json" id="nb-page">`` with what core.js page() returns (script-safe JSON)."""
    return f'<script type="application/json" id="nb-page">{js_string(payload)}</script>'


def read_css(root: Path | None = None) -> str:
    return ((root or ROOT) / "static" / "css" / "site.css").read_text(encoding="utf-8")


def read_js(name: str, root: Path | None = None) -> str:
    """A classic script of static/js inlined as it is (no bundling: it imports nothing), e.g. gl_warm.js."""
    return ((root or ROOT) / "static" / "js" / name).read_text(encoding="utf-8")


#: A blob is deflated (zlib format) when that saves at least this share of its bytes; pages inflate it before
#: they start (core.js inflateBlobs, the browser's native DecompressionStream), so blob(name) stays synchronous.
DEFLATE_MIN_SAVING = 0.05
_BLOB_ELEMENT = re.compile(
    r'<script type="application/octet-stream" id="nb-blob-([A-Za-z0-9_.-]+)"( data-encoding="deflate")?>([^<]*)</script>'
)


def blob_html(name: str, payload: bytes) -> str:
    """``<script type="application/octet-stream" id="nb-blob-NAME" [data-encoding="deflate"]>BASE64</script>``:
    the bytes, deflated when that makes them DEFLATE_MIN_SAVING smaller (float16 records barely shrink; bit masks,
    sparse and repetitive records do), as base64 (which never contains '<')."""
    if not _BLOB_NAME.match(name):
        raise UserError(f"blob name {name!r}: use letters, digits, '.', '_' or '-' only")
    return _blob_html(name, bytes(payload))


# A site has ~22 blobs: page_specs deflates each in its page's thread as the page is built, and render reuses it.
@functools.lru_cache(maxsize=64)
def _blob_html(name: str, raw: bytes) -> str:
    packed = zlib.compress(raw, 9)
    attr = ""
    if len(packed) <= (1.0 - DEFLATE_MIN_SAVING) * len(raw):
        raw, attr = packed, ' data-encoding="deflate"'
    b64 = base64.b64encode(raw).decode("ascii")
    return f'<script type="application/octet-stream" id="nb-blob-{name}"{attr}>{b64}</script>'


def read_blobs(html: str) -> dict[str, bytes]:
    """name -> bytes of every blob in a built page (inflated): what core.js blob(name) returns."""
    out = {}
    for name, deflated, b64 in _BLOB_ELEMENT.findall(html):
        raw = base64.b64decode(b64)
        out[name] = zlib.decompress(raw) if deflated else raw
    return out
