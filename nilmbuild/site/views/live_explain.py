"""What the Playground needs to explain the reader's edited window live (issue 32 item 4): the occlusion settings
of `nilmbuild explain --method occlusion` (nilmbuild/explain/methods.py `DEFAULT`), so the page computes the same
definition as Python and no size is typed into JS. The page (static/js/playground_explain.js) runs the occluded
copies through the live graph (its watts output, the hard-gate output `explain` explains by default) and averages
the drops as Captum's Occlusion does; docs/live-model.md, "Why, live"."""

from __future__ import annotations


def live_explain_data(loaded) -> dict:
    """{method, window, stride, output, baseline}: the occlusion window and stride (steps), the graph output whose
    device row is the explained output, and the baseline's name (the window's minimum power at every step)."""
    from nilmbuild.explain.methods import DEFAULT
    from nilmbuild.live.export import outputs

    return {
        "method": "occlusion",
        "window": int(DEFAULT.occlusion_window),
        "stride": int(DEFAULT.occlusion_stride),
        "output": outputs(loaded.cfg)[0],
        "baseline": "the window's minimum power",
    }
