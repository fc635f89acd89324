"""assets.esm_as_script: our ES modules as classic page scripts (exports on NB.<namespace>, imports read from it)."""

import json
import shutil
import subprocess

import pytest

from nilmbuild.site import assets


def test_namespace_names():
    assert assets.module_namespace("embed_height.js") == "embedHeight"
    assert assets.module_namespace("url_state") == "urlState"
    assert assets.module_namespace("core.js") == "core"


def test_plain_scripts_are_unchanged():
    src = assets.read_js("core.js")
    assert assets.esm_as_script("core.js", src) == src


def test_module_becomes_a_script():
    out = assets.esm_as_script("m.js", 'import { a, b } from "./url_state.js";\nexport const X = 1;\n'
                                       "export function f() { return a(b); }\nexport async function g() {}\nfunction h() {}\n")
    assert "export" not in out and "import" not in out
    assert "var a = NB.urlState.a;var b = NB.urlState.b;" in out
    assert out.rstrip().endswith("NB.m = { X: X, f: f, g: g };\n})();")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_bundled_modules_run_as_one_classic_script():
    """The page bundle's way: url_state, embed_height, embed_snippet concatenated, run as one script in node."""
    body = "\n".join(assets.esm_as_script(n, assets.read_js(n))
                     for n in ("url_state.js", "embed_height.js", "embed_snippet.js"))
    js = ("const window = globalThis;\n" + body + "\nconsole.log(JSON.stringify(["
          "NB.urlState.parseHash('#embed&layer=1'), NB.embedHeight.heightMessage('x', 2.5),"
          "NB.embedSnippet.embedSrc('a.html', [['head', 3]])]));")
    res = subprocess.run(["node", "-e", js], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [{"embed": True, "params": {"layer": "1"}},
                                      {"type": "nilmbuild:height", "page": "x", "height": 3, "version": 1},
                                      "a.html#embed&head=3"]
