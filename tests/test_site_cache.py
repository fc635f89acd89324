"""The site cache (nilmbuild.site.site_cache): `nilmbuild site` with checkpoint, arguments, data and code unchanged
writes the files it built last time without building; any change of those builds again."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

import nilmbuild.site.context
import nilmbuild.site.pages
from nilmbuild.cli import main
from nilmbuild.site import site_cache
from nilmbuild.site.build import MANIFEST, write_site


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """`nilmbuild site` with make_context/build_all replaced by a build that reads a CSV's bytes into index.html."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    data = tmp_path / "house.csv"
    data.write_text("Time,Aggregate\n")
    ckpt = tmp_path / "m.pt"
    ckpt.write_bytes(b"weights v1")
    builds = []

    def make_context(checkpoint, source, **kw):
        return type("Ctx", (), {"source": f"csv:{data}", "weights": open(checkpoint, "rb").read()})()

    def build_all(ctx, out, build_only=None, progress=False):
        builds.append(build_only)
        page = ctx.weights + b"|" + open(data, "rb").read()
        return write_site(out, {"index.html": page, ".nojekyll": b""}, partial=build_only is not None)

    monkeypatch.setattr(nilmbuild.site.context, "make_context", make_context)
    monkeypatch.setattr(nilmbuild.site.pages, "build_all", build_all)

    def site(out, *extra):
        r = CliRunner().invoke(main, ["site", "-c", str(ckpt), "--out", str(tmp_path / out), "-q", *extra])
        assert r.exit_code == 0, r.output
        return (tmp_path / out / "index.html").read_bytes()

    return site, builds, ckpt, data


def test_unchanged_inputs_write_the_cached_files_without_building(fake_build, tmp_path):
    site, builds, ckpt, data = fake_build
    assert site("a") == b"weights v1|Time,Aggregate\n" and len(builds) == 1
    assert site("b") == b"weights v1|Time,Aggregate\n" and len(builds) == 1  # hit: nothing built
    assert (tmp_path / "b" / MANIFEST).is_file()  # written like any build (manifest-safe)
    assert len(list(site_cache.cache_dir().glob("*.pkl"))) == 1


def test_a_changed_checkpoint_data_file_or_argument_builds_again(fake_build):
    site, builds, ckpt, data = fake_build
    site("a")
    ckpt.write_bytes(b"weights v2")
    assert site("a") == b"weights v2|Time,Aggregate\n" and len(builds) == 2
    data.write_text("Time,Aggregate\n0,1\n")  # the data the build read (resolved source), not an argument
    os.utime(data, ns=(1, 1))
    assert site("a") == b"weights v2|Time,Aggregate\n0,1\n" and len(builds) == 3
    site("a", "--seed", "3")
    assert len(builds) == 4
    site("a", "--pages", "index")
    assert builds[-1] == ["index"] and len(builds) == 5
    site("a", "--seed", "3")
    assert len(builds) == 5  # that one is cached now


def test_no_cache_neither_reads_nor_writes_and_clear_cache_empties(fake_build):
    site, builds, ckpt, data = fake_build
    site("a", "--no-cache")
    assert len(builds) == 1 and not list(site_cache.cache_dir().glob("*.pkl"))
    site("a")
    site("a", "--no-cache")
    assert len(builds) == 3
    (site_cache.cache_dir() / "notes.txt").write_text("not ours")
    site("a", "--clear-cache", "--no-cache")
    assert not list(site_cache.cache_dir().glob("*.pkl")) and (site_cache.cache_dir() / "notes.txt").exists()


def test_the_key_covers_the_code(tmp_path, monkeypatch):
    ckpt = tmp_path / "m.pt"
    ckpt.write_bytes(b"w")
    code = tmp_path / "pkg"
    (code / "site").mkdir(parents=True)
    (code / "site" / "view.py").write_text("A = 1\n")
    monkeypatch.setattr(site_cache, "PACKAGE_ROOT", code)
    args = {"source": None, "pages": None}
    k1 = site_cache.site_key(str(ckpt), args)
    assert site_cache.site_key(str(ckpt), args) == k1
    (code / "site" / "view.py").write_text("A = 2\n")
    assert site_cache.site_key(str(ckpt), args) != k1
    assert site_cache.site_key(str(tmp_path / "missing.pt"), args) is None  # the build then says what is wrong
