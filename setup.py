"""Wheel build hook (the rest of the metadata is in pyproject.toml).

A wheel must build the site on a machine with no checkout and no Node.js, so `build_py` copies into the
package's build folder, as `nilmbuild/_assets/`, what the pages are made of:

  templates/ and static/ (our Jinja templates, JS modules, GLSL, CSS), and
  bundles/page_*.js: every page's entry module bundled now by esbuild (nilmbuild/site/bundle.py), with the
  npm-locked regl and @msgpack/msgpack inside, checked against package-lock.json (run `npm ci` first).

Nothing is copied into the source tree and nothing third-party is committed to git. Editable installs
(`pip install -e .`) skip the copy: they read the checkout and bundle with esbuild at site-build time.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED_PACKAGES = ("esbuild", "regl", "@msgpack/msgpack", "onnxruntime-web")


def bundler():
    """nilmbuild/site/bundle.py, loaded by path (importing the package would need its dependencies)."""
    spec = importlib.util.spec_from_file_location("_nilmbuild_bundle", HERE / "nilmbuild" / "site" / "bundle.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_npm_lock() -> None:
    """node_modules holds exactly what package-lock.json locks for the packages that go into the bundles."""
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    for package in BUNDLED_PACKAGES:
        locked = lock.get(f"node_modules/{package}", {}).get("version")
        try:
            version = json.loads((HERE / "node_modules" / package / "package.json").read_text(encoding="utf-8"))[
                "version"
            ]
        except (OSError, ValueError, KeyError):
            raise SystemExit(
                f"node_modules/{package} is missing: run `npm ci` before building the wheel "
                "(the wheel carries the pages' prebuilt JS bundles; sdists do not)"
            ) from None
        if version != locked:
            raise SystemExit(f"node_modules/{package} is {version} but package-lock.json locks {locked}: run `npm ci`")


def copy_assets(dest: Path) -> list[Path]:
    """Copy templates/ and static/ under dest and bundle every page's JS into dest/bundles; returns the files."""
    check_npm_lock()
    if dest.exists():
        shutil.rmtree(dest)
    for sub in ("templates", "static"):
        shutil.copytree(HERE / sub, dest / sub, ignore=shutil.ignore_patterns("*.map", ".*"))
    b = bundler()
    try:
        b.write_prebuilt(HERE, dest)
    except b.BundleError as e:
        raise SystemExit(str(e)) from None
    for package in BUNDLED_PACKAGES[1:]:  # the licences of the npm code inside the bundles
        for lic in (HERE / "node_modules" / package).glob("LICENSE*"):
            out = dest / "licenses" / package / lic.name
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(lic, out)
    copy_live_runtime(dest)
    return [p for p in dest.rglob("*") if p.is_file()]


def copy_live_runtime(dest: Path) -> None:
    """onnxruntime-web's files that nilmbuild/live/runtime.py packs into the site's nilmbuild-runtime.js
    (PACKAGE, ORT_JS, GLUE, WASM there, read without importing the package), with its package.json and licence."""
    names = {}
    for node in ast.parse((HERE / "nilmbuild" / "live" / "runtime.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and len(node.targets) == 1:
            names[getattr(node.targets[0], "id", "")] = node.value.value
    src = HERE / "node_modules" / names["PACKAGE"]
    for rel in ("package.json", names["ORT_JS"], names["GLUE"], names["WASM"], *[p.name for p in src.glob("LICENSE*")]):
        if not (src / rel).is_file():
            raise SystemExit(
                f"node_modules/{names['PACKAGE']}/{rel} is missing: run `npm ci` before building the wheel"
            )
        out = dest / names["PACKAGE"] / rel  # runtime.py reads _assets/onnxruntime-web/ in a wheel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, out)


class build_py_with_assets(build_py):
    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            self._assets = copy_assets(Path(self.build_lib) / "nilmbuild" / "_assets")

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [str(p) for p in getattr(self, "_assets", [])]


setup(cmdclass={"build_py": build_py_with_assets})
