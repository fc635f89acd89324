"""nilmbuild.explain.served (the Why page's explanations): every device at once equals the per-device explained
function, Captum with one output column per row equals one Captum call per target, the stored occlusion passes
give Captum's Occlusion of any point target (the page's derivation), Captum's window rule by hand, the memo, and
the cache key and entry."""

import numpy as np
import pytest
import torch

import nilmbuild
from nilmbuild.explain import served, served_cache
from nilmbuild.explain.api import _step_s, make_target
from nilmbuild.explain.methods import Settings, attribute
from nilmbuild.explain.wrapper import Interval, WattsToDevice, window_baseline

SMALL = Settings(ig_steps=2, occlusion_window=16, occlusion_stride=8, batch=32)


@pytest.fixture(scope="module")
def shipped():
    return nilmbuild.load_model().loaded


@pytest.fixture(scope="module")
def window():
    rng = np.random.default_rng(5)
    agg = 180 + 50 * rng.random(480)
    agg[200:205] += 2600.0  # a kettle-like boil
    return agg.astype(np.float32), np.datetime64("2024-06-20T06:00", "s")


def test_occlusion_windows_follow_captums_rule_by_hand():
    assert served.occlusion_windows(40, 16, 8) == [(0, 16), (8, 24), (16, 32), (24, 40)]
    # n - size = 29 is no multiple of 8: ceil(29 / 8) + 1 = 5 windows, the last one cut at the end
    assert served.occlusion_windows(45, 16, 8) == [(0, 16), (8, 24), (16, 32), (24, 40), (32, 45)]


@pytest.mark.parametrize("gate", ["hard", "soft"])
def test_all_devices_is_the_per_device_function(shipped, window, gate):
    agg, start = window
    x = torch.from_numpy(agg)[None]
    got = served.AllDevices(shipped, start, gate)(x)[0].numpy()
    for d, name in enumerate(shipped.devices):
        want = WattsToDevice(shipped, start, name, gate)(x)[0].detach().numpy()
        np.testing.assert_array_equal(got[d], want)


def test_the_memo_runs_each_distinct_row_once(shipped, window):
    agg, start = window
    f = served.AllDevices(shipped, start, "hard")
    x = torch.from_numpy(np.stack([agg, agg, window_baseline(agg)]))
    first = f(x)
    assert f.runs == 2
    again = f(x[[2, 0]])
    assert f.runs == 2
    np.testing.assert_array_equal(again.numpy(), first[[2, 1]].numpy())


@pytest.mark.parametrize("method", ["saliency", "occlusion"])
def test_one_column_per_row_equals_one_captum_call_per_target(shipped, window, method):
    agg, start = window
    x, base = torch.from_numpy(agg)[None], torch.from_numpy(window_baseline(agg))[None]
    targets = [(0, Interval(0, 480)), (2, Interval(203, 204, point=True))]
    gate = "soft" if method == "saliency" else "hard"
    tgt = served.Targets(served.AllDevices(shipped, start, gate), targets, _step_s(shipped))
    got = attribute(tgt, x.expand(2, -1), base.expand(2, -1), method, SMALL, column=torch.arange(2)).numpy()
    for k, (d, iv) in enumerate(targets):
        one = make_target(shipped, start, shipped.devices[d], iv, gate)
        want = attribute(one, x, base, method, SMALL)[0].numpy()
        scale = np.abs(want).max()
        np.testing.assert_allclose(got[k], want, atol=1e-4 * scale + 1e-9)


def test_stored_passes_give_captums_occlusion_of_any_point_target(shipped, window):
    agg, start = window
    x, base = torch.from_numpy(agg), torch.from_numpy(window_baseline(agg))
    passes = served.occlusion_passes(served.AllDevices(shipped, start, "hard"), x, base, SMALL)
    wins = served.occlusion_windows(480, SMALL.occlusion_window, SMALL.occlusion_stride)
    assert passes.shape == (1 + len(wins), len(shipped.devices), 480)
    d, t = 0, 210  # a step after the boil: not a stored target
    drop, count = np.zeros(480), np.zeros(480)
    for (lo, hi), p in zip(wins, passes[1:]):  # the page's derivation (static/js/occlusion.js), by hand
        drop[lo:hi] += float(passes[0, d, t]) - float(p[d, t])
        count[lo:hi] += 1
    one = make_target(shipped, start, shipped.devices[d], Interval(t, t + 1, point=True), "hard")
    want = attribute(one, x[None], base[None], "occlusion", SMALL)[0].numpy()
    np.testing.assert_allclose(drop / count, want, atol=1e-3 * np.abs(want).max() + 1e-6)


def test_cache_entry_is_reused_and_keyed_by_window_and_settings(shipped, window, tmp_path, monkeypatch):
    agg, start = window
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []

    def fake(loaded, aggregate_w, st, settings):
        calls.append(st)
        return {"passes": np.arange(6.0).reshape(1, 2, 3), "quality": [{"device": "kettle", "del": 0.5}]}

    monkeypatch.setattr(served, "explain_served", fake)
    first = served_cache.cached_explain(shipped, agg, start)
    again = served_cache.cached_explain(shipped, agg, start)
    assert len(calls) == 1 and again["quality"] == first["quality"]
    np.testing.assert_array_equal(again["passes"], first["passes"])
    served_cache.cached_explain(shipped, agg, start, cache=False)
    assert len(calls) == 2
    k = served_cache.key(shipped.fingerprint, agg, start, served.SITE)
    other = agg.copy()
    other[0] += 1
    assert served_cache.key(shipped.fingerprint, other, start, served.SITE) != k
    assert served_cache.key(shipped.fingerprint, agg, start, served.SiteSettings(fractions=21)) != k
    assert served_cache.clear() == 1


def test_max_sensitivities_gives_each_row_the_single_rows_perturbations():
    from nilmbuild.explain import quality as q

    x = torch.linspace(100.0, 900.0, 40)[None]

    def square(inputs, target=None):
        return inputs**2

    one = q.max_sensitivity(square, x, samples=3)
    rows = q.max_sensitivities(square, x.expand(3, -1).contiguous(), samples=3, target=torch.arange(3))
    np.testing.assert_array_equal(rows, [one] * 3)
    # (x + d)^2 - x^2 = 2 x d + d^2 with |d| <= 5 W: relative change at most about 2 * 5 / min(x), and not 0
    assert 0 < one <= 2 * 5.0 / 100.0 + 1e-3
