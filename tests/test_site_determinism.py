"""The real default site, built twice from scratch, is byte-identical; so is a rebuild from the capture cache.

One build is the session's `built_site` (tests/conftest.py, shared with the browser tests); the other is a
fresh `nilmbuild site --no-cache` in a new Python process with another hash seed, so set/dict-order or
process-state dependence anywhere (data, model, capture, blobs, templates) shows up as a differing file.
The capture cache (nilmbuild.capture.cache) must give the same bytes as capturing, and must miss when the
checkpoint, the batch or the settings change.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nilmbuild.capture import cache as capture_cache


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_default_site_builds_byte_identical_twice(built_site, tmp_path):
    out = tmp_path / "again"
    cmd = [
        sys.executable,
        "-c",
        "from nilmbuild.cli import main; main()",
        "site",
        "--out",
        str(out),
        "--quiet",
        "--no-cache",
    ]
    if os.environ.get("NILMBUILD_TEST_CHECKPOINT"):
        cmd += ["--checkpoint", os.environ["NILMBUILD_TEST_CHECKPOINT"]]
    env = dict(os.environ, PYTHONHASHSEED="12345")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    a, b = _files(built_site), _files(out)
    assert sorted(a) == sorted(b)
    assert len(a) >= 12 and sum(map(len, a.values())) > 5_000_000  # the whole site, not a stub
    differ = [name for name in a if a[name] != b[name]]
    assert differ == [], f"differ between two builds: {differ}"


@pytest.mark.slow
def test_rebuild_from_the_capture_cache_is_byte_identical_to_a_cold_build(built_site, tmp_path, monkeypatch):
    import nilmbuild.capture
    from nilmbuild.site.context import make_context
    from nilmbuild.site.pages import build_all

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    checkpoint = os.environ.get("NILMBUILD_TEST_CHECKPOINT") or None
    make_context(checkpoint, cache=True)  # cold: captures and fills the cache
    assert len(list(capture_cache.cache_dir().glob("*.pkl"))) == 1

    def no_capture(*a, **k):
        raise AssertionError("the rebuild captured again instead of reading the cache")

    monkeypatch.setattr(nilmbuild.capture, "capture_batch", no_capture)
    build_all(make_context(checkpoint, cache=True), tmp_path / "warm")
    a, b = _files(built_site), _files(tmp_path / "warm")
    assert sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []


def test_the_capture_cache_misses_when_checkpoint_batch_or_settings_change(tmp_path, monkeypatch):
    """cached_capture captures once per (checkpoint bytes, batch, settings); --no-cache never reads or writes."""
    import hashlib

    import nilmbuild.capture
    from nilmbuild.capture.records import Capture
    from nilmbuild.site.context import cached_capture

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    calls = []

    def fake_capture(loaded, x, y, t0):
        calls.append(1)
        return Capture(records={}, meta={"capture": len(calls)})  # a real Capture: the cache holds nothing else

    def n(cap) -> int:
        return cap.meta["capture"]

    def loaded_from(data: bytes):
        """A stand-in for a Loaded of the checkpoint file holding `data`: its path and fingerprint."""
        ckpt.write_bytes(data)
        return type("Loaded", (), {"path": str(ckpt), "fingerprint": hashlib.sha256(data).hexdigest()})()

    monkeypatch.setattr(nilmbuild.capture, "capture_batch", fake_capture)
    ckpt = tmp_path / "m.pt"
    loaded = loaded_from(b"weights v1")
    x, y, t0 = np.zeros((2, 7, 4), np.float32), np.zeros((2, 1, 2, 4), np.float32), np.array([0, 1])

    assert n(cached_capture(loaded, x, y, t0)) == 1
    assert n(cached_capture(loaded, x, y, t0)) == 1 and len(calls) == 1  # hit
    loaded = loaded_from(b"weights v2")  # same file, other bytes: miss
    assert n(cached_capture(loaded, x, y, t0)) == 2
    x2 = x.copy()
    x2[0, 0, 0] = 1.0  # other data: miss
    assert n(cached_capture(loaded, x2, y, t0)) == 3
    assert n(cached_capture(loaded, x, y, t0, cache=False)) == 4  # --no-cache: captures
    assert len(list(capture_cache.cache_dir().glob("*.pkl"))) == 3  # ... and writes nothing
    assert capture_cache.clear() == 3 and not list(capture_cache.cache_dir().iterdir())
    (capture_cache.cache_dir() / "notes.txt").write_text("not ours")
    assert capture_cache.clear() == 0 and (capture_cache.cache_dir() / "notes.txt").exists()
