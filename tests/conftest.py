"""Fixtures shared by the whole suite.

`built_site` builds the real site once per test session (shipped checkpoint + built-in data, exactly what
`nilmbuild site` does) into a temporary folder; the browser tests open its pages.
Set NILMBUILD_TEST_CHECKPOINT to build from another checkpoint (e.g. while developing before one is shipped).

Missing dependencies: a test that cannot run because something is not installed (node, node_modules, onnxruntime,
Chromium, make) or not there (the real data in SHARED_DATA, ../shared/data beside the checkout, for tests marked
`realdata`) calls `pytest.skip(MISSING + "what: how to get it")`, or pytest.importorskip. On a developer machine it
skips; under CI (`in_ci()`, the one truthiness rule: CI set to anything but "", "0", "false", "no") the
report hook below turns every such skip into a failure, because there it is a broken set-up, not a reason to pass
quietly. Other skips (a checkpoint without a training log) are left alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
#: how a skip for a missing dependency begins (pytest.importorskip's own reasons begin "could not import")
MISSING = "missing dependency: "
_MISSING_PREFIXES = (MISSING, "could not import")


def in_ci() -> bool:
    """True under CI: the CI variable set to anything but "", "0", "false" or "no" (any case, spaces ignored)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_runtest_setup(item):
    if item.get_closest_marker("realdata") is not None and not SHARED_DATA.is_dir():
        pytest.skip(f"{MISSING}{SHARED_DATA}: check out the shared data next to the repository")


def _skip_reason(report) -> str:
    lr = report.longrepr
    text = lr[2] if isinstance(lr, tuple) and len(lr) == 3 else str(lr)
    return text.removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI, a skip for a missing dependency fails the test (see the module doc)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        reason = _skip_reason(report)
        if reason.startswith(_MISSING_PREFIXES):
            report.outcome = "failed"
            report.longrepr = f"CI: {reason} (under CI a missing dependency fails the run instead of skipping)"


@pytest.fixture(scope="session")
def site_context():
    from nilmbuild.site.context import make_context

    return make_context(os.environ.get("NILMBUILD_TEST_CHECKPOINT") or None)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, site_context) -> Path:
    from nilmbuild.site.pages import build_all

    out = tmp_path_factory.mktemp("site")
    build_all(site_context, out, progress=False)
    return out


@pytest.fixture
def prepared_runs(monkeypatch):
    """Every Prepared a training run loads, in order (trainer.load_prepared spied on)."""
    from nilmbuild.train import trainer

    seen = []
    real = trainer.load_prepared

    def spy(tc, window):
        seen.append(real(tc, window))
        return seen[-1]

    monkeypatch.setattr(trainer, "load_prepared", spy)
    return seen
