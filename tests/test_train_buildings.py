"""Training on several buildings (`nilmbuild train -s nilmtk:STORE --building 1,3,4`), the published UK-DALE protocol's
shape: one model over buildings 1, 3, 4 (here), evaluated on the held-out building 2.

The store is made here from the NILMTK-written fixture (one building, seven days): four disjoint stretches of its
days become buildings 1, 3, 4 and 2 (building 4 without a microwave meter), so every building is real metered data
and each one's times tell which building a sample came from. Expected values come from the one-building path
(`prepare` of each building alone), not from the several-building code under test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.bench.nilmtk_writer import ACTIVE, building_meta, write_store
from nilmbuild.cli import main
from nilmbuild.data import load_source
from nilmbuild.data.buildings import prepare_buildings
from nilmbuild.data.preprocess import PrepConfig, prepare
from nilmbuild.errors import DataWarning
from nilmbuild.train.trainer import TrainConfig, train
from nilmbuild.train.windows import TrainSeries
from tests.test_data_nilmtk import FIXTURE

TINY = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 1, "window": 96, "film_hidden_dim": 8}
DAY = 86_400
T0 = 1_370_476_800  # 2013-06-06 00:00 UTC, the fixture's first sample
#: building -> [first, end) unix seconds: disjoint stretches of the fixture's days, at offsets that are no multiple
#: of a day or of the 60-s grid (a window that joined two of them would jump in time-of-day too)
STRETCHES = {
    1: (T0, T0 + int(1.8 * DAY)),
    3: (T0 + 2 * DAY + 37 * 60 + 30, T0 + int(3.9 * DAY)),
    4: (T0 + int(4.1 * DAY) + 13 * 60, T0 + int(5.4 * DAY)),
    2: (T0 + int(5.6 * DAY), T0 + 7 * DAY),
}
TYPES = {
    "kettle": "kettle",
    "microwave": "microwave",
    "dishwasher": "dish washer",
    "washing_machine": "washing machine",
}
PREP = {"window": 96, "stride": 48, "scaler": "standard", "appliance_scaler": "max"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Buildings 1, 3, 4, 2 of a NILMTK store, cut from the fixture; building 4 has no microwave meter."""
    with pytest.warns(DataWarning):
        hh = load_source(f"nilmtk:{FIXTURE}")
    sec = hh.timestamps.astype("datetime64[s]").astype(np.int64)
    buildings = {}
    for number, (lo, hi) in STRETCHES.items():
        keep = (sec >= lo) & (sec < hi)
        devs = [d for d in TYPES if d in hh.appliances and not (number == 4 and d == "microwave")]
        meters = {1: (sec[keep], {ACTIVE: hh.aggregate[keep]})}
        meters.update({i + 2: (sec[keep], {ACTIVE: hh.appliances[d][keep]}) for i, d in enumerate(devs)})
        meta = building_meta(number, [1], [(TYPES[d], [i + 2]) for i, d in enumerate(devs)])
        buildings[number] = {"metadata": meta, "meters": meters}
    return write_store(tmp_path_factory.mktemp("buildings") / "four.h5", buildings)


def _each(store, houses, cfg, scalers=None):
    """Each building prepared alone by the one-building path (with `scalers`, or its own)."""
    out = []
    for h in houses:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(prepare(load_source(f"nilmtk:{store}", house=h), cfg, scalers=scalers))
    return out


def _building_of(t: np.ndarray) -> np.ndarray:
    """Which stretch (building) each datetime64 falls in, by the times this test wrote."""
    sec = t.astype("datetime64[s]").astype(np.int64)
    out = np.zeros(sec.shape, np.int64)
    for number, (lo, hi) in STRETCHES.items():
        out[(sec >= lo // 60 * 60) & (sec < hi)] = number
    return out


def test_scalers_are_fitted_on_every_buildings_train_part_together(store):
    cfg = PrepConfig(**PREP)
    with pytest.warns(DataWarning, match=r"microwave \(not in building 4\)"):
        both = prepare_buildings(f"nilmtk:{store}", (1, 3, 4), cfg)
    assert both.devices == ("kettle", "dishwasher", "washing_machine")  # the microwave is not metered in 4
    alone = _each(store, (1, 3, 4), PrepConfig(**PREP, devices=both.devices))
    trains = [p.train for p in alone]
    agg = np.concatenate([sp.aggregate_w[sp.valid.astype(bool)] for sp in trains]).astype(np.float64)
    assert both.scalers["aggregate"]["mean"] == pytest.approx(agg.mean(), rel=1e-5)
    assert both.scalers["aggregate"]["std"] == pytest.approx(agg.std(), rel=1e-5)
    for i, d in enumerate(both.devices):
        peak = max(float(sp.appliances_w[i][sp.valid.astype(bool)].max()) for sp in trains)
        assert both.scalers["appliances"][d]["max"] == pytest.approx(peak, rel=1e-9), d
    assert agg.mean() != pytest.approx(alone[0].scalers["aggregate"]["mean"], rel=1e-3)  # not building 1's alone


def test_windows_are_each_buildings_own_and_never_cross_a_boundary(store):
    cfg = PrepConfig(**PREP)
    with pytest.warns(DataWarning):
        both = prepare_buildings(f"nilmtk:{store}", (1, 3, 4), cfg)
    alone = _each(store, (1, 3, 4), PrepConfig(**PREP, devices=both.devices), scalers=both.scalers)
    for split in ("train", "val", "test"):  # every building split 70/15/15 on its own timeline, windows in order
        for f in ("x", "y", "t0"):
            np.testing.assert_array_equal(
                getattr(both[split], f), np.concatenate([getattr(p[split], f) for p in alone])
            )
    step, W = np.timedelta64(60, "s"), 96
    series = TrainSeries(both, [1] * len(both.devices), W)
    ts = both.train.timestamps
    assert series.starts.size > 0
    for s in series.starts:  # every start a random-offset epoch may draw
        window = ts[s : s + W]
        assert (np.diff(window) == step).all() and np.unique(_building_of(window)).size == 1
        assert _building_of(window)[0] != 0
    assert set(_building_of(ts[series.starts])) == {1, 3, 4}
    drawn = series.draw(64, seed=3)["x"].numpy()  # hour of day (channels 5, 6) advances one minute per step
    hour = np.arctan2(drawn[:, 5], drawn[:, 6])
    np.testing.assert_allclose(np.angle(np.exp(1j * np.diff(hour, axis=1))), 2 * np.pi / 1440, atol=1e-4)


def test_a_bad_building_list_names_the_buildings_the_store_has(store, tmp_path):
    args = ["train", "-s", f"nilmtk:{store}", "--epochs", "1", "--out", str(tmp_path / "m.pt"), "--quiet"]
    r = CliRunner().invoke(main, [*args, "--building", "1,7,9"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "no building 7, 9 (found buildings: 1, 2, 3, 4)" in r.output
    r = CliRunner().invoke(main, [*args, "--building", "1,4", "--devices", "kettle,microwave"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "building 4 of nilmtk:" in r.output and "has no microwave" in r.output
    r = CliRunner().invoke(main, ["train", "-s", "synthetic", "--building", "1,3", "--out", str(tmp_path / "s.pt")])
    assert r.exit_code == 2 and "synthetic has no buildings" in r.output, r.output
    r = CliRunner().invoke(main, [*args, "--building", "1,1"])
    assert r.exit_code == 2 and "names a building twice" in r.output, r.output


def test_a_model_over_three_buildings_records_them_and_runs_on_the_held_out_one(store, tmp_path, prepared_runs):
    from nilmbuild.model.checkpoint import load_checkpoint
    from nilmbuild.pipeline import load_data_for

    out = tmp_path / "b134.pt"
    tc = TrainConfig(
        source=f"nilmtk:{store}",
        house=(1, 3, 4),
        epochs=1,
        max_steps=2,
        batch_size=4,
        windows_per_epoch=8,
        model=TINY,
        out=str(out),
        progress=False,
        threads=1,
        pcgrad=False,
    )
    train(tc, log=lambda *a: None)
    prov = load_checkpoint(out).provenance
    assert prov["house"] == [1, 3, 4] and [b["house"] for b in prov["buildings"]] == [1, 3, 4]
    for b in prov["buildings"]:  # each building's own span and splits, inside its stretch of the fixture's days
        lo, hi = STRETCHES[b["house"]]
        assert _building_of(np.array(b["span"], "datetime64[s]")).tolist() == [b["house"]] * 2, (b, lo, hi)
        assert b["windows"]["train"] > 0 and b["splits"]["test"] is not None
    assert sum(b["windows"]["train"] for b in prov["buildings"]) == prov["windows"]["train"]

    r = CliRunner().invoke(main, ["train", "--resume", str(tmp_path / "b134.resume.pt"), "--quiet"])
    assert r.exit_code == 0, r.output  # no --building: the resumed run reads buildings 1, 3, 4 again
    np.testing.assert_array_equal(prepared_runs[1].train.x, prepared_runs[0].train.x)
    again = load_data_for(load_checkpoint(out))  # `nilmbuild calibrate`: the same three buildings, same scalers
    np.testing.assert_array_equal(again.val.x, prepared_runs[0].val.x)

    r = CliRunner().invoke(main, ["evaluate", "-c", str(out), "--building", "2", "--json"])
    assert r.exit_code == 0, r.output
    assert '"samples"' in r.output and "kettle" in r.output
    r = CliRunner().invoke(main, ["evaluate", "-c", str(out), "--split", "val", "--json"])
    assert r.exit_code == 0, r.output  # without --building: the three training buildings' val parts
    site = [
        "site",
        "-c",
        str(out),
        "--building",
        "2",
        "--pages",
        "index",
        "--no-cache",
        "-q",
        "-o",
        str(tmp_path / "s"),
    ]
    r = CliRunner().invoke(main, site)
    assert r.exit_code == 0, r.output
    assert 'data-slug="index"' in (tmp_path / "s" / "index.html").read_text()
    r = CliRunner().invoke(main, ["site", "-c", str(out), "--pages", "index", "--no-cache", "-q", "-o", str(tmp_path)])
    assert r.exit_code == 2 and "pass --building N" in r.output and r.output.count("\n") == 1, r.output
