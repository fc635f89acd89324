"""Preprocessing: scalers, ON/OFF, gap rule, windows, leakage-free split, features, example batch, npz, CLI."""

import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import DEVICE_NAMES, Household, Prepared, PrepConfig, example_batch, prepare, simulate_household
from nilmbuild.data.preprocess import (
    SCALERS,
    bounded_ffill,
    exogenous,
    make_scaler,
    on_off,
    scaler_from_dict,
    split_bounds,
)


@pytest.fixture(scope="module")
def sim():
    return simulate_household(20, seed=2)


@pytest.fixture(scope="module")
def prep(sim):
    return prepare(sim, PrepConfig(stride=120))


@pytest.mark.parametrize("kind", sorted(SCALERS))
def test_scalers_roundtrip(kind):
    x = np.array([0.0, 10.0, 250.0, np.nan, 40.0])
    s = make_scaler(kind).fit(x)
    z = s.transform(x[:3])
    assert np.allclose(s.inverse(z), x[:3])
    t = scaler_from_dict(s.to_dict())
    assert type(t) is type(s) and np.allclose(t.transform(x[:3]), z)
    assert make_scaler(kind).fit(np.zeros(4)).transform(np.ones(1))[0] == pytest.approx(
        {"max": 1.0, "standard": 1.0, "minmax": 1.0, "mean": 1.0}[kind]
    )  # constant series: no div by 0
    if kind == "max":
        assert z.max() == pytest.approx(1.0)


def test_on_off_duration_rules():
    p = np.array([0, 30, 30, 0, 0, 30, 0, 0, 0, 0, 30, 30, 30, 30, 0], float)
    assert on_off(p, 20, 1, 1).tolist() == [0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0]
    assert on_off(p, 20, 1, 3).tolist() == [0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0]  # short OFF bridged
    assert on_off(p, 20, 3, 1).tolist() == [0] * 10 + [1, 1, 1, 1, 0]  # short ON dropped


def test_bounded_ffill_rule():
    x = np.array([1, np.nan, np.nan, 4, np.nan, np.nan, np.nan, np.nan, 9, np.nan])
    y, n = bounded_ffill(x, 3)
    assert n == 3 and y[:4].tolist() == [1, 1, 1, 4] and np.isnan(y[4:8]).all() and y[9] == 9


def test_exogenous_features():
    ts = np.array(["2024-03-01T06:30:00", "2024-12-31T18:00:00"], dtype="datetime64[s]")
    e = exogenous(ts)
    assert e.shape == (6, 2) and e.dtype == np.float32
    assert np.allclose(
        e[:, 0],
        [
            np.sin(2 * np.pi * 3 / 12),
            np.cos(2 * np.pi * 3 / 12),
            np.sin(2 * np.pi * 61 / 365),
            np.cos(2 * np.pi * 61 / 365),
            np.sin(2 * np.pi * 6.5 / 24),
            np.cos(2 * np.pi * 6.5 / 24),
        ],
        atol=1e-6,
    )
    assert np.allclose(e[4:, 1], [np.sin(2 * np.pi * 0.75), np.cos(2 * np.pi * 0.75)], atol=1e-6)


def test_shapes_and_scaling(prep, sim):
    W, M = 480, len(DEVICE_NAMES)
    for name in ("train", "val", "test"):
        sp = prep[name]
        assert sp.x.shape[1:] == (7, W) and sp.y.shape[1:] == (M, 2, W) and sp.x.dtype == np.float32
        assert sp.t0.shape == (sp.x.shape[0],) and sp.t0.dtype == np.dtype("datetime64[s]")
        assert set(np.unique(sp.y[:, :, 1])) <= {0.0, 1.0}
        assert sp.appliances_w.shape == (M, sp.timestamps.size) and sp.states.shape == sp.appliances_w.shape
    tr = prep.train
    assert tr.x[:, 0].max() <= 1.0 + 1e-6 and tr.y[:, :, 0].max() <= 1.0 + 1e-6  # max-scaled on train
    # channel 0 of a window == scaled continuous aggregate at the same place
    i = int(np.searchsorted(tr.timestamps, tr.t0[3]))
    assert np.allclose(prep.aggregate_scaler().inverse(tr.x[3, 0]), tr.aggregate_w[i : i + W], atol=1e-2)
    assert np.allclose(tr.y[3, :, 1], tr.states[:, i : i + W])
    # 20 days at 1 min = 28,800 bins; ON fractions sane
    assert prep.stats["resampled_bins"] == 20 * 1440
    assert 0.2 < prep.stats["on_fraction"]["fridge"] < 0.5 and prep.stats["on_fraction"]["kettle"] < 0.05
    assert prep.min_on_steps["washing_machine"] == 30 and prep.min_off_steps["kettle"] == 1


def test_split_has_no_leakage_and_respects_gaps(prep):
    W = 480
    spans = {}
    for name in ("train", "val", "test"):
        sp = prep[name]
        covered = (sp.t0[:, None] + np.arange(W) * np.timedelta64(60, "s")).ravel()
        assert set(covered.tolist()) <= set(sp.timestamps.tolist())  # windows stay inside their block
        spans[name] = (sp.timestamps.min(), sp.timestamps.max(), set(covered.tolist()))
    for a, b in (("train", "val"), ("val", "test"), ("train", "test")):
        assert not spans[a][2] & spans[b][2]  # no timestamp in two splits
        assert spans[b][0] > spans[a][1]  # blocks ordered in time
    assert (prep.val.timestamps[0] - prep.train.timestamps[-1]).astype(int) >= W * 60  # gap_windows = 1
    assert (prep.test.timestamps[0] - prep.val.timestamps[-1]).astype(int) >= W * 60


def test_explicit_split_dates():
    ts = np.datetime64("2013-09-01", "s") + np.arange(60 * 1440) * np.timedelta64(60, "s")
    b = split_bounds(ts, PrepConfig(val_from="2013-09-20", test_from="2013-10-01", gap_windows=0))
    assert str(ts[b[1][0]]) == "2013-09-20T00:00:00" and str(ts[b[2][0]]) == "2013-10-01T00:00:00"


def test_long_gaps_drop_windows_and_missing_devices_warn():
    h = simulate_household(6, seed=5)
    keep = np.ones(len(h), bool)
    keep[30000:31000] = False  # a 100 min hole
    apps = {d: v[keep] for d, v in h.appliances.items() if d != "fridge"}
    agg = h.aggregate[keep].copy()
    agg[5000:5020] = np.nan  # 2 min of NaN: filled
    hh = Household(h.timestamps[keep], agg, apps, 6, meta={"dataset": "csv", "source": "t"})
    with pytest.warns(UserWarning, match="fridge"):
        p = prepare(hh, PrepConfig(window=120, stride=60, gap_windows=0, fractions=(1, 0, 0)))
    hole = (np.datetime64(h.timestamps[30000]), np.datetime64(h.timestamps[30999]))
    end = p.train.t0 + np.timedelta64(120 * 60, "s")
    assert not ((p.train.t0 <= hole[1]) & (end > hole[0])).any()  # no window overlaps the hole
    assert p.stats["invalid_bins"] >= 98 and p.stats["gaps_filled_bins"] >= 1
    assert p.meta["missing"] == ["fridge"] and p.train.y[:, 2].max() == 0


def test_example_batch_is_seeded_and_covers_devices(prep):
    x, y, t0 = example_batch(prep, "test", batch_size=16, seed=0)
    x2, _, t02 = example_batch(prep, "test", batch_size=16, seed=0)
    assert x.shape == (16, 7, 480) and np.array_equal(x, x2) and np.array_equal(t0, t02)
    present = prep.test.y[:, :, 1].any(axis=(0, 2))
    assert (y[:, :, 1].any(axis=(0, 2)) == present).all()  # every active device is in the batch
    assert (np.diff(t0.astype(np.int64)) > 0).all()


def test_npz_roundtrip(prep, tmp_path):
    f = tmp_path / "sub" / "p.npz"
    prep.to_npz(f)
    q = Prepared.from_npz(f)
    assert q.devices == prep.devices and q.scalers == prep.scalers and q.stats == prep.stats
    for s in ("train", "val", "test"):
        for fld in ("x", "y", "t0", "timestamps", "valid", "states"):
            assert np.array_equal(getattr(q[s], fld), getattr(prep[s], fld))
    assert [p.name for p in f.parent.iterdir()] == ["p.npz"]  # no temp file left behind


def test_cli_data_synthetic_writes_npz(tmp_path):
    out = tmp_path / "p.npz"
    r = CliRunner().invoke(main, ["data", "--days", "8", "--seed", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "ON fraction" in r.output and "windows" in r.output and "kettle" in r.output
    assert Prepared.from_npz(out).train.x.shape[1:] == (7, 480)
    r = CliRunner().invoke(main, ["data", "--help"])
    assert r.exit_code == 0 and "Examples" in r.output and "csv:" in r.output


def test_prepare_with_given_scalers_reuses_them():
    from nilmbuild.data import simulate_household
    from nilmbuild.data.preprocess import prepare

    hh = simulate_household(days=6, seed=3)
    fitted = prepare(hh)
    scalers = {
        "aggregate": {**fitted.scalers["aggregate"]},
        "appliances": {d: {**v} for d, v in fitted.scalers["appliances"].items()},
    }
    scalers["aggregate"]["max"] = 2 * scalers["aggregate"]["max"]
    again = prepare(hh, scalers=scalers)
    assert again.scalers["aggregate"]["max"] == scalers["aggregate"]["max"]
    np.testing.assert_allclose(again.train.x[:, 0], fitted.train.x[:, 0] / 2, rtol=1e-6)


def _dishwasher_day(like: str) -> tuple[Household, slice]:
    """One day at 1 min: a dishwasher cycle of three 2.2 kW heating bursts with 10-minute ~100 W pump
    phases between them, starting at 10:00. Returns the household and the cycle's minutes."""
    n = 24 * 60
    ts = np.datetime64("2024-03-04T00:00:00") + np.arange(n) * np.timedelta64(60, "s")
    dw = np.zeros(n, np.float32)
    phases = [(2200.0, 12), (100.0, 10), (2200.0, 12), (90.0, 10), (2200.0, 8)]
    t = 600
    for watts, minutes in phases:
        dw[t : t + minutes] = watts
        t += minutes
    agg = dw + 150.0
    hh = Household(ts, agg, {"dishwasher": dw}, 60, {"dataset": "csv", "source": "fixture", "like": like})
    return hh, slice(600, t)


@pytest.mark.parametrize("like", ["ukdale", "refit"])
def test_dishwasher_cycle_with_pump_phases_is_on_for_the_whole_cycle(like):
    hh, cycle = _dishwasher_day(like)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = prepare(
            hh, PrepConfig(devices=("dishwasher",), window=60, stride=60, fractions=(1.0, 0.0, 0.0), gap_windows=0)
        )
    states = p.train.states[0]
    assert p.thresholds_w["dishwasher"] == (300.0 if like == "refit" else 10.0)
    assert states[cycle].all(), f"{like}: the cycle is not ON throughout"
    assert states[: cycle.start].sum() == 0 and states[cycle.stop :].sum() == 0
    assert p.stats["energy_in_on"]["dishwasher"] == pytest.approx(1.0)


def test_energy_in_on_reports_missed_activations():
    """A 12-minute 2 kW washing-machine burst under a 30-minute minimum ON is dropped: its energy is
    outside every ON period, and the summary says so."""
    hh, _ = _dishwasher_day("ukdale")
    wm = np.zeros_like(hh.aggregate)
    wm[100:112] = 2000.0
    hh = Household(hh.timestamps, hh.aggregate + wm, {"washing_machine": wm}, 60, hh.meta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = prepare(
            hh, PrepConfig(devices=("washing_machine",), window=60, stride=60, fractions=(1.0, 0.0, 0.0), gap_windows=0)
        )
    assert p.stats["energy_in_on"]["washing_machine"] == 0.0
    from nilmbuild.data.preprocess import summary

    assert "only 0% of its energy is inside ON periods" in summary(p)


def test_refit_keeps_short_heating_bursts():
    """At REFIT's 300 W threshold only a washing machine's heating burst passes; REFIT's conventions drop no
    ON run, so the 12-minute burst stays ON (the UK-DALE rules' 30-minute minimum would delete it)."""
    hh, _ = _dishwasher_day("refit")
    wm = np.zeros_like(hh.aggregate)
    wm[100:112] = 2000.0
    wm[112:160] = 120.0  # drum tumbling below 300 W
    hh = Household(hh.timestamps, hh.aggregate + wm, {"washing_machine": wm}, 60, hh.meta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = prepare(
            hh, PrepConfig(devices=("washing_machine",), window=60, stride=60, fractions=(1.0, 0.0, 0.0), gap_windows=0)
        )
    assert p.train.states[0][100:112].all() and p.train.states[0].sum() == 12
    assert p.stats["energy_in_on"]["washing_machine"] == pytest.approx(24000 / (24000 + 48 * 120))


def test_scaler_affines_are_each_scalers_inverse():
    """What the pages receive ({a, b} per channel, z * a + b) is the inverse the scalers apply, for every kind."""
    from nilmbuild.data.preprocess import SCALERS, scaler_affines

    x = np.array([3.0, 40.0, 1200.0, 2500.0, 0.0])
    z = np.array([-0.5, 0.0, 0.25, 1.0, 2.0])
    for cls in SCALERS.values():
        sc = cls().fit(x)
        ab = scaler_affines({"aggregate": sc.to_dict(), "appliances": {"kettle": sc.to_dict()}})
        assert ab["aggregate"] == ab["appliances"]["kettle"]
        np.testing.assert_allclose(z * ab["aggregate"]["a"] + ab["aggregate"]["b"], sc.inverse(z), rtol=0, atol=1e-9)
        np.testing.assert_allclose(sc.transform(sc.inverse(z)), z, rtol=0, atol=1e-12)
    mm = SCALERS["minmax"]().fit(x)
    assert scaler_affines({"aggregate": mm.to_dict()})["aggregate"] == {"a": 2500.0, "b": 0.0}
    st = SCALERS["standard"]().fit(x)
    assert scaler_affines({"aggregate": st.to_dict()})["aggregate"] == {"a": st.std, "b": st.mean}
