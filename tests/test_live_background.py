"""The live model's ONNX export in a background process (nilmbuild/live/background.py): the graph it leaves in the
cache is byte for byte the one the parent would export itself, a child that fails leaves the parent to export, and
a parent that stops takes its child with it."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

import nilmbuild
from nilmbuild.live import background
from nilmbuild.live.export import cache_key, export_onnx, onnx_bytes

pytestmark = pytest.mark.slow


@pytest.fixture
def loaded(tmp_path, monkeypatch):
    """The shipped checkpoint, copied (a test may spoil the copy), with an empty export cache."""
    monkeypatch.setenv("NILMBUILD_CACHE", str(tmp_path / "cache"))
    src = nilmbuild.load_model().loaded
    path = tmp_path / "model.pt"
    shutil.copyfile(src.path, path)
    return dataclasses.replace(src, path=str(path))


def cache_file(loaded):
    from nilmbuild.live.cache import cache_dir

    return cache_dir() / f"{cache_key(loaded)}.onnx"


def test_the_child_exports_the_same_graph_into_the_cache(loaded):
    assert background.start(loaded)
    assert not background.start(loaded)  # one child per graph
    got = onnx_bytes(loaded)  # waits for the child, then reads the cache
    assert cache_file(loaded).read_bytes() == got == export_onnx(loaded)
    assert not background.start(loaded)  # cached: nothing to start


def test_a_child_that_fails_leaves_the_export_to_the_parent(loaded):
    from pathlib import Path

    Path(loaded.path).write_bytes(b"not a checkpoint")  # the child cannot load it; the parent has the model
    assert background.start(loaded)
    assert background._RUNNING[cache_key(loaded)].wait() != 0
    assert onnx_bytes(loaded) == export_onnx(loaded)
    assert cache_file(loaded).is_file()


def test_a_parent_that_stops_stops_its_child(loaded):
    assert background.start(loaded)
    proc = background._RUNNING[cache_key(loaded)]
    background._stop_all()
    assert proc.returncode is not None and proc.returncode < 0  # killed, not finished
    assert not background._RUNNING and not cache_file(loaded).exists()


def test_nothing_starts_without_a_checkpoint_file(loaded):
    assert not background.start(dataclasses.replace(loaded, path=""))
