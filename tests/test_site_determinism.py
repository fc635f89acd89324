"""The real default site, built twice from scratch, is byte-identical.

One build is the session's `built_site` (tests/conftest.py, shared with the browser tests); the other is a
fresh `nilmbuild site` in a new Python process with another hash seed, so set/dict-order or process-state
dependence anywhere (data, model, capture, blobs, templates) shows up as a differing file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_default_site_builds_byte_identical_twice(built_site, tmp_path):
    out = tmp_path / "again"
    cmd = [sys.executable, "-c", "from nilmbuild.cli import main; main()", "site", "--out", str(out), "--quiet"]
    if os.environ.get("NILMBUILD_TEST_CHECKPOINT"):
        cmd += ["--checkpoint", os.environ["NILMBUILD_TEST_CHECKPOINT"]]
    env = dict(os.environ, PYTHONHASHSEED="12345")
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    a, b = _files(built_site), _files(out)
    assert sorted(a) == sorted(b)
    assert len(a) >= 12 and sum(map(len, a.values())) > 5_000_000          # the whole site, not a stub
    differ = [name for name in a if a[name] != b[name]]
    assert differ == [], f"differ between two builds: {differ}"
