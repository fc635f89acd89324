"""Build the static site: render each page's Jinja template with its JS, GLSL and blobs inlined.

One page = one self-contained HTML file (works from file://, GitHub Pages, inside an iframe; no network).
The whole site is written into a temporary directory beside ``out_dir`` and then moved in file by file;
``out_dir/.nilmbuild-manifest.json`` lists what nilmbuild wrote, so a rebuild removes only its own stale files
and never touches anything else in ``out_dir``. Same inputs -> same bytes (no timestamps, sorted keys).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import jinja2
from markupsafe import Markup

from nilmbuild import __version__
from nilmbuild.errors import UserError
from nilmbuild.site import assets

MANIFEST = ".nilmbuild-manifest.json"

#: Keys every site context has (the footer shows them); build_site fills in what the caller leaves out.
DEFAULT_CONTEXT: dict = {
    "site_title": "NILMFormer, tensor by tensor",
    "checkpoint": "unknown",
    "data_source": "unknown",
    "nilmbuild_version": __version__,
    "spec_notes_href": "index.html#spec-notes",
    "spec_notes": [],
}

_RESERVED = {"site", "page", "nav", "assets"}


@dataclass(frozen=True)
class PageSpec:
    """One page of the site.

    slug: file name without ``.html`` (``"index"`` -> ``index.html``); letters, digits, ``-``, ``_``.
    template: Jinja template name (extends ``base.html``).
    entry: the page's entry module in static/js (``"page_attention.js"``; a path with a folder is taken
        relative to the repository root), bundled with everything it imports (see bundle.py); None: no JS
        (the page is marked ready at once).
    data: JSON-able values for the page's JS, read there as ``page().data`` (core.js).
    blobs: name -> bytes, available as ``blob(name) -> Uint8Array`` (core.js).
    context: extra template variables (must not be named site/page/nav/assets).
    summary: one line for the index and ``<meta name=description>``.
    section: the spec section the page shows (e.g. ``"4.2"``), shown next to the title.
    files: extra site files the page needs beside it (relative path -> bytes, e.g. the live model's runtime);
        pages that name the same file must give the same bytes.
    menu: the page's label in the menu and in the previous/next links ("" = its title).
    lead: one or two sentences the page opens with: what to look at before its first figure.
    Previous/next follow the order of the pages handed to build_site (nilmbuild/site/pages.py: READING_ORDER).
    ``data["story"]`` (nilmbuild/site/story.py) holds the page's computed findings and "try this" presets.
    """

    slug: str
    title: str
    template: str
    entry: str | None = None
    data: dict = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    context: dict = field(default_factory=dict)
    summary: str = ""
    section: str = ""
    files: dict[str, bytes] = field(default_factory=dict)
    menu: str = ""
    lead: str = ""

    @property
    def filename(self) -> str:
        return f"{self.slug}.html"


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    written: list[str]  # relative posix paths, sorted
    removed: list[str]  # stale files from the previous manifest that were deleted
    files: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)  # what was written


def _check_pages(pages: list[PageSpec]) -> None:
    seen: set[str] = set()
    for p in pages:
        if not p.slug or not all(c.isalnum() or c in "-_" for c in p.slug):
            raise UserError(f"page slug {p.slug!r}: use letters, digits, '-' or '_' only")
        if p.slug in seen:
            raise UserError(f"page slug {p.slug!r} appears twice")
        seen.add(p.slug)
        clash = _RESERVED & set(p.context)
        if clash:
            raise UserError(f"page {p.slug!r}: context keys {sorted(clash)} are reserved")


def make_env(template_dirs: Iterable[Path] = ()) -> jinja2.Environment:
    from nilmbuild.site.prose import spelled

    dirs = [str(d) for d in template_dirs] + [str(assets.ROOT / "templates")]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(["html", "htm", "xml"], default_for_string=True),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["spelled"] = spelled
    return env


RENDER_THREADS = 2  # at most, and no more than the CPUs this process may use
NO_JS = '<script>document.documentElement.dataset.ready = "true";</script>'  # a page without an entry


#: Site-context keys every page's JS receives in its payload too (``page().model``, ``page().watts``).
JS_SITE_KEYS = ("model", "watts")


def page_scripts(page: PageSpec, script_cache: dict, context: dict | None = None) -> list[str]:
    """The page's JSON payload and its bundled JS as inline script elements; the payload carries the
    JS_SITE_KEYS of the site context (``{}`` where absent)."""
    if page.entry is None:
        return [NO_JS]
    if page.entry not in script_cache:
        script_cache[page.entry] = assets.page_script(page.entry)
    payload = {
        "slug": page.slug,
        "title": page.title,
        "section": page.section,
        "blobs": sorted(page.blobs),
        "data": page.data,
        **{k: (context or {}).get(k, {}) for k in JS_SITE_KEYS},
    }
    return [assets.page_payload_html(payload), "<script>\n" + script_cache[page.entry] + "\n</script>"]


def render_page(
    env: jinja2.Environment, page: PageSpec, pages: list[PageSpec], context: dict, script_cache: dict
) -> str:
    """The HTML of one page (a str; deterministic)."""
    scripts = page_scripts(page, script_cache, context)
    blobs = [assets.blob_html(name, page.blobs[name]) for name in sorted(page.blobs)]
    nav = [
        {
            "slug": p.slug,
            "title": p.title,
            "menu": p.menu or p.title,
            "href": p.filename,
            "current": p.slug == page.slug,
            "summary": p.summary,
            "section": p.section,
        }
        for p in pages
    ]
    variables = dict(page.context)
    at = [p.slug for p in pages].index(page.slug)
    variables.update(
        site=context,
        page={
            "slug": page.slug,
            "title": page.title,
            "href": page.filename,
            "summary": page.summary,
            "section": page.section,
            "lead": page.lead,
            "step": at + 1,
            "prev": nav[at - 1] if at > 0 else None,
            "next": nav[at + 1] if at + 1 < len(nav) else None,
            "presets": (page.data.get("story") or {}).get("presets", []),
        },
        nav=nav,
        assets={
            "css": Markup(assets.script_safe(assets.read_css()).replace("</style", "<\\/style")),
            "scripts": Markup("\n".join(scripts)),
            "blobs": Markup("\n".join(blobs)),
            "gl_warm": Markup("<script>\n" + assets.script_safe(assets.read_js("gl_warm.js")) + "\n</script>"),
        },
    )
    try:
        return env.get_template(page.template).render(**variables)
    except jinja2.TemplateNotFound as e:
        raise UserError(f"page {page.slug!r}: template {e.name!r} not found in templates/") from None


def _page_files(pages: list[PageSpec]) -> dict[str, bytes]:
    """The extra files the pages need (PageSpec.files), each once; a name with two contents is an error."""
    files: dict[str, bytes] = {}
    for p in pages:
        for rel, data in p.files.items():
            if rel in files and files[rel] != data:
                raise UserError(f"page {p.slug!r}: file {rel!r} differs from another page's copy")
            files[rel] = data
    return files


def _read_manifest(out_dir: Path) -> dict[str, str]:
    """rel path -> sha256 from the old manifest, for entries safe to consider ours (relative, inside out_dir)."""
    path = out_dir / MANIFEST
    try:
        files = json.loads(path.read_text(encoding="utf-8")).get("files", {})
        files = dict(files)
    except (OSError, ValueError, AttributeError, TypeError):
        return {}  # no manifest (or unreadable): we own nothing, delete nothing
    ok = {}
    for rel, digest in files.items():
        p = PurePosixPath(rel)
        if isinstance(rel, str) and rel and not p.is_absolute() and ".." not in p.parts and rel != MANIFEST:
            ok[rel] = digest
    return ok


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ours(target: Path, root: Path, digest: str) -> bool:
    """A file we wrote and nobody changed since: a regular file (not a symlink), really inside `root`
    (no symlinked folder on the way out of it) and with the hash our manifest recorded."""
    return (
        target.is_file() and not target.is_symlink() and root in target.resolve().parents and _sha256(target) == digest
    )


def build_site(
    out_dir: str | os.PathLike,
    pages: list[PageSpec],
    context: dict | None = None,
    *,
    template_dirs: Iterable[Path] = (),
    build_only: Iterable[str] | None = None,
    progress: bool = False,
) -> BuildResult:
    """Render ``pages`` into ``out_dir``.

    context: site-wide template variables (``site.*``), merged over :data:`DEFAULT_CONTEXT`.
    template_dirs: extra template folders searched before templates/ (tests use this).
    build_only: slugs to (re)build; the others still appear in the navigation, and their files from an
        earlier build are kept (no pruning on a partial build).
    """
    _check_pages(pages)
    ctx = {**DEFAULT_CONTEXT, **(context or {})}
    selected = pages
    if build_only is not None:
        wanted = list(build_only)
        known = {p.slug for p in pages}
        unknown = [s for s in wanted if s not in known]
        if unknown:
            raise UserError(f"unknown page(s) {', '.join(unknown)}; available: {', '.join(sorted(known))}")
        selected = [p for p in pages if p.slug in wanted]

    rendered = render_pages(selected, pages, ctx, template_dirs, progress)
    return write_site(out_dir, rendered, partial=build_only is not None)


def render_pages(selected, pages, ctx: dict, template_dirs: Iterable[Path] = (), progress: bool = False) -> dict:
    """rel path -> bytes of every file the `selected` pages make (HTML, their sibling files, .nojekyll)."""
    from concurrent.futures import ThreadPoolExecutor

    from nilmbuild.threads import usable_threads

    env = make_env(template_dirs)
    script_cache: dict = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(selected), desc="rendering pages", unit="page", file=sys.stderr)

    def one(page: PageSpec) -> bytes:
        html = render_page(env, page, pages, ctx, script_cache).encode("utf-8")
        if bar is not None:
            bar.update()
        return html

    # pages are independent and their costly step (deflating the blobs) releases the GIL: RENDER_THREADS at once
    with ThreadPoolExecutor(usable_threads(RENDER_THREADS)) as pool:
        rendered = {page.filename: html for page, html in zip(selected, pool.map(one, selected))}
    if bar is not None:
        bar.close()
    rendered[".nojekyll"] = b""
    rendered.update(_page_files(selected))
    return rendered


def write_site(out_dir: str | os.PathLike, rendered: dict[str, bytes], *, partial: bool) -> BuildResult:
    """Write `rendered` into out_dir atomically per file (temp folder beside it, then rename), then the manifest.
    A full build (not `partial`) removes the files the old manifest lists that are no longer made and that nobody
    changed since; a partial build removes nothing and keeps the old manifest's other entries."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"{out_dir}: exists and is not a directory; choose another --out")
    old = _read_manifest(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.nilmbuild-tmp-", dir=out_dir.parent))
    try:
        for rel, data in rendered.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        out_dir.mkdir(parents=True, exist_ok=True)
        for rel in sorted(rendered):
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, out_dir / rel)
        removed = [] if partial else _remove_stale(out_dir, old, rendered)
        manifest_files = {rel: hashlib.sha256(d).hexdigest() for rel, d in rendered.items()}
        if partial:
            for rel in old:
                if rel not in manifest_files and (out_dir / rel).is_file():
                    manifest_files[rel] = old[rel]
        manifest = {"generator": "nilmbuild", "version": __version__, "files": dict(sorted(manifest_files.items()))}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp / MANIFEST, out_dir / MANIFEST)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return BuildResult(out_dir, sorted(rendered), removed, rendered)


def _remove_stale(out_dir: Path, old: dict[str, str], rendered: dict) -> list[str]:
    """Delete the old manifest's files that this build no longer makes, if they are still ours unchanged."""
    removed = []
    root = out_dir.resolve()
    for rel in sorted(set(old) - set(rendered)):
        target = out_dir / rel
        if _ours(target, root, old[rel]):
            target.unlink()
            removed.append(rel)
            _prune_empty_dirs(target.parent, out_dir)
    return removed


def _prune_empty_dirs(d: Path, stop: Path) -> None:
    while d != stop and stop in d.parents:
        try:
            d.rmdir()
        except OSError:
            return
        d = d.parent
