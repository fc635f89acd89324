"""Fixtures shared by the whole suite.

`built_site` builds the real site once per test session (shipped checkpoint + built-in data, exactly what
`nilmbuild site` does) into a temporary folder; the browser tests open its pages.
Set NILMBUILD_TEST_CHECKPOINT to build from another checkpoint (e.g. while developing before one is shipped).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


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
