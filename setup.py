"""Wheel build hook (the rest of the metadata is in pyproject.toml).

A wheel must build the site on a machine with no checkout and no Node.js, so `build_py` copies into the
package's build folder, as `nilmbuild/_assets/`, what the pages are made of:

  templates/ and static/ (our Jinja templates, JS, GLSL, CSS), and
  node_modules/<package>/{package.json, LICENSE, the inlined file} for each entry of
  nilmbuild/site/assets.py:VENDOR_FILES, checked against package-lock.json (run `npm ci` first).

Nothing is copied into the source tree and nothing third-party is committed to git. Editable installs
(`pip install -e .`) skip the copy: they read the checkout directly.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def vendor_files() -> dict[str, tuple[str, str]]:
    """VENDOR_FILES from nilmbuild/site/assets.py, read without importing the package (no deps at build time)."""
    tree = ast.parse((HERE / "nilmbuild" / "site" / "assets.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "VENDOR_FILES":
            return ast.literal_eval(node.value)
    raise RuntimeError("nilmbuild/site/assets.py defines no VENDOR_FILES")


def copy_assets(dest: Path) -> list[Path]:
    """Copy templates/, static/ and the locked vendored JS under dest; returns the files written."""
    if dest.exists():
        shutil.rmtree(dest)
    for sub in ("templates", "static"):
        shutil.copytree(HERE / sub, dest / sub, ignore=shutil.ignore_patterns("*.map", ".*"))
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    for package, rel in vendor_files().values():
        src = HERE / "node_modules" / package
        locked = lock.get(f"node_modules/{package}", {}).get("version")
        try:
            version = json.loads((src / "package.json").read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError):
            raise SystemExit(f"node_modules/{package} is missing: run `npm ci` before building the wheel "
                             "(the wheel carries the npm-locked build; sdists do not)") from None
        if version != locked:
            raise SystemExit(f"node_modules/{package} is {version} but package-lock.json locks {locked}: run `npm ci`")
        out = dest / "node_modules" / package
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / "package.json", out / "package.json")
        shutil.copy2(src / rel, out / rel)
        for lic in src.glob("LICENSE*"):
            shutil.copy2(lic, out / lic.name)
    return [p for p in dest.rglob("*") if p.is_file()]


class build_py_with_assets(build_py):
    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            self._assets = copy_assets(Path(self.build_lib) / "nilmbuild" / "_assets")

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [str(p) for p in getattr(self, "_assets", [])]


setup(cmdclass={"build_py": build_py_with_assets})
