"""`nilmtk:PATH.h5`: the grid, the site meters and the measurement each one is read in, worked out by hand.

Each store here is written with values chosen in the test (nilmbuild.bench.nilmtk_writer, NILMTK's layout), so
every expected timestamp, watt and period is computed in the test. Each test kills mutants of
`data/nilmtk_source.py` or `data/nilmtk_store.py` that `make mutate` found alive (docs/testing.md): a
changed grid or a changed aggregate that the other NILMTK tests did not see.
"""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.bench.nilmtk_writer import ACTIVE, APPARENT
from nilmbuild.data import nilmtk_store
from nilmbuild.errors import DataWarning, UserError
from tests.nilmtk_stores import T0, iso, load, store

NAN = float("nan")


def seconds(hh) -> list[int]:
    return hh.timestamps.astype(np.int64).tolist()


def same(got, want) -> bool:
    """Equal element by element, NaN equal to NaN."""
    return np.array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64), equal_nan=True)


def test_two_site_meters_with_different_spans_make_one_grid_over_both(tmp_path):
    """Mains 1 samples bins 0-2 (100, 110, 120 W), mains 2 bins 1-3 (5, 6, 7 W), both 6 s. The grid runs from the
    earliest first sample to the latest last one (bins 0-3), a bin is kept when either mains has a sample, and
    the aggregate is missing (NaN) where one of the two has none: [NaN, 115, 126, NaN]."""
    t = T0 + 6 * np.arange(4)
    meters = {
        1: (t[:3], {ACTIVE: [100.0, 110.0, 120.0]}),
        2: (t[1:], {ACTIVE: [5.0, 6.0, 7.0]}),
        9: (t, {ACTIVE: [1.0, 2.0, 3.0, 4.0]}),
    }
    hh = load(store(tmp_path, meters, sites=(1, 2)))
    assert hh.rate_s == 6 and seconds(hh) == [T0, T0 + 6, T0 + 12, T0 + 18]
    assert same(hh.aggregate, [NAN, 115.0, 126.0, NAN])
    assert hh.appliances["kettle"].tolist() == [1.0, 2.0, 3.0, 4.0]
    # the same two meters listed the other way round give the same grid
    hh = load(store(tmp_path, meters, sites=(2, 1)))
    assert seconds(hh) == [T0, T0 + 6, T0 + 12, T0 + 18] and same(hh.aggregate, [NAN, 115.0, 126.0, NAN])


def test_a_mains_whose_active_power_has_gaps_is_still_read_as_active(tmp_path):
    """Active power 100, (missing), 120, 130 W beside apparent power 900..930 VA: active is read because it has
    values in the span; its missing bin is left out of the grid, and the apparent power is never used."""
    t = T0 + 6 * np.arange(4)
    meters = {
        1: (t, {ACTIVE: [100.0, NAN, 120.0, 130.0], APPARENT: [900.0, 910.0, 920.0, 930.0]}),
        9: (t, {ACTIVE: [0.0, 1.0, 2.0, 3.0]}),
    }
    hh = load(store(tmp_path, meters))
    assert hh.meta["site_meters"] == {1: "active"}
    assert seconds(hh) == [T0, T0 + 12, T0 + 18] and hh.aggregate.tolist() == [100.0, 120.0, 130.0]
    assert hh.appliances["kettle"].tolist() == [0.0, 2.0, 3.0]


def test_two_samples_give_their_step_and_one_sample_gives_one_second(tmp_path):
    """A period is the median step of the index: two rows 60 s apart are a 60 s meter (the grid is 60 s, not 1 s);
    a meter with a single row in the span has no step and counts as 1 s."""
    t = T0 + 60 * np.arange(2)
    meters = {1: (t, {ACTIVE: [300.0, 400.0]}), 9: (t, {ACTIVE: [0.0, 2000.0]})}
    hh = load(store(tmp_path, meters))
    assert hh.rate_s == 60 and hh.meta["periods_s"] == {1: 60, 9: 60}
    assert seconds(hh) == [T0, T0 + 60] and hh.aggregate.tolist() == [300.0, 400.0]
    one = T0 + np.array([1])  # an odd second: a 2-s grid would move it to T0
    hh = load(store(tmp_path, {1: (one, {ACTIVE: [250.0]}), 9: (one, {ACTIVE: [7.0]})}))
    assert hh.rate_s == 1 and hh.meta["periods_s"] == {1: 1, 9: 1}
    assert seconds(hh) == [T0 + 1] and hh.aggregate.tolist() == [250.0]


def test_the_period_is_the_median_of_the_first_4096_steps(tmp_path):
    """2048 steps of 1 s, then steps of 3 s (4200 rows): over the first 4097 rows (4096 steps, half 1 s and half
    3 s) the median step is 2 s, so the grid is 2 s. One row more or less would make it 3 s or 1 s."""
    t = np.concatenate([T0 + np.arange(2049), T0 + 2048 + 3 * np.arange(1, 4200 - 2048)])
    assert t.size == 4200 and np.median(np.diff(t[:4097])) == 2.0
    meters = {1: (t, {ACTIVE: np.full(t.size, 50.0)}), 9: (t, {ACTIVE: np.zeros(t.size)})}
    hh = load(store(tmp_path, meters))
    assert hh.rate_s == 2 and hh.meta["periods_s"] == {1: 2, 9: 2}
    assert seconds(hh)[:3] == [T0, T0 + 2, T0 + 4] and hh.aggregate[:3].tolist() == [50.0] * 3


def test_a_start_on_a_sample_includes_that_sample(tmp_path):
    """--start exactly at the 4th sample's time: the grid starts there (the sample is inside [start, end))."""
    t = T0 + 6 * np.arange(6)
    meters = {1: (t, {ACTIVE: 10.0 * np.arange(6)}), 9: (t, {ACTIVE: np.arange(6.0)})}
    hh = load(store(tmp_path, meters), start=iso(T0 + 18))
    assert seconds(hh) == [T0 + 18, T0 + 24, T0 + 30] and hh.aggregate.tolist() == [30.0, 40.0, 50.0]


@pytest.mark.parametrize(
    ("order", "row"),
    [([1, 0, 2, 3, 4, 5], 0), ([0, 2, 1, 3, 4, 5], 2), ([0, 1, 2, 3, 4, 5], None)],
    ids=["inside-a-chunk", "across-chunks", "sorted"],
)
def test_unsorted_timestamps_are_refused_inside_a_chunk_and_across_chunks(tmp_path, monkeypatch, order, row):
    """Chunks of 2 rows: rows (t1, t0 | ...) are out of order inside the first chunk; (t0, t2 | t1, t3 | ...), each
    chunk sorted, go back between the second and third row, across a chunk seam. Both are one-line errors naming the row where
    it happens; the sorted store reads."""
    monkeypatch.setattr(nilmtk_store, "CHUNK_ROWS", 2)
    t = T0 + 6 * np.arange(6)
    meters = {1: (t[order], {ACTIVE: 10.0 * np.arange(6)}), 9: (t, {ACTIVE: np.ones(6)})}
    path = store(tmp_path, meters)
    if row is None:
        assert load(path).aggregate.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
        return
    with pytest.raises(UserError, match=rf"meter 1's timestamps are not sorted near row {row}; re-convert"):
        load(path)


def test_repeated_timestamps_are_sorted_and_averaged(tmp_path, monkeypatch):
    """Mains in chunks of 2 rows over times (T0, T0 | T0, T0+6 | T0+12, T0+12), a 6 s kettle: a time repeated
    inside a chunk and across a chunk seam is in order (never decreasing), so the store reads, and the 6 s bins
    are the means: 2, 10, 30 W."""
    monkeypatch.setattr(nilmtk_store, "CHUNK_ROWS", 2)
    t = T0 + np.array([0, 0, 0, 6, 12, 12])
    meters = {1: (t, {ACTIVE: [1.0, 2.0, 3.0, 10.0, 20.0, 40.0]}), 9: (T0 + 6 * np.arange(3), {ACTIVE: np.ones(3)})}
    hh = load(store(tmp_path, meters))
    assert hh.rate_s == 6 and seconds(hh) == [T0, T0 + 6, T0 + 12] and hh.aggregate.tolist() == [2.0, 10.0, 30.0]


def test_devices_after_a_missing_one_are_read(tmp_path):
    """A house with a fridge and a dishwasher but no kettle or microwave (which come first in the model's order)."""
    t = T0 + 6 * np.arange(3)
    meters = {1: (t, {ACTIVE: [500.0, 600.0, 700.0]}), 2: (t, {ACTIVE: [80.0, 0.0, 80.0]})}
    meters[3] = (t, {ACTIVE: [0.0, 2000.0, 2100.0]})
    hh = load(store(tmp_path, meters, appliances=(("fridge freezer", [2]), ("dish washer", [3]))))
    assert hh.appliances["fridge"].tolist() == [80.0, 0.0, 80.0]
    assert hh.appliances["dishwasher"].tolist() == [0.0, 2000.0, 2100.0]
    assert hh.meta["missing"] == ["kettle", "microwave", "washing_machine"]


def test_a_device_without_samples_at_the_mains_times_is_left_out_and_the_next_is_read(tmp_path):
    """The kettle's two samples come after the mains' last one: it has no sample in a kept bin, so it is left out
    with a warning that says so, and the fridge after it (in the model's order) is still read."""
    t = T0 + 6 * np.arange(3)
    meters = {1: (t, {ACTIVE: [500.0, 600.0, 700.0]}), 2: (T0 + np.array([30, 36]), {ACTIVE: [2000.0, 2000.0]})}
    meters[3] = (t, {ACTIVE: [80.0, 0.0, 80.0]})
    path = store(tmp_path, meters, appliances=(("kettle", [2]), ("fridge freezer", [3])))
    with pytest.warns(DataWarning, match="kettle has no samples at the site meter's times; left out"):
        hh = load(path)
    assert list(hh.appliances) == ["fridge"] and hh.appliances["fridge"].tolist() == [80.0, 0.0, 80.0]
    assert hh.aggregate.tolist() == [500.0, 600.0, 700.0]


def test_a_sub_second_meter_counts_as_one_second(tmp_path):
    """Samples every 0.4 s round to a 0 s step, which is read as 1 s: the grid is 1 s, each bin the mean of the
    samples inside it (0.0, 0.4, 0.8 s -> bin 0; 1.2, 1.6 s -> bin 1)."""
    import tables

    zeros = T0 + np.zeros(5)
    meters = {1: (zeros, {ACTIVE: [1.0, 2.0, 3.0, 4.0, 5.0]}), 9: (zeros, {ACTIVE: [0.0, 0.0, 0.0, 10.0, 20.0]})}
    path = store(tmp_path, meters)
    ns = T0 * nilmtk_store.NS + 400_000_000 * np.arange(5)
    with tables.open_file(str(path), "a") as f:
        for m in (1, 9):
            f.get_node(f"/building1/elec/meter{m}/table").modify_column(column=ns, colname="index")
    hh = load(path)
    assert hh.rate_s == 1 and hh.meta["periods_s"] == {1: 1, 9: 1}
    assert seconds(hh) == [T0, T0 + 1] and hh.aggregate.tolist() == [2.0, 4.5]
    assert hh.appliances["kettle"].tolist() == [0.0, 15.0]
