"""The wheel carries everything a site build needs (templates, static JS/GLSL/CSS, every page's JS bundled by
esbuild with the npm-locked regl and @msgpack/msgpack inside), so an installed wheel builds pages from any folder
with no checkout and no Node.js."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        cwd=REPO,
    )
    (whl,) = out.glob("nilmbuild-*.whl")
    return whl


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in (
        "nilmbuild/__main__.py",
        "nilmbuild/checkpoints/default.pt",
        "nilmbuild/_assets/templates/base.html",
        "nilmbuild/_assets/static/js/core.js",
        "nilmbuild/_assets/static/glsl/blit.frag",
        "nilmbuild/_assets/static/css/site.css",
        "nilmbuild/_assets/licenses/regl/LICENSE",
        "nilmbuild/_assets/licenses/@msgpack/msgpack/LICENSE",
    ):
        assert f in names, f
    pages = sorted(p.name for p in (REPO / "static" / "js").glob("page_*.js"))
    from nilmbuild.site.pages import NAV_ORDER

    assert {f"page_{slug}.js" for slug in NAV_ORDER} <= set(pages)  # every page's entry (+ the upstream variants)
    assert "nilmbuild/_assets/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm" in names  # the live model's runtime
    for p in pages:
        assert f"nilmbuild/_assets/bundles/{p}" in names, p
    assert not [n for n in names if n.endswith(".map") or "/src/" in n or "node_modules" in n]


@pytest.mark.slow
def test_installed_wheel_builds_pages_elsewhere_without_node(wheel, tmp_path):
    target, elsewhere = tmp_path / "target", tmp_path / "elsewhere"
    _run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "-q", "--target", str(target), str(wheel)]
    )
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NILMBUILD"))}
    env.update(PYTHONPATH=str(target), PATH="/nonexistent")  # no node, npm or checkout in reach
    where = _run([sys.executable, "-c", "import nilmbuild.site.assets as a; print(a.ROOT)"], cwd=elsewhere, env=env)
    assert where.stdout.strip() == str(target / "nilmbuild" / "_assets")
    r = _run(
        [sys.executable, "-m", "nilmbuild", "site", "--pages", "index,attention", "--out", "out", "-q"],
        cwd=elsewhere,
        env=env,
    )
    pages = sorted(p.name for p in (elsewhere / "out").glob("*.html"))
    assert pages == ["attention.html", "index.html"], r.stderr
    html = (elsewhere / "out" / "attention.html").read_text(encoding="utf-8")
    assert "/* static/js/page_attention.js bundled by esbuild " in html
    assert "regl 2.1.1" in html and "@msgpack/msgpack 3.1.3" in html
    assert str(REPO) not in html


def test_python_dash_m_runs_the_cli(tmp_path):
    r = _run([sys.executable, "-m", "nilmbuild", "--help"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Usage: nilmbuild" in r.stdout and "site" in r.stdout
