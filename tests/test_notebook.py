"""nilmbuild.notebook.show: a page inline in Jupyter as one self-contained <iframe srcdoc>, IPython optional."""

import html
import re
import sys
import types

import pytest

from nilmbuild import notebook
from nilmbuild.errors import UserError


def _srcdoc(out: str) -> str:
    m = re.fullmatch(r'<iframe srcdoc="([^"]*)" title="([^"]*)" style="([^"]*)"></iframe>', out)
    assert m, out[:300]
    return html.unescape(m.group(1))


def test_show_without_ipython_returns_the_html_string(site_context, monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)  # import IPython fails, as when not installed
    out = notebook.show("attention", ctx=site_context, height=640, layer=1, head=3, sample=5)
    assert isinstance(out, str) and out._repr_html_() == str(out)
    assert 'style="width:100%;height:640px;border:0"' in out and 'title="nilmbuild: attention"' in out
    page = _srcdoc(out)
    assert page.lstrip().lower().startswith("<!doctype html>")
    # self-contained: the vendored libraries, our scripts and the blobs are inline; nothing is fetched
    # the page's own bundle, with regl and @msgpack/msgpack inside, is inline
    header = page.split("/* static/js/page_attention.js bundled by esbuild ", 1)[1].split("*/", 1)[0]
    assert "regl " in header and "@msgpack/msgpack " in header, header
    assert 'id="nb-blob-' in page
    assert not re.search(r"<(script|img|iframe)[^>]*\ssrc=|<link[^>]*\shref=", page, re.IGNORECASE)
    # the state becomes the page's URL fragment before any page script runs
    head = page[page.lower().index("<head") :]
    first_script = head[head.index("<script") : head.index("</script>")]
    assert "history.replaceState" in first_script and '"#embed&layer=1&head=3&sample=5"' in first_script
    assert "</script" not in page[page.index('"#embed') : page.index('"#embed') + 40]


def test_show_with_ipython_returns_an_html_object(site_context, monkeypatch):
    shown = {}

    class HTML:
        def __init__(self, data):
            shown["data"] = data

    fake = types.ModuleType("IPython")
    fake.display = types.SimpleNamespace(HTML=HTML)
    display_mod = types.ModuleType("IPython.display")
    display_mod.HTML = HTML
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setitem(sys.modules, "IPython.display", display_mod)
    out = notebook.show("gate", ctx=site_context, embed=False)
    assert isinstance(out, HTML) and shown["data"].startswith("<iframe srcdoc=")
    # no state, no embed: no fragment-setting script before the page's own (url_state.js has its own replaceState)
    assert "<script>try{history.replaceState" not in _srcdoc(shown["data"])


def test_fragment_and_bad_input():
    assert notebook.fragment() == "#embed"
    assert notebook.fragment(False) == ""
    assert notebook.fragment(layer=1, head=3, soft=True) == "#embed&layer=1&head=3&soft=true"
    assert notebook.fragment(note="a b&c") == "#embed&note=a+b%26c"
    with pytest.raises(UserError, match="state"):
        notebook.fragment(layer=[1])
    with pytest.raises(UserError, match="unknown page 'nope'; available: index"):
        notebook.page_html("nope", ctx=object())
