"""Scalers (data/preprocess.py) off the happy path, worked out by hand: the imported affine scaler, degenerate
training series, NaN in the training values, unknown kinds, the per-channel affines the pages receive, and the
scalers `prepare()` fits (train block only, a missing device at its rated power)."""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.data import Household
from nilmbuild.data.preprocess import (
    MAX_POWER_W,
    SCALERS,
    PrepConfig,
    make_scaler,
    prepare,
    scaler_affine,
    scaler_affines,
    scaler_from_dict,
)
from nilmbuild.errors import UserError


def test_the_imported_affine_scaler():
    s = scaler_from_dict({"kind": "affine", "offset": 10.0, "scale": 2.0})
    assert s.transform(np.array([14.0]))[0] == 2.0 and s.inverse(np.array([2.0]))[0] == 14.0
    assert scaler_affine({"kind": "affine", "offset": 10.0, "scale": 2.0}) == (2.0, 10.0)
    with pytest.raises(UserError, match="never fitted"):
        s.fit(np.ones(3))


#: per kind: a training series whose divisor (max, std, range, mean) is exactly 1e-6 W, and one where it is 1.5e-6 W
EDGE = {
    "max": (np.full(4, 1e-6), np.full(4, 1.5e-6)),
    "mean": (np.full(4, 1e-6), np.full(4, 1.5e-6)),
    "minmax": (np.array([0.0, 1e-6]), np.array([0.0, 1.5e-6])),
    "standard": (None, np.array([0.0, 3e-6] * 2)),  # a std of exactly 1e-6 W is not representable
}


@pytest.mark.parametrize("kind", sorted(SCALERS))
def test_a_constant_training_series_scales_by_one(kind):
    """max/std/range/mean of 0 (or within 1e-6 W of it) would divide by ~0: the divisor becomes 1 instead."""
    assert SCALERS[kind]().fit(np.zeros(5)).affine()[0] == 1.0
    flat, ok = EDGE[kind]
    if flat is not None:
        assert SCALERS[kind]().fit(flat).affine()[0] == 1.0  # exactly 1e-6 is still "constant"
    assert SCALERS[kind]().fit(ok).affine()[0] == pytest.approx(1.5e-6, rel=1e-9)


def test_nan_in_the_training_values_is_ignored():
    x = np.array([np.nan, 20.0, 40.0, np.nan])
    assert SCALERS["max"]().fit(x).max == 40.0
    assert SCALERS["minmax"]().fit(x).affine() == (20.0, 20.0)
    st = SCALERS["standard"]().fit(x)
    assert (st.mean, st.std) == (30.0, 10.0)
    assert SCALERS["mean"]().fit(x).mean == 30.0


def test_unknown_kinds_are_one_line_errors():
    with pytest.raises(UserError, match="unknown scaler 'log'; use one of max, standard, minmax, mean"):
        make_scaler("log")


def test_the_pages_affines_by_hand():
    got = scaler_affines(
        {
            "aggregate": {"kind": "standard", "mean": 300.0, "std": 150.0},
            "appliances": {
                "kettle": {"kind": "minmax", "min": 5.0, "max": 3005.0},
                "fridge": {"kind": "max", "max": 250.0},
            },
        }
    )
    assert got == {
        "aggregate": {"a": 150.0, "b": 300.0},
        "appliances": {"kettle": {"a": 3000.0, "b": 5.0}, "fridge": {"a": 250.0, "b": 0.0}},
    }
    assert scaler_affines({"aggregate": {"kind": "max", "max": 1.0}}) == {
        "aggregate": {"a": 1.0, "b": 0.0},
        "appliances": {},
    }


def _household(days: int = 2) -> Household:
    """1-min series: the aggregate rises 0, 1, 2, ... W, the kettle is 2 W everywhere but 1000 W after the train
    block; no fridge."""
    n = days * 1440
    ts = np.datetime64("2024-01-01", "s") + np.arange(n) * np.timedelta64(60, "s")
    kettle = np.full(n, 2.0, np.float32)
    kettle[n // 2 :] = 1000.0
    return Household(ts, np.arange(n, dtype=np.float32), {"kettle": kettle}, 60, meta={"source": "test"})


@pytest.mark.parametrize("scaler", ["max", "standard"])
def test_prepare_fits_on_the_train_block_only(scaler):
    """Train = the first half of the bins (fractions 0.5/0.25/0.25): aggregate 0..1439 W, kettle 2 W."""
    cfg = PrepConfig(window=48, stride=24, fractions=(0.5, 0.25, 0.25), scaler=scaler, devices=("kettle", "fridge"))
    with pytest.warns(UserWarning, match="fridge"):
        p = prepare(_household(), cfg)
    train = np.arange(1440.0)
    if scaler == "max":
        assert p.scalers["aggregate"] == {"kind": "max", "max": 1439.0}
        assert p.scalers["appliances"]["kettle"] == {"kind": "max", "max": 2.0}
        assert p.scalers["appliances"]["fridge"] == {"kind": "max", "max": MAX_POWER_W["fridge"]}  # missing device
    else:
        assert p.scalers["aggregate"]["mean"] == pytest.approx(train.mean())
        assert p.scalers["aggregate"]["std"] == pytest.approx(train.std())
        assert p.scalers["appliances"]["fridge"] == {"kind": "standard", "mean": 0.0, "std": 1.0}


def test_a_train_block_without_valid_bins_is_a_one_line_error():
    hh = _household()
    hh.aggregate[: int(hh.aggregate.size * 0.8)] = np.nan
    with pytest.raises(UserError, match="the train split has no valid data"):
        prepare(hh, PrepConfig(window=48, stride=24, fractions=(0.5, 0.25, 0.25), devices=("kettle",)))


def test_a_checkpoints_scalers_must_cover_the_aggregate_and_every_device():
    cfg = PrepConfig(window=48, stride=24, fractions=(0.5, 0.25, 0.25), devices=("kettle",))
    kettle = {"kind": "max", "max": 3000.0}
    with pytest.raises(UserError, match="do not cover the aggregate"):
        prepare(_household(), cfg, scalers={"appliances": {"kettle": kettle}})
    with pytest.raises(UserError, match="do not cover kettle"):
        prepare(_household(), cfg, scalers={"aggregate": kettle, "appliances": {"fridge": kettle}})
    p = prepare(
        _household(), cfg, scalers={"aggregate": {"kind": "max", "max": 5000.0}, "appliances": {"kettle": kettle}}
    )
    assert p.scalers == {"aggregate": {"kind": "max", "max": 5000.0}, "appliances": {"kettle": kettle}}
    assert p.train.x[0, 0, 10] == pytest.approx(10.0 / 5000.0)  # the aggregate's 11th minute, 10 W, scaled by it
