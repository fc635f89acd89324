"""The page of a component an upstream model does not have (FiLM and the gate in the original NILMFormer, FiLM in a
CondiNILM run trained without it): one plain sentence that says so and a link to what the model has instead
(upstream_prose.absent), never an empty or made-up panel."""

from __future__ import annotations

from nilmbuild.site.build import PageSpec

from . import upstream_prose
from ._common import view_page


def page_if_absent(ctx, view: str, component: str) -> PageSpec | None:
    """The page for view module `view` (its __name__) when the loaded model lacks `component`, else None."""
    absent = upstream_prose.absent(ctx.loaded.cfg, component)
    if absent is None:
        return None
    name = component[0].upper() + component[1:]  # "Gate", "FiLM"
    absent = {**absent, "title": f"{name}: not in this model"}
    return view_page(view, template="upstream_absent.html", entry="page_absent.js", data={}, section="", title=name,
                     context={"absent": absent}, summary=absent["text"])  # fmt: skip
