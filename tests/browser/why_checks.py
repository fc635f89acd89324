"""What the Why page's browser tests check the same way for every architecture (test_page_why.py, the spec's page;
test_page_why_upstream.py, the imported models'): a page's attribution against `nilmbuild.explain.explain_window`
within float16's rounding, and a click on a step of the attribution lanes."""

from __future__ import annotations

import numpy as np

F16 = 2.0**-11  # float16's relative rounding: the page's blobs store attributions and passes in float16


def assert_matches_stored(got: np.ndarray, want: np.ndarray) -> None:
    """A stored (float16) attribution against Python's: its largest step, then every step."""
    t = int(np.argmax(np.abs(want)))
    scale = np.abs(want).max()
    assert got.shape == want.shape
    assert abs(got[t] - want[t]) <= F16 * abs(want[t]) + 1e-4 * scale, (t, got[t], want[t])
    np.testing.assert_allclose(got, want, atol=F16 * scale + 1e-4 * scale)


def click_step(page, step: int) -> dict:
    """Click step `step` in the middle of the attribution lanes; the page's explained target afterwards."""
    box = page.locator("#why-lanes").bounding_box()
    g = page.evaluate("(() => { const g = nilmbuild.test.why.geo(); return [g.layout.x0, g.layout.x1, g.n]; })()")
    page.mouse.click(box["x"] + g[0] + (g[1] - g[0]) * step / (g[2] - 1), box["y"] + box["height"] / 2)
    return page.evaluate("nilmbuild.test.why.targetOf()")


def assert_occlusion_from_passes(page, got: np.ndarray, want: np.ndarray, d: int, step: int) -> None:
    """An occlusion attribution the page derived from its stored passes (float16 watts of device d) against
    Python's: each step is a mean of differences of two passes, so the bound is twice their rounding at `step`."""
    watts = np.abs(
        page.evaluate(
            f"(() => {{ const W = nilmbuild.test.why.W; const out = []; for (let p = 0; p <= W.P; p++) "
            f"out.push(W.passes[(p * W.D + {d}) * W.L + {step}]); return out; }})()"
        )
    ).max()
    bound = 2 * F16 * watts + 1e-4 * np.abs(want).max() + 1e-6
    k = int(np.argmax(np.abs(want)))
    assert abs(got[k] - want[k]) <= bound, (k, got[k], want[k], bound)
    np.testing.assert_allclose(got, want, atol=bound)
