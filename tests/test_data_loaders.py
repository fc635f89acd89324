"""Loaders: UK-DALE / REDD / REFIT raw layouts and tidy CSV, written as small fixtures; bad input."""

import gzip

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import load_csv, load_redd, load_refit, load_source, load_ukdale
from nilmbuild.data.loaders import parse_column_map
from nilmbuild.errors import UserError

T0 = 1_369_999_998  # 2013-05-31, a multiple of 6 s


def _dat(path, ts, w):
    path.write_text("".join(f"{t} {v:g}\n" for t, v in zip(ts, w)))


def _ukdale(root, house=2, n=200):
    h = root / f"house_{house}"
    h.mkdir(parents=True)
    (h / "labels.dat").write_text("1 aggregate\n2 kettle\n3 washer_dryer\n4 fridge_freezer\n5 toaster\n6 fridge\n")
    ts = T0 + 6 * np.arange(n)
    _dat(h / "channel_1.dat", ts, np.full(n, 500.0))
    _dat(h / "channel_2.dat", ts + 2, np.where(np.arange(n) % 50 < 5, 2500.0, 0.0))  # offset clock
    _dat(h / "channel_3.dat", ts[::2] + 1, np.full(n // 2, 20.0))  # every 12 s
    _dat(h / "channel_4.dat", ts, np.full(n, 80.0))
    _dat(h / "channel_5.dat", ts, np.zeros(n))
    _dat(h / "channel_6.dat", ts, np.full(n, 5.0))
    return h


def test_ukdale_maps_and_sums_channels(tmp_path):
    _ukdale(tmp_path)
    h = load_ukdale(tmp_path, house=2).check()
    assert h.meta["dataset"] == "ukdale" and h.meta["house"] == 2 and h.rate_s == 6
    assert set(h.appliances) == {"kettle", "washing_machine", "fridge"}
    assert sorted(h.meta["missing"]) == ["dishwasher", "microwave"]
    assert len(h) == 200 and np.all(h.aggregate == 500)
    assert np.allclose(h.appliances["fridge"], 85)  # fridge_freezer + fridge summed
    assert h.appliances["kettle"].max() == 2500
    assert np.isnan(h.appliances["washing_machine"]).sum() == 100  # sampled every other bin
    assert load_source(f"ukdale:{tmp_path / 'house_2'}").meta["house"] == 2  # a house folder works too


def test_redd_mains_are_summed(tmp_path):
    h = tmp_path / "low_freq" / "house_1"
    h.mkdir(parents=True)
    (h / "labels.dat").write_text(
        "1 mains\n2 mains\n3 refrigerator\n4 dishwaser\n5 washer_dryer\n6 washer_dryer\n7 microwave\n"
    )
    ts = T0 + np.arange(300)  # mains 1 s
    _dat(h / "channel_1.dat", ts, np.full(300, 100.0))
    _dat(h / "channel_2.dat", ts, np.full(300, 150.0))
    ts3 = T0 + 3 * np.arange(100)  # appliances 3 s
    for k, w in ((3, 90.0), (4, 0.0), (5, 10.0), (6, 15.0), (7, 0.0)):
        _dat(h / f"channel_{k}.dat", ts3, np.full(100, w))
    hh = load_redd(tmp_path, house=1).check()
    assert hh.rate_s == 3 and len(hh) == 100
    assert np.allclose(hh.aggregate, 250) and np.allclose(hh.appliances["washing_machine"], 25)
    assert set(hh.appliances) == {"fridge", "dishwasher", "washing_machine", "microwave"}


def test_refit_house2_map(tmp_path):
    n = 50
    rows = ["Time,Unix,Aggregate," + ",".join(f"Appliance{i}" for i in range(1, 10)) + ",Issues"]
    for i in range(n):
        vals = [80, 0, 0, 60, 0, 0, 10, 2200 if i < 5 else 0, 0]
        rows.append(
            f"2014-01-01 00:{i // 8:02d}:{(i % 8) * 7:02d},{T0 + 8 * i},{500 + sum(vals)},"
            + ",".join(map(str, vals))
            + ",0"
        )
    (tmp_path / "CLEAN_House2.csv").write_text("\n".join(rows) + "\n")
    h = load_refit(tmp_path, house=2).check()
    assert h.meta["dataset"] == "refit" and h.meta["like"] == "refit" and h.rate_s == 8
    assert set(h.appliances) == {"fridge", "washing_machine", "dishwasher", "microwave", "kettle"}
    assert h.appliances["kettle"][:5].tolist() == [2200] * 5 and h.appliances["fridge"][0] == 80
    with pytest.raises(UserError, match="no CLEAN_House3.csv .*found houses: 2"):
        load_refit(tmp_path, house=3)


def _tidy(path, n=40, gz=False, start="2013-06-01 00:00:00", extra=""):
    t = np.datetime64(start) + np.arange(n) * np.timedelta64(30, "s")
    lines = ["Time,Aggregate,Kettle,Kettle_status,WashingMachine,Dishwasher" + extra]
    for i, ts in enumerate(t):
        agg = "" if i == 7 else f"{300 + i}"
        lines.append(f"{str(ts).replace('T', ' ')},{agg},{2500 if i < 4 else 0},{int(i < 4)},{i % 3},5")
    text = "\n".join(lines) + "\n"
    if gz:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)


def test_csv_folder_of_gz_months_auto_mapped(tmp_path):
    _tidy(tmp_path / "X_2013-06.csv.gz", gz=True)
    _tidy(tmp_path / "X_2013-07.csv.gz", gz=True, start="2013-07-01 00:00:00")
    h = load_csv(tmp_path).check()
    assert len(h) == 80 and h.rate_s == 30 and h.meta["dataset"] == "csv"
    assert set(h.appliances) == {"kettle", "washing_machine", "dishwasher"}
    assert np.isnan(h.aggregate[7]) and h.aggregate[0] == 300
    assert h.meta["missing"] == ["microwave", "fridge"]


def test_csv_column_map(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("when,site,boil,cooker\n1370000000,100,0,7\n1370000060,110,2000,8\n")
    h = load_source(f"csv:{f}", columns=parse_column_map("when=time,site=aggregate,boil=kettle"))
    assert set(h.appliances) == {"kettle"} and h.rate_s == 60
    assert str(h.timestamps[0]) == "2013-05-31T11:33:20"
    with pytest.raises(UserError, match="--columns: bad item"):
        parse_column_map("boil=teapot")


# ---- bad input: one-line UserError naming the file (and line) -------------------------------------


def _expect(fn, *patterns):
    with pytest.raises(UserError) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg
    for p in patterns:
        assert p in msg, msg


def test_ukdale_malformed_nonnumeric_duplicate_unsorted_empty(tmp_path):
    h = _ukdale(tmp_path)
    good = (h / "channel_2.dat").read_text().splitlines(keepends=True)
    cases = {
        "malformed": (good[:3] + ["1370000016 5 7\n"] + good[4:], ["channel_2.dat:4", "expected"]),
        "nonnumeric": (good[:5] + ["1370000028 abc\n"] + good[6:], ["channel_2.dat:6", "non-numeric"]),
        "duplicate": (good[:9] + [good[8]] + good[10:], ["channel_2.dat:10", "duplicate timestamp"]),
        "unsorted": (good[:2] + [good[3], good[2]] + good[4:], ["channel_2.dat:4", "not sorted"]),
        "empty": ([], ["channel_2.dat", "empty"]),
    }
    for lines, pats in cases.values():
        (h / "channel_2.dat").write_text("".join(lines))
        _expect(lambda: load_ukdale(tmp_path, house=2), *pats)


def test_missing_house_channel_and_labels(tmp_path):
    h = _ukdale(tmp_path)
    _expect(lambda: load_ukdale(tmp_path, house=9), "no house_9", "found houses: 2", "--house")
    (h / "channel_6.dat").unlink()
    _expect(lambda: load_ukdale(tmp_path, house=2), "channel_6.dat", "missing")
    (h / "labels.dat").write_text("2 kettle\n")
    _expect(lambda: load_ukdale(tmp_path, house=2), "labels.dat", "no mains channel")


def test_csv_bad_values(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,0\n2013-01-01 00:00:30,x2,0\n")
    _expect(lambda: load_csv(f), "a.csv:3", "non-numeric", "Aggregate")
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,0\n2013-01-01 00:00:00,2,0\n")
    _expect(lambda: load_csv(f), "a.csv:3", "duplicate timestamp")
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:01:00,1,0\n2013-01-01 00:00:00,2,0\n")
    _expect(lambda: load_csv(f), "a.csv:3", "not sorted")
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,\n2013-01-01 00:00:30,2,\n")
    _expect(lambda: load_csv(f), "a.csv", "'Kettle'", "all missing")
    f.write_text("Time,Aggregate,Kettle\nyesterday,1,0\n")
    _expect(lambda: load_csv(f), "a.csv:2", "bad timestamp")
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,0,9,9\n")
    _expect(lambda: load_csv(f), "a.csv", "malformed")
    f.write_text("")
    _expect(lambda: load_csv(f), "a.csv", "empty")
    f.write_text("Time,Aggregate,Kettle\n")
    _expect(lambda: load_csv(f), "a.csv", "no data rows")
    f.write_text("Time,Total2,Kettle\n2013-01-01 00:00:00,1,0\n")
    _expect(lambda: load_csv(f), "a.csv", "no aggregate column", "--columns")


def test_csv_overlapping_files(tmp_path):
    _tidy(tmp_path / "a.csv")
    _tidy(tmp_path / "b.csv")
    _expect(lambda: load_csv(tmp_path), "b.csv:2", "starts at or before")


def test_unknown_source_and_path():
    _expect(lambda: load_source("sqlite:x"), "unknown data source")
    _expect(lambda: load_source("csv:/nonexistent/x.csv"), "/nonexistent/x.csv", "no such file")


def test_cli_bad_input_exits_nonzero(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,0\n2013-01-01 00:00:00,2,0\n")
    r = CliRunner().invoke(main, ["data", "--source", f"csv:{f}"])
    assert r.exit_code == 2
    assert "bad.csv:3" in r.output and "duplicate" in r.output and "Traceback" not in r.output
