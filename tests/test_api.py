"""nilmbuild.load_model(...).run_window: the one-window entry point, checked against the model itself."""

import numpy as np
import pytest
import torch

import nilmbuild
from nilmbuild.data.preprocess import exogenous, scaler_from_dict
from nilmbuild.errors import UserError


@pytest.fixture(scope="module")
def model():
    return nilmbuild.load_model()


def test_run_window_equals_a_hand_built_forward_pass(model):
    rng = np.random.default_rng(7)
    agg = (200 + 3000 * (rng.random(model.window) > 0.97) + 50 * rng.random(model.window)).astype(np.float32)
    out = model.run_window(agg, "2024-04-13T06:30")
    assert list(out) == model.devices and all(
        v.shape == (model.window,) and v.dtype == np.float32 for v in out.values()
    )
    # by hand: scale, time features at 1-minute steps from 06:30, forward with the hard gate, unscale
    ck = model.loaded
    ts = np.datetime64("2024-04-13T06:30") + np.arange(model.window) * np.timedelta64(60, "s")
    z = scaler_from_dict(ck.scalers["aggregate"]).transform(agg.astype(np.float64))
    x = np.concatenate([z[None], exogenous(ts)]).astype(np.float32)[None]
    with torch.no_grad():
        p = ck.model.eval()(torch.from_numpy(x)).power[0].numpy()
    for i, d in enumerate(model.devices):
        want = scaler_from_dict(ck.scalers["appliances"][d]).inverse(p[i].astype(np.float64))
        np.testing.assert_allclose(out[d], want, rtol=1e-5, atol=1e-3)


def test_start_time_changes_the_time_features(model):
    agg = np.full(model.window, 300.0, np.float32)
    a, b = model.run_window(agg, "2024-01-01T00:00"), model.run_window(agg, "2024-07-01T12:00")
    assert any(not np.allclose(a[d], b[d]) for d in model.devices)


@pytest.mark.parametrize("bad", [np.zeros(10), np.full(480, np.nan)])
def test_bad_windows_are_one_line_errors(model, bad):
    with pytest.raises(UserError, match="finite aggregate values"):
        model.run_window(bad, "2024-01-01T00:00")


def test_bad_start_is_a_one_line_error(model):
    with pytest.raises(UserError, match="bad start time"):
        model.run_window(np.zeros(model.window), "yesterday-ish")


def test_a_z_suffixed_start_time_is_that_wall_clock_time_without_a_warning(model):
    import warnings

    agg = np.full(model.window, 450.0, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z, offset = model.run_window(agg, "2024-04-13T06:30Z"), model.run_window(agg, "2024-04-13T06:30+00:00")
    plain = model.run_window(agg, "2024-04-13T06:30")
    for d in model.devices:
        np.testing.assert_array_equal(z[d], plain[d]), np.testing.assert_array_equal(offset[d], plain[d])
