"""Site build pipeline: inlining, escaping, determinism, manifest-based cleanup, CLI plumbing (no browser)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from nilmbuild.errors import UserError
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.site import assets
from nilmbuild.site.build import MANIFEST, PageSpec, _read_manifest, build_site
from nilmbuild.site.views._common import model_sizes

FIXTURES = Path(__file__).parent / "browser" / "fixtures"
NASTY = "</script><script>alert(1)</script><!-- x -->"


def _pages(blob: bytes = b"\x00\x01</script>\xff", extra: str = NASTY) -> list[PageSpec]:
    return [
        PageSpec(slug="index", title="Overview", template="index.html", summary="s"),
        PageSpec(
            slug="fixture",
            title="Fixture",
            template="fixture_heatmap.html",
            entry="tests/browser/fixtures/fixture_heatmap.js",
            blobs={"matrix": blob, "note": NASTY.encode()},
            context={"explain": extra},
            section="1.2",
        ),
    ]


#: What the index template reads of the model (``site.model``, pages.site_variables); handed to every page's JS.
SIZES = model_sizes(NILMFormerConfig())


def _build(out, pages=None, **kw):
    return build_site(
        out,
        pages or _pages(),
        {"checkpoint": "c.pt", "data_source": "synthetic", "model": SIZES},
        template_dirs=[FIXTURES],
        **kw,
    )


def _inline_scripts(html: str) -> list[str]:
    return re.findall(r"<script[^>]*>(.*?)</script>", html, flags=re.S)


def test_page_is_self_contained(tmp_path):
    res = _build(tmp_path / "site")
    assert res.written == [".nojekyll", "fixture.html", "index.html"]
    html = (tmp_path / "site" / "fixture.html").read_text()
    # no external resources of any kind
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    # one bundle per page, by esbuild, naming the npm packages it took in, with their package.json versions
    for pkg in ("@msgpack/msgpack",):
        version = json.loads((assets.ROOT / "node_modules" / pkg / "package.json").read_text())["version"]
        assert f"{pkg} {version}" in html.split(" bundled by esbuild ", 1)[1].split("*/", 1)[0]
    assert html.count(" bundled by esbuild ") == 1
    assert "/* tests/browser/fixtures/fixture_heatmap.js bundled by esbuild " in html
    assert "sourceMappingURL" not in html
    # modules the entry imports (plot2d.js, heatmap2d.js) and shaders, as text from static/glsl
    assert "function axisTitle(ax)" in html
    assert json.dumps((assets.ROOT / "static" / "glsl" / "blit.frag").read_text())[1:40] in html
    payload = json.loads(re.search(r'<script type="application/json" id="nb-page">(.*?)</script>', html).group(1))
    assert payload == {
        "slug": "fixture",
        "title": "Fixture",
        "section": "1.2",
        "blobs": ["matrix", "note"],
        "data": {},
        "model": SIZES,
        "watts": {},
    }
    # a page without an entry module gets no bundle, only the ready flag
    index = (tmp_path / "site" / "index.html").read_text()
    assert "esbuild" not in index and 'id="nb-page"' not in index and "dataset.ready" in index


def test_escaping(tmp_path):
    _build(tmp_path / "site")
    html = (tmp_path / "site" / "fixture.html").read_text()
    # exactly the script elements we wrote: nothing closed early by '</script' in blobs, context or JS
    n_open = len(re.findall(r"<script\b", html))
    assert n_open == len(re.findall(r"</script>", html)) == 5  # embed switch, 2 blobs, page payload, page bundle
    assert "alert(1)" not in html.replace("&lt;/script&gt;&lt;script&gt;alert(1)", "")
    blob = re.search(r'<script type="application/octet-stream" id="nb-blob-matrix">([^<]*)</script>', html).group(1)
    assert base64.b64decode(blob) == b"\x00\x01</script>\xff"  # too small to gain from deflate: as is
    assert 'id="nb-blob-note" data-encoding="deflate">' in html  # repetitive: deflated
    assert assets.read_blobs(html) == {"matrix": b"\x00\x01</script>\xff", "note": NASTY.encode()}
    assert assets.script_safe("a</SCRIPT>b<!--c") == "a<\\/SCRIPT>b<\\!--c"
    assert "</" not in assets.js_string("</script>")


def test_deterministic_bytes(tmp_path):
    _build(tmp_path / "a")
    _build(tmp_path / "b")
    for name in [".nojekyll", "fixture.html", "index.html", MANIFEST]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    man = json.loads((tmp_path / "a" / MANIFEST).read_text())
    assert list(man["files"]) == sorted(man["files"]) == [".nojekyll", "fixture.html", "index.html"]


def test_rebuild_removes_only_own_stale_files(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "README.md").write_text("mine")
    (out / "CNAME").write_text("example.org")
    (out / "sub").mkdir()
    (out / "sub" / "keep.txt").write_text("keep")
    _build(out)
    assert (out / "fixture.html").exists()
    # second build without the fixture page: its file goes, the user's files stay
    _build(out, [_pages()[0]])
    assert not (out / "fixture.html").exists()
    assert (out / "index.html").exists() and (out / ".nojekyll").exists()
    assert (out / "README.md").read_text() == "mine"
    assert (out / "CNAME").read_text() == "example.org"
    assert (out / "sub" / "keep.txt").read_text() == "keep"
    # a manifest cannot make us delete outside (or the user's files we never wrote)
    (out / MANIFEST).write_text(json.dumps({"files": {"../outside.txt": "", "/etc/passwd": "", "README.md": "x"}}))
    (tmp_path / "outside.txt").write_text("outside")
    _build(out, [_pages()[0]])
    assert (tmp_path / "outside.txt").exists()
    assert (out / "README.md").read_text() == "mine"  # listed, but its hash is not what we wrote
    # a file of ours edited by the user since the last build is kept too
    _build(out)
    (out / "fixture.html").write_text("edited")
    _build(out, [_pages()[0]])
    assert (out / "fixture.html").read_text() == "edited"
    # no leftover temp dirs beside out_dir
    assert [p.name for p in tmp_path.iterdir() if "nilmbuild-tmp" in p.name] == []


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_manifest_with_real_hashes_cannot_delete_outside(tmp_path):
    """Entries that point outside the site folder carry the target's real sha256, so only the path
    guards (no '..', not absolute, no symlink, no symlinked folder) keep them alive."""
    out = tmp_path / "site"
    _build(out)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    via_link = tmp_path / "linked.txt"  # reached through a symlinked file
    via_link.write_text("linked file")
    elsewhere = tmp_path / "elsewhere"  # reached through a symlinked folder
    elsewhere.mkdir()
    (elsewhere / "victim.txt").write_text("in a linked folder")
    (out / "link.txt").symlink_to(via_link)
    (out / "linkdir").symlink_to(elsewhere, target_is_directory=True)
    (out / "alias.html").symlink_to(out / ".nojekyll")  # the user's link to one of our files
    files = {
        "alias.html": _sha(out / ".nojekyll"),
        "../outside.txt": _sha(outside),
        str(outside): _sha(outside),
        "link.txt": _sha(via_link),
        "linkdir/victim.txt": _sha(elsewhere / "victim.txt"),
        "fixture.html": _sha(out / "fixture.html"),
    }
    (out / MANIFEST).write_text(json.dumps({"files": files}))
    assert sorted(_read_manifest(out)) == ["alias.html", "fixture.html", "link.txt", "linkdir/victim.txt"]
    res = _build(out, [_pages()[0]])
    assert res.removed == ["fixture.html"]  # the guard is not just "delete nothing"
    assert outside.read_text() == "outside"
    assert via_link.read_text() == "linked file" and (out / "link.txt").is_symlink()
    assert (elsewhere / "victim.txt").read_text() == "in a linked folder" and (out / "linkdir").is_symlink()
    assert (out / "alias.html").is_symlink()


def test_partial_build_keeps_other_pages(tmp_path):
    out = tmp_path / "site"
    _build(out)
    before = (out / "index.html").read_bytes()
    (out / "index.html").unlink()
    _build(out, build_only=["index"])
    assert (out / "fixture.html").exists()  # not rebuilt, not removed
    assert (out / "index.html").read_bytes() == before
    assert "fixture.html" in json.loads((out / MANIFEST).read_text())["files"]
    with pytest.raises(UserError, match="unknown page"):
        _build(out, build_only=["nope"])


def test_errors(tmp_path, monkeypatch):
    with pytest.raises(UserError, match="slug"):
        _build(tmp_path / "s", [PageSpec(slug="a/b", title="x", template="index.html")])
    with pytest.raises(UserError, match="reserved"):
        _build(tmp_path / "s", [PageSpec(slug="a", title="x", template="index.html", context={"page": 1})])
    with pytest.raises(UserError, match="template"):
        _build(tmp_path / "s", [PageSpec(slug="a", title="x", template="missing.html")])
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        _build(tmp_path / "file")
    # missing node_modules -> one clear message
    fake = tmp_path / "root"
    shutil.copytree(assets.ROOT / "static", fake / "static")
    shutil.copytree(assets.ROOT / "templates", fake / "templates")
    monkeypatch.setattr(assets, "ROOT", fake)
    with pytest.raises(UserError, match=re.escape("JS dependencies missing: run `npm ci` (or `make site`)")):
        _build(tmp_path / "s2")


def test_site_command_rejects_unknown_pages_before_any_work(tmp_path):
    from nilmbuild.cli import main

    r = CliRunner().invoke(main, ["site", "--out", str(tmp_path / "public"), "--pages", "nope", "--quiet"])
    assert r.exit_code == 2 and "unknown page(s) nope" in r.output
    assert not (tmp_path / "public").exists()


@pytest.mark.slow
def test_site_command_end_to_end(tmp_path):
    """`nilmbuild site` as a user runs it: checkpoint + built-in data -> capture -> pages."""
    from nilmbuild.cli import main

    out = tmp_path / "public"
    (out / "mine.txt").parent.mkdir(parents=True)
    (out / "mine.txt").write_text("not nilmbuild's")
    args = ["site", "--out", str(out), "--pages", "index", "--quiet"]
    if os.environ.get("NILMBUILD_TEST_CHECKPOINT"):
        args += ["--checkpoint", os.environ["NILMBUILD_TEST_CHECKPOINT"]]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    html = (out / "index.html").read_text()
    assert 'data-slug="index"' in html and 'registerPage({slug:"index"' in html
    assert (out / ".nojekyll").exists() and (out / "mine.txt").read_text() == "not nilmbuild's"


@pytest.mark.slow
def test_partial_build_of_the_playground_writes_the_shared_files_it_loads(tmp_path):
    """`nilmbuild site --pages playground` alone: the page and the two sibling files it loads (the runtime and the
    graph, one copy per site), no other page; the page itself carries no graph."""
    from nilmbuild.cli import main
    from nilmbuild.live.runtime import RUNTIME_FILE
    from nilmbuild.site.views.live_parts import MODEL_FILE

    out = tmp_path / "public"
    args = ["site", "--out", str(out), "--pages", "playground", "--quiet"]
    if os.environ.get("NILMBUILD_TEST_CHECKPOINT"):
        args += ["--checkpoint", os.environ["NILMBUILD_TEST_CHECKPOINT"]]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.glob("*") if not p.name.startswith(".")) == sorted(
        ["playground.html", MODEL_FILE, RUNTIME_FILE]
    )
    assert set(json.loads((out / MANIFEST).read_text())["files"]) >= {MODEL_FILE, RUNTIME_FILE}
    assert (out / "playground.html").stat().st_size < (out / MODEL_FILE).stat().st_size / 10


def test_serve(tmp_path):
    from nilmbuild.site.serve import make_server, url_of

    with pytest.raises(UserError, match="no index.html"):
        make_server(tmp_path)
    (tmp_path / "index.html").write_text("<p>hi</p>")
    srv = make_server(tmp_path, 0)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        url = url_of(srv)
        assert url.startswith("http://127.0.0.1:")
        assert urllib.request.urlopen(url + "index.html", timeout=5).read() == b"<p>hi</p>"
    finally:
        srv.shutdown()
        srv.server_close()
