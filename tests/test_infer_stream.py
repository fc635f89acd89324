"""`nilmbuild disaggregate` streams (nilmbuild/infer/stream.py): its CSV equals the whole-series run's, byte for
byte, whatever the chunk and batch sizes, with data gaps and post-processing segments across the seams."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data.simulate import simulate_household
from nilmbuild.infer import stream
from nilmbuild.infer.series import predict_split
from nilmbuild.infer.stream import HouseholdRange, stream_rows, stream_setup
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.pipeline import prepare_for


def whole_series_csv(loaded, hh, batch_size: int) -> str:
    """The CSV `nilmbuild disaggregate` wrote before it streamed: prepare the whole series, run predict_split over
    it, format every row (the code of nilmbuild/infer/cli.py at main 40e8b4e, kept here as the reference)."""
    prepared = prepare_for(loaded, hh, whole=True)
    sp = prepared.splits["train"]
    post = predict_split(loaded, prepared, "train", batch_size=batch_size)
    valid = sp.valid.astype(bool)
    cols = {"aggregate": sp.aggregate_w, **{d: post["final_w"][i] for i, d in enumerate(loaded.devices)}}
    out = [",".join(["time", *cols]) + "\n"]
    times = np.datetime_as_string(sp.timestamps.astype("datetime64[s]"), unit="s")
    table = np.stack([np.where(valid, v, np.nan) for v in cols.values()], axis=1)
    for t, row in zip(times, table):
        out.append(t + "Z," + ",".join("" if np.isnan(v) else f"{v:.1f}" for v in row) + "\n")
    return "".join(out)


@pytest.fixture(scope="module")
def loaded():
    return load_checkpoint(None)


def gappy_household(days: int = 3):
    """The simulator with gaps (native 6-s samples set missing) of 2, 3, 4 and 30 minutes, some across the seams
    of 500-bin chunks (bins are minutes from the first sample)."""
    hh = simulate_household(days=days, seed=3)
    for start_min, minutes in ((498, 3), (999, 4), (1497, 30), (2100, 2), (2999, 3)):
        a = start_min * 10 + 5
        hh.aggregate[a : a + minutes * 10] = np.nan
    hh.appliances["kettle"][700 * 10 : 705 * 10] = np.nan  # an appliance gap invalidates those bins too
    return hh


@pytest.mark.parametrize(("chunk_bins", "batch_size"), [(500, 4), (1234, 32), (10_080, 7)])
def test_streamed_csv_equals_the_whole_series_run(loaded, monkeypatch, chunk_bins, batch_size):
    hh = gappy_household()
    want = whole_series_csv(loaded, hh, batch_size)
    monkeypatch.setattr(stream, "CHUNK_BINS", chunk_bins)
    src = HouseholdRange(hh)
    cfg, pc = stream_setup(loaded, src)
    got = "".join(stream_rows(loaded, src, cfg, pc, batch_size=batch_size))
    assert got.count("\n") == want.count("\n") == 3 * 1440 + 1
    assert got == want
    assert ",,," in got  # the 30-minute gap is left empty, as the whole run leaves it


def test_an_imported_condinilm_checkpoint_streams_as_its_whole_series_run(tmp_path, monkeypatch):
    """An upstream model (its own 1 + 8 time features in the padding, its evaluation's soft gate) streams too:
    `nilmbuild disaggregate -c imported.pt` once failed on it (the spec's gate_mode argument)."""
    from nilmbuild.bench.upstream import import_fixture

    up = load_checkpoint(import_fixture(tmp_path))  # tests/fixtures/upstream/condinilm_small, window 64
    assert up.architecture == "condinilm"
    hh = gappy_household(days=2)
    want = whole_series_csv(up, hh, 8)
    monkeypatch.setattr(stream, "CHUNK_BINS", 500)
    src = HouseholdRange(hh)
    cfg, pc = stream_setup(up, src)
    got = "".join(stream_rows(up, src, cfg, pc, batch_size=8))
    assert got.count("\n") == want.count("\n") == 2 * 1440 + 1
    assert got == want


def test_post_processing_is_cut_only_where_every_device_is_off(loaded):
    """A PostStream fed in small pieces gives the whole series' post-processing: ON segments of 35 samples (the
    washing machine and dishwasher need 30) cross the pieces' ends, so a cut inside one would drop it."""
    from nilmbuild.infer.postprocess import postprocess

    hh = gappy_household(days=2)
    prepared = prepare_for(loaded, hh, whole=True)
    sp = prepared.splits["train"]
    D, T = len(loaded.devices), sp.timestamps.shape[0]
    t = np.arange(T)
    gate = np.stack([((t + 2 * i) % 75 < 35) for i in range(D)]).astype(np.float32)  # ON 35, OFF 40
    gate[:, 1000:1400] = (np.random.default_rng(0).random((D, 400)) < 0.6).astype(np.float32)  # no safe cut here
    power = np.random.default_rng(1).random((D, T)).astype(np.float32)
    _, pc = stream_setup(loaded, HouseholdRange(hh))
    want = postprocess(power, gate, loaded.devices, loaded.scalers, pc, aggregate_w=sp.aggregate_w)["final_w"]
    assert (want > 0).sum() > T  # segments survive the whole run's post-processing
    ps = stream.PostStream(loaded, pc, loaded.devices)
    got, edges = [], list(range(0, T, 97)) + [T]
    for a, b in zip(edges[:-1], edges[1:]):
        final, (lo, hi) = ps.push(power[:, a:b], gate[:, a:b], sp.aggregate_w[a:b], last=b == T)
        if final is not None:
            assert final.shape[1] == hi - lo
            got.append(final)
    assert len(got) > 10 and np.array_equal(np.concatenate(got, axis=1), want)


def test_disaggregate_command_writes_the_streamed_csv(loaded, tmp_path):
    out = tmp_path / "p.csv"
    r = CliRunner().invoke(main, ["disaggregate", "--out", str(out), "--from", "2024-01-02", "--to", "2024-01-04"])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0] == "time,aggregate," + ",".join(loaded.devices) and len(lines) == 2 * 1440 + 1
    assert lines[1].startswith("2024-01-02T00:00:00Z,")


FIXTURE = Path(__file__).resolve().parent / "fixtures" / "nilmtk" / "ukdale_house2_7d.h5"


def gappy_store(tmp_path) -> Path:
    """Three simulated days as a NILMTK store: mains at 2 s (averaged into the 6-s grid of the plugs), gaps."""
    from nilmbuild.bench.nilmtk_writer import ACTIVE, building_meta, write_store

    hh = gappy_household()
    t6 = hh.timestamps.astype(np.int64)
    t2 = np.repeat(t6, 3) + np.tile([0, 2, 4], t6.size)
    mains = np.repeat(hh.aggregate, 3)
    keep = np.isfinite(mains)  # a lost reading is a missing row, as in UK-DALE
    meta = building_meta(1, [1], [("kettle", [2]), ("fridge freezer", [3]), ("dish washer", [4])])
    meters = {1: (t2[keep], {ACTIVE: mains[keep]})}
    for m, d in ((2, "kettle"), (3, "fridge"), (4, "dishwasher")):
        ok = np.isfinite(hh.appliances[d])
        meters[m] = (t6[ok], {ACTIVE: hh.appliances[d][ok]})
    return write_store(tmp_path / "sim.h5", {1: {"metadata": meta, "meters": meters}})


@pytest.mark.parametrize(
    ("store", "span", "window"),
    [
        ("fixture", (None, None), ("2013-06-07T03:00", "2013-06-11")),
        ("fixture", ("2013-06-06T12:00:10", None), (None, None)),
        ("sim", (None, None), (None, None)),
    ],
)
def test_a_nilmtk_store_is_streamed_by_range_to_the_whole_series_csv(
    loaded, monkeypatch, tmp_path, store, span, window
):
    from nilmbuild.data import load_source
    from nilmbuild.data.household import between
    from nilmbuild.data.nilmtk_range import NilmtkRange
    from nilmbuild.errors import DataWarning

    path = FIXTURE if store == "fixture" else gappy_store(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # the fixture's unknown appliances and missing fridge
        hh = load_source(f"nilmtk:{path}", span=span)
    want = whole_series_csv(loaded, between(hh, *window) if window[0] else hh, 8)
    monkeypatch.setattr(stream, "CHUNK_BINS", 777)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        with NilmtkRange(path, None, span, window) as src:
            cfg, pc = stream_setup(loaded, src)
            got = "".join(stream_rows(loaded, src, cfg, pc, batch_size=8))
    assert got.count("\n") > 1000 and got == want


def test_disaggregate_reads_a_nilmtk_store(tmp_path):
    out = tmp_path / "p.csv"
    r = CliRunner().invoke(main, ["disaggregate", "-s", f"nilmtk:{FIXTURE}", "--out", str(out), "--to", "2013-06-08"])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert len(lines) == 2 * 1440 + 1 and lines[1].startswith("2013-06-06T00:00:00Z,137.7,")
