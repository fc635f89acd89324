"""Fixtures shared by the whole suite.

`built_site` builds the real site once per test session (shipped checkpoint + built-in data, exactly what
`nilmbuild site` does) into a temporary folder; the browser tests open its pages.
Set NILMBUILD_TEST_CHECKPOINT to build from another checkpoint (e.g. while developing before one is shipped).

Tests marked `realdata` need SHARED_DATA (../shared/data beside the checkout): without it they skip on a
developer machine, and fail in CI (CI=true), where a missing data folder is a broken set-up, not a reason
to pass quietly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pytest_runtest_setup(item):
    if item.get_closest_marker("realdata") is None or SHARED_DATA.is_dir():
        return
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(
            f"CI: {SHARED_DATA} is missing; the realdata tests must run in CI (check out the shared data "
            f"next to the repository)",
            pytrace=False,
        )
    pytest.skip(f"{SHARED_DATA} not present")


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
