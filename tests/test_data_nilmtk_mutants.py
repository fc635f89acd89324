"""`nilmtk:PATH.h5`: the survivors of a fresh `make mutate` pass of the `nilmtk` module (docs/testing.md).

Hand-made stores (nilmbuild.bench.nilmtk_writer, NILMTK's layout) with values chosen here: every expected
timestamp, watt, metadata value and message is written in the test. What they check: a site meter with no rows in
the span is left out of the sum (not summed as NaN); a span read from its very first row; a device sample just
past the last mains bin; the metadata recorded and the `nilmbuild data` notes; the dataset names' defaults; and
each bad store or flag as its own one-line error (not another error, a traceback or a silently wrong span).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nilmbuild.bench.nilmtk_writer import ACTIVE, APPARENT
from nilmbuild.data import nilmtk_store
from nilmbuild.data.loaders import load_notes
from nilmbuild.errors import DataWarning, UserError
from tests.nilmtk_stores import T0, iso, load, store

REACTIVE = ("power", "reactive")


def six(n: int, first: int = 0):
    """n times 6 s apart from T0 + 6 * first."""
    return T0 + 6 * (first + np.arange(n))


# ---- numbers and grids ----------------------------------------------------------------------------------


def test_a_site_meter_without_rows_in_the_span_is_left_out_of_the_sum(tmp_path):
    """Mains 2 ends (T0 .. T0+12) before --start T0+18; mains 1 runs T0 .. T0+30. From T0+18 the aggregate is mains
    1 alone (40, 50, 60 W), not NaN from a mains with no sample, and only mains 1 is recorded as read."""
    meters = {
        1: (six(6), {ACTIVE: [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]}),
        2: (six(3), {ACTIVE: [1.0, 2.0, 3.0]}),
        9: (six(6), {ACTIVE: [0.0, 0.0, 0.0, 7.0, 8.0, 9.0]}),
    }
    hh = load(store(tmp_path, meters, sites=(1, 2)), start=iso(T0 + 18))
    assert hh.timestamps.astype(np.int64).tolist() == [T0 + 18, T0 + 24, T0 + 30]
    assert hh.aggregate.tolist() == [40.0, 50.0, 60.0] and hh.appliances["kettle"].tolist() == [7.0, 8.0, 9.0]
    assert hh.meta["site_meters"] == {1: "active"}


def test_a_start_before_the_first_sample_reads_the_first_row(tmp_path):
    """--start a minute before the first sample: every row is inside [start, end), the first one too."""
    meters = {1: (six(3), {ACTIVE: [100.0, 200.0, 300.0]}), 9: (six(3), {ACTIVE: [1.0, 2.0, 3.0]})}
    hh = load(store(tmp_path, meters), start=iso(T0 - 60))
    assert hh.timestamps.astype(np.int64).tolist() == [T0, T0 + 6, T0 + 12]
    assert hh.aggregate.tolist() == [100.0, 200.0, 300.0] and hh.appliances["kettle"].tolist() == [1.0, 2.0, 3.0]


def test_a_device_sample_in_the_bin_after_the_last_mains_bin_is_dropped(tmp_path):
    """The mains spans bins 0-2 (T0 .. T0+12); the kettle has one more sample in bin 3 (T0+18), just past the grid:
    it is dropped and the three bins keep the kettle's own values."""
    meters = {1: (six(3), {ACTIVE: [100.0, 200.0, 300.0]}), 9: (six(4), {ACTIVE: [1.0, 2.0, 3.0, 4.0]})}
    hh = load(store(tmp_path, meters))
    assert hh.timestamps.astype(np.int64).tolist() == [T0, T0 + 6, T0 + 12]
    assert hh.appliances["kettle"].tolist() == [1.0, 2.0, 3.0]


def test_a_device_whose_meter_has_no_rows_in_the_span_is_left_out_with_its_warning(tmp_path):
    """The fridge's meter ends before --start: it is left out with the warning that names its meter, and it is
    not recorded as a channel read; the kettle is read."""
    meters = {
        1: (six(6), {ACTIVE: np.full(6, 500.0)}),
        9: (six(6), {ACTIVE: np.arange(6.0)}),
        3: (six(2), {ACTIVE: [80.0, 80.0]}),
    }
    path = store(tmp_path, meters, appliances=(("kettle", [9]), ("fridge freezer", [3])))
    with pytest.warns(DataWarning, match=r"fridge \(meter 3\) has no data in this span; left out"):
        hh = load(path, start=iso(T0 + 18))
    assert list(hh.appliances) == ["kettle"] and hh.appliances["kettle"].tolist() == [3.0, 4.0, 5.0]
    assert list(hh.meta["channels"]) == ["kettle"] and hh.meta["periods_s"] == {1: 6, 9: 6}


def test_the_metadata_and_the_data_notes_of_a_store(tmp_path):
    """What `nilmbuild data` records (the .npz's meta) and prints for a store read in full: two devices, the kettle
    on two meters, the fridge as two appliances, two appliances no device maps to, two meters whose declared period is not their index's."""
    t1, t6 = T0 + np.arange(12), six(2)
    meters = {
        1: (t1, {ACTIVE: np.arange(12.0)}),
        2: (t6, {APPARENT: [100.0, 200.0]}),
        3: (t6, {ACTIVE: [2000.0, 0.0]}),
        4: (t6, {ACTIVE: [1.0, 1.0]}),
        5: (t6, {ACTIVE: [80.0, 0.0]}),
        8: (t6, {ACTIVE: [10.0, 20.0]}),
    }
    root = {"name": "UK-DALE", "meter_devices": {"mains": {"sample_period": 2}, "plug": {"sample_period": 5}}}
    apps = (("kettle", [3, 4]), ("fridge freezer", [5]), ("fridge", [8]), ("laptop computer", [6]), ("radio", [7]))
    path = store(tmp_path, meters, sites=(1, 2), appliances=apps, root=root, original_name="house_7")
    with pytest.warns(DataWarning):
        hh = load(path)
    assert hh.aggregate.tolist() == [2.5 + 100.0, 8.5 + 200.0]
    assert hh.appliances["kettle"].tolist() == [2001.0, 1.0] and hh.appliances["fridge"].tolist() == [90.0, 20.0]
    want = {
        "dataset": "nilmtk",
        "like": "ukdale",
        "house": 1,
        "building": "building 1 (original house_7)",
        "original_name": "house_7",
        "source": str(path),
        "channels": {"kettle": ["kettle (meter 3, 4)"], "fridge": ["fridge freezer (meter 5)", "fridge (meter 8)"]},
        "site_meters": {1: "active", 2: "apparent"},
        "periods_s": {1: 1, 2: 6, 3: 6, 4: 6, 5: 6, 8: 6},
        "declared_periods_s": {1: 2, 2: 2, 3: 5, 4: 5, 5: 5, 8: 5},
        "unknown_appliances": ["laptop computer (meter 6)", "radio (meter 7)"],
    }
    assert {k: hh.meta.get(k) for k in want} == want
    assert load_notes(hh.meta) == [
        "store         building 1 (original house_7); aggregate = meter 1 active power, meter 2 apparent power"
        " (no active power values in this span)",
        "periods       from the index: meter 1 1 s, meter 2 6 s, meter 3 6 s, meter 4 6 s, meter 5 6 s, meter 8 6 s",
        "appliances    kettle = kettle (meter 3, 4); fridge = fridge freezer (meter 5), fridge (meter 8)",
        "              metadata declares meter 1 2 s, meter 2 2 s, meter 3 5 s, meter 4 5 s, meter 5 5 s, meter 8 5 s"
        " (ignored: the index wins)",
        "ignored       appliances no device maps to: laptop computer (meter 6), radio (meter 7)",
    ]


@pytest.mark.parametrize(
    ("name", "like"),
    [("UK-DALE", "ukdale"), ("UKPD", "ukdale"), ("REFIT", "refit"), ("REDD", "redd"), ("iAWE", "csv"), (None, "csv")],
)
def test_dataset_names_pick_their_preprocessing_defaults(name, like):
    """NILMTK's dataset names (UK-DALE was UKPD before its release) -> the defaults `prepare()` uses; others read
    as a tidy CSV would."""
    assert nilmtk_store.dataset_like({"name": name} if name else {}) == like


# ---- bad flags and bad stores: each its own one-line error ---------------------------------------------


def ok_store(tmp_path: Path) -> Path:
    return store(tmp_path, {1: (six(3), {ACTIVE: [1.0, 2.0, 3.0]}), 9: (six(3), {ACTIVE: [0.0, 0.0, 0.0]})})


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("June", None, r"^--start 'June': use YYYY-MM-DD or YYYY-MM-DDTHH:MM \(UTC\)$"),
        (None, "2013-13-01", r"^--end '2013-13-01': use YYYY-MM-DD"),
        ("2013-06-06", "2013-06-06", r"^--end 2013-06-06 is not after --start 2013-06-06; pass an end later"),
        ("2013-06-07", "2013-06-06", r"^--end 2013-06-06 is not after --start 2013-06-07; pass an end later"),
    ],
)
def test_bad_start_and_end(tmp_path, start, end, message):
    with pytest.raises(UserError, match=message):
        load(ok_store(tmp_path), start, end)


def test_site_meters_without_samples_in_the_span(tmp_path):
    """All rows before --start: no site meter has a sample in the span."""
    with pytest.raises(UserError, match=r"building 1's site meter\(s\) have no samples between 2013-06-07 and the end"):
        load(ok_store(tmp_path), start="2013-06-07")


def test_a_site_meter_without_a_table(tmp_path):
    """The metadata names site meter 2, the store has no table for it."""
    meters = {1: (six(3), {ACTIVE: [1.0, 2.0, 3.0]}), 9: (six(3), {ACTIVE: [0.0, 0.0, 0.0]})}
    with pytest.raises(UserError, match=r"building 1's site meter 2 has no data table; re-convert the store"):
        load(store(tmp_path, meters, sites=(1, 2)))


def test_site_meters_whose_power_is_all_missing(tmp_path):
    """The mains has rows in the span, but every value is NaN."""
    meters = {1: (six(3), {ACTIVE: [np.nan] * 3}), 9: (six(3), {ACTIVE: [0.0, 0.0, 0.0]})}
    with pytest.raises(UserError, match=r"the site meter\(s\) have no power values in this span; pass other"):
        load(store(tmp_path, meters))


def test_no_device_with_samples_at_the_mains_times(tmp_path):
    """The kettle's and the fridge's samples all fall after the mains' last one."""
    meters = {1: (six(3), {ACTIVE: [1.0, 2.0, 3.0]}), 9: (six(2, 10), {ACTIVE: [5.0, 5.0]})}
    meters[3] = (six(2, 20), {ACTIVE: [5.0, 5.0]})
    path = store(tmp_path, meters, appliances=(("kettle", [9]), ("fridge freezer", [3])))
    with pytest.warns(DataWarning), pytest.raises(UserError, match=r"building 1: none of kettle, fridge has data"):
        load(path)


def test_a_meter_without_power_columns(tmp_path):
    """A mains with reactive power and voltage only, then one with no labelled column at all."""
    meters = {1: (six(2), {REACTIVE: [1.0, 2.0], ("voltage", ""): [230.0, 231.0]}), 9: (six(2), {ACTIVE: [0.0, 0.0]})}
    with pytest.raises(UserError, match=r"meter 1 has no active or apparent power column \(found: power/reactive, "):
        load(store(tmp_path, meters))
    import tables

    path = store(tmp_path, meters)
    with tables.open_file(str(path), "a") as f:
        f.get_node("/building1/elec/meter1/table")._v_attrs.values_block_0_kind = []
    with pytest.raises(UserError, match=r"meter 1 has no active or apparent power column \(found: none\); pass"):
        load(path)


def test_a_store_without_buildings_and_a_building_without_metadata(tmp_path):
    import tables

    empty = tmp_path / "empty.h5"
    with tables.open_file(str(empty), "w") as f:
        f.create_group("/", "elec")
    with pytest.raises(UserError, match=r"no /buildingN groups: not a NILMTK DataStore"):
        load(empty)
    path = ok_store(tmp_path)
    with tables.open_file(str(path), "a") as f:
        f.root.building1._v_attrs.metadata = ["not", "a", "dict"]
    with pytest.raises(UserError, match=r"building 1 has no metadata; convert the data with NILMTK's converters"):
        load(path)


def test_a_meter_table_without_an_index_column(tmp_path):
    """meter1/table is a table, but its columns are not a pandas frame_table's (no `index`)."""
    import tables

    path = ok_store(tmp_path)
    with tables.open_file(str(path), "a") as f:
        f.remove_node("/building1/elec/meter1/table")
        f.create_table("/building1/elec/meter1", "table", {"time": tables.Int64Col(), "w": tables.Float32Col()})
    with pytest.raises(UserError, match=r"/building1/elec/meter1 is not a pandas table with an index \(found Table\)"):
        load(path)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "HDF5 error back trace\n  File 'H5F.c', line 1\n    truncated file: eof = 10\n"
            "  unable to open\nEnd of HDF5 error back trace",
            2,
        ),
        ("bad\n  file signature not found\nlast", 1),
        ("HDF5 error back trace\n  something failed\n  then this\nEnd of HDF5 error back trace", 2),
        ("something failed\n  File 'H5F.c', line 1", 0),
        ("something failed\nHDF5 error back trace", 0),
    ],
)
def test_the_line_of_an_hdf5_error_that_says_what_is_wrong(text, line):
    """The message's line naming a truncated file or a bad signature, else its last line that is not the back
    trace's frame; at most 160 characters; the error's type when it says nothing."""
    assert nilmtk_store._first_line(OSError(text)) == text.splitlines()[line].strip()
    assert nilmtk_store._first_line(OSError("x" * 200 + "\n")) == "x" * 160
    assert nilmtk_store._first_line(OSError("\n  \n")) == "OSError"
