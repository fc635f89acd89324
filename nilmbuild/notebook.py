"""Show a nilmbuild page inline in a Jupyter notebook, self-contained (no server, no files).

    from nilmbuild.notebook import show
    show("attention")                           # shipped checkpoint, built-in simulator
    show("gate", "runs/ukdale.pt", source="csv:../shared/data/ukdale-house2-30s", height=600)
    show("attention", layer=1, head=3, sample=5)

The page is the same single HTML file `nilmbuild site` writes, put into an ``<iframe srcdoc=...>``: its
scripts, shaders and blobs travel inside the notebook output, so it also works in an exported notebook.
``state`` goes into the page's URL fragment (``#embed&layer=1&head=3&sample=5``, the form deep links use);
``embed=True`` shows only the visual. IPython is optional: without it :func:`show` returns the HTML as a
``str`` (with ``_repr_html_``, so rich front ends still render it).

Loading the checkpoint and capturing the example batch takes a while (the capture dominates); it is done once
per (checkpoint, source, house, seed) and reused by later calls.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from nilmbuild.errors import UserError

_CONTEXTS: dict[tuple, object] = {}


class InlinePage(str):
    """The iframe HTML, as returned when IPython is not installed; notebook front ends render `_repr_html_`."""

    def _repr_html_(self) -> str:
        return str(self)


def context(
    checkpoint: str | None = None,
    source: str | None = None,
    *,
    house: int | None = None,
    seed: int = 0,
    batch: int = 32,
):
    """The SiteContext for these inputs (built once, then cached for this Python session)."""
    from nilmbuild.site.context import make_context

    key = (str(checkpoint) if checkpoint else None, source, house, seed, batch)
    if key not in _CONTEXTS:
        _CONTEXTS[key] = make_context(checkpoint, source, seed=seed, house=house, batch=batch)
    return _CONTEXTS[key]


def fragment(embed: bool = True, **state) -> str:
    """'#embed&layer=1&head=3' from state (scalars only; keys are letters, digits and '_')."""
    for k, v in state.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", k) or not isinstance(v, (str, int, float, bool)):
            raise UserError(f"state {k}={v!r}: use simple names with a number, string or bool value")
    items = {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in state.items()}
    parts = (["embed"] if embed else []) + ([urlencode(items)] if items else [])
    return "#" + "&".join(parts) if parts else ""


def page_html(
    page: str = "index",
    checkpoint: str | None = None,
    *,
    source: str | None = None,
    house: int | None = None,
    seed: int = 0,
    embed: bool = True,
    ctx=None,
    **state,
) -> str:
    """One page's self-contained HTML, with `state` set as its URL fragment before any page script runs."""
    from nilmbuild.site.build import DEFAULT_CONTEXT, make_env, render_page
    from nilmbuild.site.pages import NAV_ORDER, architecture_of_ctx, nav_order_for, site_context_vars, view_module

    if page not in NAV_ORDER:
        raise UserError(f"unknown page {page!r}; available: {', '.join(NAV_ORDER)}")
    ctx = ctx if ctx is not None else context(checkpoint, source, house=house, seed=seed)
    pages = nav_order_for(architecture_of_ctx(ctx))
    if page not in pages:
        arch = architecture_of_ctx(ctx)
        raise UserError(f"page {page!r} is not built for a {arch} model yet; available: {', '.join(pages)}")
    spec = view_module(page).build(ctx)
    text = render_page(make_env(), spec, [spec], {**DEFAULT_CONTEXT, **site_context_vars(ctx)}, {})
    frag = fragment(embed, **state)
    if frag:
        # about:srcdoc has no fragment of its own: set it (same document, no navigation) before core.js reads it
        js = (
            f"<script>try{{history.replaceState(null,'',{_js(frag)})}}"
            f"catch(e){{location.hash={_js(frag[1:])}}}</script>"
        )
        text, n = re.subn(r"<head[^>]*>", lambda m: m.group(0) + js, text, count=1)
        if not n:
            text = js + text
    return text


def _js(s: str) -> str:
    import json

    return json.dumps(s).replace("</", "<\\/")


def iframe(page_text: str, *, title: str = "nilmbuild", height: int = 720) -> str:
    """An ``<iframe srcdoc>`` holding the page (escaped once, as the attribute requires)."""
    return (
        f'<iframe srcdoc="{html.escape(page_text, quote=True)}" title="{html.escape(title, quote=True)}" '
        f'style="width:100%;height:{int(height)}px;border:0"></iframe>'
    )


def show(
    page: str = "index",
    checkpoint: str | None = None,
    *,
    source: str | None = None,
    house: int | None = None,
    seed: int = 0,
    height: int = 720,
    embed: bool = True,
    ctx=None,
    **state,
):
    """Display `page` inline: an IPython ``HTML`` object (rendered when it is the cell's value), or, without
    IPython, the same HTML as an :class:`InlinePage` string. `state` (e.g. layer=1, head=3, sample=5) goes
    into the page's URL fragment; `embed=False` shows the whole page with its explanation."""
    text = page_html(page, checkpoint, source=source, house=house, seed=seed, embed=embed, ctx=ctx, **state)
    out = iframe(text, title=f"nilmbuild: {page}", height=height)
    try:
        from IPython.display import HTML
    except ImportError:
        return InlinePage(out)
    return HTML(out)
