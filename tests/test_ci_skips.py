"""Under CI a test skipped for a missing dependency fails the run (tests/conftest.py); elsewhere it skips.

A small test file runs in a child pytest with the suite's conftest loaded as a plugin, under CI=true and CI=false.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CASES = """
import pytest

def test_node():
    pytest.skip("missing dependency: node: install Node.js 20+")

def test_import():
    pytest.importorskip("surely_not_an_installed_module_36")

@pytest.mark.realdata
def test_realdata():
    pass

def test_other_reason():
    pytest.skip("one sample only")
"""


def run(tmp_path, ci: str | None, shared: bool) -> dict[str, str]:
    (tmp_path / "test_cases.py").write_text(CASES)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    code = (
        "import sys, pytest, conftest; from pathlib import Path; "
        f"conftest.SHARED_DATA = Path({str(HERE if shared else tmp_path / 'absent')!r}); "
        "sys.exit(pytest.main(['-q', '-rA', '-p', 'conftest', '-p', 'no:cacheprovider', '-m', '', "
        f"'-o', 'markers=realdata', {str(tmp_path / 'test_cases.py')!r}]))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    out = {}
    for line in r.stdout.splitlines():
        for word in ("PASSED", "FAILED", "ERROR", "SKIPPED"):  # a skip in set-up that fails is an ERROR
            if line.startswith(word):
                out[line.split("::")[-1].split()[0] if "::" in line else line] = "FAILED" if word == "ERROR" else word
    return out


@pytest.mark.parametrize(
    "value,ci",
    [(None, False), ("", False), ("0", False), ("false", False), (" No ", False), ("true", True), ("1", True)],
)
def test_one_truthiness_rule(monkeypatch, value, ci):
    import importlib.util

    spec = importlib.util.spec_from_file_location("suite_conftest", HERE / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert conftest.in_ci() is ci


def test_ci_turns_dependency_skips_into_failures(tmp_path):
    got = run(tmp_path, "true", shared=False)
    assert got.get("test_node") == "FAILED" and got.get("test_import") == "FAILED", got
    assert got.get("test_realdata") == "FAILED", got
    assert any(v == "SKIPPED" for k, v in got.items() if "one sample only" in k), got


def test_outside_ci_they_skip(tmp_path):
    got = run(tmp_path, "false", shared=True)
    assert "FAILED" not in got.values(), got
    assert got.get("test_realdata") == "PASSED", got
    assert sum(v == "SKIPPED" for v in got.values()) == 3, got
