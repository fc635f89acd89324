"""`nilmtk:PATH.h5`: NILMTK DataStores read by building and time range, metadata never unpickled freely.

Hand-made stores (tests/nilmtk_writer.py) carry values chosen here, so every expected number is worked out in
the test; the UK-DALE fixture was written by NILMTK's own converter (tests/fixtures/nilmtk/make_ukdale_house2.py)
and is checked against the same days read from the CSV source.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.bench.nilmtk_writer import ACTIVE, APPARENT, building_meta, write_store
from nilmbuild.cli import main
from nilmbuild.data import load_source, nilmtk_store
from nilmbuild.data.safe_pickle import RefusedPickle, TimezoneName, loads_plain
from nilmbuild.errors import DataWarning, UserError
from tests.hostile import RunsCode

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "nilmtk" / "ukdale_house2_7d.h5"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"  # = conftest.SHARED_DATA
T0 = 1_370_476_800  # 2013-06-06 00:00:00 UTC, a multiple of 6 s


def load(path, **kw):
    spec = f"nilmtk:{path}"
    return load_source(spec, house=kw.pop("building", None), span=(kw.pop("start", None), kw.pop("end", None)))


# ---- the restricted unpickler ----------------------------------------------------------------------


def test_plain_values_round_trip_and_pytz_becomes_its_name():
    value = {"elec_meters": {1: {"site_meter": True, "x": 1.5}}, "l": [("power", "active")], "s": {1, 2}, "n": None}
    for proto in (0, 2, pickle.HIGHEST_PROTOCOL):
        assert loads_plain(pickle.dumps(value, protocol=proto)) == value
    tz = b"cpytz\n_p\n(S'Europe/London'\nI-75\nI0\nS'LMT'\ntR."  # how pandas 0.x pickled an index's pytz tz
    got = loads_plain(tz)
    assert isinstance(got, TimezoneName) and got == "Europe/London"
    assert loads_plain(b"(dp0\nS'name'\np1\nS'UK-DALE'\np2\ns.") == {"name": "UK-DALE"}  # Python 2 str


def test_every_allowed_name_stands_for_its_value():
    """What old NILMTK stores pickle besides plain values: pytz zones (by `_p`, `timezone` and `_UTC`) and
    Python 2's set/frozenset; each must read back as the zone's name or the set, never be refused."""
    assert loads_plain(b"cpytz\ntimezone\n(S'Europe/London'\ntR.") == "Europe/London"
    assert loads_plain(b"cpytz\n_UTC\n(tR.") == "UTC"
    assert loads_plain(b"c__builtin__\nset\n((lp0\nI1\naI2\natR.") == {1, 2}
    assert loads_plain(b"c__builtin__\nfrozenset\n((lp0\nI3\natR.") == frozenset({3})
    for proto in (2, 3):  # Python 3 names them builtins.set / builtins.frozenset from protocol 3
        assert loads_plain(pickle.dumps([{5}, frozenset({4})], protocol=proto)) == [{5}, frozenset({4})]
    assert b"cbuiltins\nfrozenset" in pickle.dumps(frozenset({4}), protocol=3)
    with pytest.raises(RefusedPickle, match="not text"):
        loads_plain(b"cpytz\ntimezone\n(I5\ntR.")


def test_a_pickle_that_would_run_code_is_refused(tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(RefusedPickle, match="system"):
        loads_plain(pickle.dumps({"ok": [RunsCode(marker)]}))
    with pytest.raises(RefusedPickle):
        loads_plain(b"cbuiltins\neval\n(S'1'\ntR.")
    assert not marker.exists()


# ---- hand-made stores ------------------------------------------------------------------------------


def two_mains_store(tmp_path) -> Path:
    """Mains 1 (active, 1 s: 0..11 W), mains 2 (apparent only, 6 s: 100, 200 W), kettle (6 s), a laptop."""
    meta = building_meta(1, [1, 2], [("kettle", [3]), ("laptop computer", [4])])
    t1, t6 = T0 + np.arange(12), T0 + np.array([0, 6])
    meters = {
        1: (t1, {ACTIVE: np.arange(12.0), APPARENT: np.full(12, 999.0)}),
        2: (t6, {APPARENT: [100.0, 200.0]}),
        3: (t6, {ACTIVE: [2000.0, 0.0]}),
        4: (t6, {ACTIVE: [30.0, 30.0]}),
    }
    return write_store(tmp_path / "two.h5", {1: {"metadata": meta, "meters": meters}})


def test_two_mains_are_summed_each_in_the_power_it_has_on_the_slowest_period(tmp_path):
    with pytest.warns(DataWarning, match=r"laptop computer \(meter 4\)"):
        hh = load(two_mains_store(tmp_path))
    assert hh.rate_s == 6  # mains 1 is 1 s, the rest 6 s: 1-s samples averaged into 6-s bins
    assert hh.timestamps.astype(np.int64).tolist() == [T0, T0 + 6]
    assert hh.aggregate.tolist() == [2.5 + 100.0, 8.5 + 200.0]  # active of mains 1 (not its 999 W apparent)
    assert list(hh.appliances) == ["kettle"] and hh.appliances["kettle"].tolist() == [2000.0, 0.0]
    assert hh.meta["site_meters"] == {1: "active", 2: "apparent"}
    assert hh.meta["periods_s"] == {1: 1, 2: 6, 3: 6}
    assert hh.meta["unknown_appliances"] == ["laptop computer (meter 4)"]


def ramp_store(tmp_path, n: int = 100) -> Path:
    t = T0 + 6 * np.arange(n)
    meters = {1: (t, {ACTIVE: np.arange(n, dtype=float)}), 2: (t, {ACTIVE: 10.0 * np.arange(n)})}
    meta = building_meta(1, [1], [("washer dryer", [2])])
    return write_store(tmp_path / "ramp.h5", {1: {"metadata": meta, "meters": meters}})


def test_start_end_read_only_that_range_and_chunk_seams_change_nothing(tmp_path, monkeypatch):
    path = ramp_store(tmp_path)
    start, end = str(np.datetime64(T0 + 60, "s")), str(np.datetime64(T0 + 120, "s"))
    hh = load(path, start=start, end=end)
    assert hh.aggregate.tolist() == list(range(10, 20))  # rows 10..19: [T0+60 s, T0+120 s)
    assert hh.appliances["washing_machine"].tolist() == [10.0 * i for i in range(10, 20)]
    monkeypatch.setattr(nilmtk_store, "CHUNK_ROWS", 7)  # many chunks, seams inside the range
    again = load(path)
    assert again.aggregate.tolist() == list(range(100)) and len(again) == 100


def test_the_period_comes_from_the_index_not_the_metadata(tmp_path):
    t = T0 + 60 * np.arange(10)
    meta = building_meta(1, [1], [("fridge freezer", [2])])
    meta["elec_meters"][1]["device_model"] = "said7s"
    root = {"name": "REFIT", "meter_devices": {"said7s": {"sample_period": 7}}}
    meters = {1: (t, {ACTIVE: np.ones(10)}), 2: (t, {ACTIVE: np.ones(10)})}
    hh = load(write_store(tmp_path / "p.h5", {1: {"metadata": meta, "meters": meters}}, root=root))
    assert hh.rate_s == 60 and hh.meta["declared_periods_s"] == {1: 7} and hh.meta["like"] == "refit"
    assert "fridge" in hh.appliances


def test_default_building_is_the_first_and_a_renumbered_one_is_reported_both_ways(tmp_path):
    t = T0 + 6 * np.arange(3)
    meters = {1: (t, {ACTIVE: [1.0, 2.0, 3.0]}), 2: (t, {ACTIVE: [0.0, 5.0, 0.0]})}
    b = {
        n: {"metadata": building_meta(n, [1], [("microwave", [2])], original_name=f"house_{n + 1}"), "meters": meters}
        for n in (19, 5)
    }
    path = write_store(tmp_path / "refit.h5", b)
    hh = load(path)
    assert hh.meta["house"] == 5 and hh.meta["building"] == "building 5 (original house_6)"
    assert load(path, building=19).meta["building"] == "building 19 (original house_20)"
    with pytest.raises(UserError, match=r"no building 4 \(found buildings: 5, 19\); pass --building"):
        load(path, building=4)


def test_a_site_meter_under_another_site_meter_is_not_counted_twice(tmp_path):
    t = T0 + 6 * np.arange(2)
    meta = building_meta(2, [20, 1], [("kettle", [8])])
    meta["elec_meters"][1]["submeter_of"] = 20  # UK-DALE: the 6-s whole-house channel under the 1-s mains
    meters = {20: (t, {ACTIVE: [300.0, 400.0]}), 1: (t, {APPARENT: [310.0, 410.0]}), 8: (t, {ACTIVE: [0.0, 0.0]})}
    hh = load(write_store(tmp_path / "u.h5", {2: {"metadata": meta, "meters": meters}}))
    assert hh.aggregate.tolist() == [300.0, 400.0] and hh.meta["site_meters"] == {20: "active"}


# ---- bad input: one line, what was found, what to pass ------------------------------------------------


def test_no_site_meter_and_no_known_appliance(tmp_path):
    t = T0 + 6 * np.arange(2)
    meta = building_meta(1, [1], [("laptop computer", [2])])
    meters = {1: (t, {ACTIVE: [1.0, 1.0]}), 2: (t, {ACTIVE: [1.0, 1.0]})}
    path = write_store(tmp_path / "a.h5", {1: {"metadata": meta, "meters": meters}})
    with pytest.raises(UserError, match=r"no appliance nilmbuild knows \(found: laptop computer \(meter 2\)\)"):
        load(path)
    meta = building_meta(1, [1], [("kettle", [2])])
    meta["elec_meters"][1]["disabled"] = True
    path = write_store(tmp_path / "b.h5", {1: {"metadata": meta, "meters": meters}})
    with pytest.raises(UserError, match=r"no site meter .*\(site meter\(s\) 1 disabled\).*pass another --building"):
        load(path)


def test_not_hdf5_and_truncated(tmp_path):
    text = tmp_path / "x.h5"
    text.write_text("time,aggregate\n")
    with pytest.raises(UserError, match=r"not an HDF5 file \(it starts with b'time,agg'\)"):
        load(text)
    whole = ramp_store(tmp_path, n=5000).read_bytes()
    cut = tmp_path / "cut.h5"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(UserError, match="truncated"):
        load(cut)


@pytest.mark.parametrize("where", ["root", "building", "kind"])
def test_a_planted_pickle_is_refused_and_never_runs(tmp_path, where):
    import tables

    marker = tmp_path / "ran"
    path = ramp_store(tmp_path, n=3)
    with tables.open_file(str(path), "a") as f:
        node = {"root": f.root, "building": f.root.building1, "kind": f.root.building1.elec.meter1.table}[where]
        name = "values_block_0_kind" if where == "kind" else "metadata"
        node._v_attrs[name] = [RunsCode(marker)]  # PyTables pickles it
    assert not marker.exists()
    r = CliRunner().invoke(main, ["data", "-s", f"nilmtk:{path}"])
    assert r.exit_code == 2 and "not plain data (refused to load posix.system)" in r.output
    assert r.output.count("\n") == 1 and r.output.startswith("error: ")
    assert not marker.exists()


@pytest.mark.realdata
@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("co_test", "no appliance nilmbuild knows"),
        ("energy", "no appliance nilmbuild knows"),
        ("energy_complex", "no appliance nilmbuild knows"),
        ("random", "no site meter"),
    ],
)
def test_nilmtks_own_test_stores_give_one_line_errors(name, found):
    r = CliRunner().invoke(main, ["data", "-s", f"nilmtk:{SHARED / 'nilmtk' / f'{name}.h5'}"])
    assert r.exit_code == 2 and found in r.output and r.output.count("\n") == 1, r.output


# ---- a store NILMTK wrote: UK-DALE house 2, seven days -----------------------------------------------


def test_the_nilmtk_written_fixture_reads_as_its_script_made_it():
    with pytest.warns(DataWarning):
        hh = load(FIXTURE)
    assert hh.meta["house"] == 2 and hh.meta["building"] == "building 2" and hh.meta["like"] == "ukdale"
    assert hh.rate_s == 30 and len(hh) == 7 * 2880
    assert str(hh.timestamps[0]) == "2013-06-06T00:00:00" and str(hh.timestamps[-1]) == "2013-06-12T23:59:30"
    assert hh.meta["site_meters"] == {20: "apparent"}  # UK-DALE's 1-s mains; the subset has no active power
    assert sorted(hh.appliances) == ["dishwasher", "kettle", "microwave", "washing_machine"]
    assert hh.meta["declared_periods_s"] == {20: 1, 8: 6, 12: 6, 13: 6, 15: 6}  # meter_devices.yaml says so
    assert "rice cooker (meter 9)" in hh.meta["unknown_appliances"]


@pytest.mark.realdata
def test_the_fixture_gives_the_csv_sources_figures_over_the_same_days():
    from nilmbuild.data import PrepConfig, prepare

    span = ("2013-06-06", "2013-06-13")
    with pytest.warns(DataWarning):
        h5 = load(FIXTURE)
    csv = load_source(f"csv:{SHARED / 'ukdale-house2-30s'}", span=span)
    assert np.array_equal(h5.timestamps, csv.timestamps) and np.array_equal(h5.aggregate, csv.aggregate)
    for d in csv.appliances:
        assert np.array_equal(h5.appliances[d], csv.appliances[d]), d
    with pytest.warns(UserWarning, match="fridge"):
        a, b = prepare(h5, PrepConfig()), prepare(csv, PrepConfig())
    assert a.stats["energy_kwh"] == b.stats["energy_kwh"] and a.stats["on_fraction"] == b.stats["on_fraction"]
    assert 5.0 < a.stats["energy_kwh"]["kettle"] < 5.2  # `nilmbuild data` on both prints 5.10 kWh


def test_data_train_and_evaluate_run_on_the_fixture(tmp_path):
    src = f"nilmtk:{FIXTURE}"
    r = CliRunner().invoke(main, ["data", "-s", src])
    assert r.exit_code == 0, r.output
    assert "aggregate = meter 20 apparent power (no active power values in this span)" in r.output
    ck = tmp_path / "m.pt"
    args = ["train", "-s", src, "--epochs", "1", "--max-steps", "1", "--batch-size", "2", "--threads", "1"]
    r = CliRunner().invoke(
        main, [*args, "--start", "2013-06-07", "--windows-per-epoch", "4", "--out", str(ck), "--quiet"]
    )
    assert r.exit_code == 0 and ck.is_file(), r.output
    resume = ["train", "--resume", str(tmp_path / "m.resume.pt"), "--max-steps", "2", "--quiet"]
    r = CliRunner().invoke(main, resume)  # no --start: the run reads the span it was started with
    assert r.exit_code == 0, r.output
    from nilmbuild.model.checkpoint import load_checkpoint

    prov = load_checkpoint(str(ck)).provenance
    assert prov["start"] == "2013-06-07" and prov["span"][0] == "2013-06-07T00:00:00"
    r = CliRunner().invoke(main, ["evaluate", "-c", str(ck), "--json"])
    assert r.exit_code == 0, r.output
    assert '"samples"' in r.output and "kettle" in r.output


def test_read_attr_native_values_broken_pickles_and_persistent_ids(tmp_path):
    """Native attributes come back as they are (bytes decoded as UTF-8, bad bytes replaced), a pickle-looking
    attribute that does not unpickle is a one-line error, and a persistent id is refused, not read as None."""
    import tables

    path = tmp_path / "attrs.h5"
    with tables.open_file(str(path), "w") as f:
        a = f.root._v_attrs
        a.text, a.n, a.raw, a.bad, a.broken = (
            "plain text.",
            7,
            np.bytes_(b"UK-DALE"),
            np.bytes_(b"\xffx"),
            np.bytes_(b"no."),
        )
    with nilmtk_store.open_store(path) as f:
        assert nilmtk_store.read_attr(path, f.root, "text") == "plain text."
        assert nilmtk_store.read_attr(path, f.root, "n") == 7
        assert nilmtk_store.read_attr(path, f.root, "raw") == "UK-DALE"
        assert nilmtk_store.read_attr(path, f.root, "bad") == "\ufffdx"
        assert nilmtk_store.read_attr(path, f.root, "absent", default=3) == 3
        with pytest.raises(UserError, match="unreadable 'broken' attribute"):
            nilmtk_store.read_attr(path, f.root, "broken")
    assert str(path) not in tables.file._open_files.filenames  # closed again
    with pytest.raises(UserError, match="could not read the store"):  # an error while reading, one line
        with nilmtk_store.open_store(path) as f:
            f.get_node("/building9/elec/meter1/table")
    with pytest.raises(RefusedPickle, match="persistent id"):
        loads_plain(b"Pabc\n.")
    with pytest.raises(UserError, match="not a file"):
        with nilmtk_store.open_store(tmp_path):
            pass


def test_a_device_on_two_meters_is_summed_and_gaps_stay_gaps(tmp_path):
    """Mains: rows 4 and 5 missing (those bins are left out); kettle = meter 2 (100 W) + meter 3 (20 W), which also
    misses row 7: that bin's kettle is missing (NaN), the rest 120 W, and the device is kept."""
    t = T0 + 6 * np.arange(10)
    mains_rows, m3_rows = np.r_[0:4, 6:10], np.r_[0:4, 6, 8, 9]
    meters = {
        1: (t[mains_rows], {ACTIVE: np.full(8, 500.0)}),
        2: (t, {ACTIVE: np.full(10, 100.0)}),
        3: (t[m3_rows], {ACTIVE: np.full(7, 20.0)}),
    }
    meta = building_meta(1, [1], [("kettle", [2, 3])])
    hh = load(write_store(tmp_path / "sum.h5", {1: {"metadata": meta, "meters": meters}}))
    assert len(hh) == 8 and hh.aggregate.tolist() == [500.0] * 8
    kettle = hh.appliances["kettle"]
    assert np.isnan(kettle[5]) and np.delete(kettle, 5).tolist() == [120.0] * 7


def test_nilmtk_notes_by_hand():
    from nilmbuild.data.nilmtk_source import nilmtk_notes

    meta = {
        "building": "building 1",
        "site_meters": {1: "active", 2: "apparent"},
        "periods_s": {1: 1, 3: 6},
        "channels": {"kettle": ["meter 3"]},
        "declared_periods_s": {3: 2},
        "unknown_appliances": ["laptop computer"],
    }
    assert nilmtk_notes(meta) == [
        "store         building 1; aggregate = meter 1 active power, meter 2 apparent power"
        " (no active power values in this span)",
        "periods       from the index: meter 1 1 s, meter 3 6 s",
        "appliances    kettle = meter 3",
        "              metadata declares meter 3 2 s (ignored: the index wins)",
        "ignored       appliances no device maps to: laptop computer",
    ]
    quiet = {**meta, "site_meters": {1: "active"}, "declared_periods_s": {}, "unknown_appliances": []}
    assert nilmtk_notes(quiet)[0] == "store         building 1; aggregate = meter 1 active power"
    assert len(nilmtk_notes(quiet)) == 3


def test_bins_that_span_chunks_and_a_chunk_of_nan_keep_their_means(tmp_path, monkeypatch):
    """Mains at 1 s (value = its second, rows 14..20 NaN), a kettle at 6 s: the grid is 6 s, each bin the mean of its
    finite 1 s samples. With 7-row chunks most bins span two chunks, and rows 14..20 are one whole chunk of NaN."""
    t = T0 + np.arange(48)
    v = np.arange(48.0)
    v[14:21] = np.nan
    meters = {1: (t, {ACTIVE: v}), 2: (T0 + 6 * np.arange(8), {ACTIVE: np.full(8, 5.0)})}
    path = write_store(
        tmp_path / "chunks.h5", {1: {"metadata": building_meta(1, [1], [("kettle", [2])]), "meters": meters}}
    )
    monkeypatch.setattr(nilmtk_store, "CHUNK_ROWS", 7)
    hh = load(path)
    want = [np.nanmean(v[6 * b : 6 * b + 6]) for b in range(8)]  # bin 2 = rows 12, 13 only; bin 3 = 21..23
    np.testing.assert_allclose(hh.aggregate, want)
