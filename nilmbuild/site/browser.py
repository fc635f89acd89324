"""How nilmbuild launches Chromium (tests and benchmarks): Debian's system build, software WebGL.

`playwright install` cannot download browsers here, so we always launch the system Chromium.
SwiftShader makes WebGL pixels identical on every machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from nilmbuild.errors import UserError

CHROMIUM = os.environ.get("NILMBUILD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--use-angle=swiftshader",  # software WebGL, identical pixels on every machine
    "--enable-unsafe-swiftshader",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--font-render-hinting=none",
]


def launch(playwright):
    """A headless Chromium from `playwright.chromium`, or a UserError that says how to install one."""
    if not Path(CHROMIUM).exists():
        raise UserError(
            f"Chromium not found at {CHROMIUM}: run `make setup` (installs Debian's chromium) "
            "or set NILMBUILD_CHROMIUM=/path/to/chromium"
        )
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
