"""Anyone's CSV: sniffed ';' / tab delimiters and decimal commas, kW columns, negative readings,
columns no device maps to, and delimiter mistakes reported as such. One line each, never a traceback."""

import warnings

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import load_csv, load_source
from nilmbuild.data.loaders import load_notes, sniff_dialect
from nilmbuild.errors import DataWarning, UserError


def _rows(
    n=40,
    sep=",",
    dec=".",
    agg=lambda i: 300.5 + i,
    kettle=lambda i: 2000.25 if i < 4 else 0.0,
    header=("Time", "Aggregate", "Kettle"),
    extra=(),
):
    """n one-minute rows; `extra` values are appended to every row (for extra header columns)."""
    t = np.datetime64("2013-06-01 00:00:00") + np.arange(n) * np.timedelta64(60, "s")
    out = [sep.join(header)]
    for i, ts in enumerate(t):
        vals = [f"{agg(i):g}", f"{kettle(i):g}", *extra]
        out.append(sep.join([str(ts).replace("T", " ")] + [v.replace(".", dec) for v in vals]))
    return "\n".join(out) + "\n"


def _one_line_error(fn, *parts):
    with pytest.raises(UserError) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg, msg
    for p in parts:
        assert p in msg, msg
    return msg


def _quiet_load(*a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)  # none of these fixtures should warn
        return load_csv(*a, **kw)


@pytest.mark.parametrize("sep,dec", [(";", ","), (";", "."), ("\t", "."), ("|", ",")])
def test_delimiter_and_decimal_comma_are_sniffed(tmp_path, sep, dec):
    f = tmp_path / "export.csv"
    f.write_text(_rows(sep=sep, dec=dec))
    h = _quiet_load(f).check()
    assert len(h) == 40 and h.rate_s == 60
    assert h.aggregate[1] == pytest.approx(301.5) and h.appliances["kettle"][0] == pytest.approx(2000.25)


def test_sniff_dialect_prefers_comma_and_never_guesses_decimal_comma_with_dots():
    assert sniff_dialect(["a,b", "1,2"]) == (",", ".")
    assert sniff_dialect(["a;b", "1,5;2,25"]) == (";", ",")
    assert sniff_dialect(["a;b", "1,5;2.25"]) == (";", ".")  # mixed marks: leave the numbers to fail loudly
    assert sniff_dialect(["onecolumn", "1"]) == (",", ".")
    assert sniff_dialect([]) == (",", ".")


@pytest.mark.parametrize(
    "text, expected",
    [
        # mixed delimiters: the row and both delimiters are named
        (
            "Time;Aggregate;Kettle\n2013-06-01 00:00:00;1;0\n2013-06-01 00:01:00,2,0\n",
            ("a.csv:3", "separated by ','", "header by ';'", "one delimiter"),
        ),
        # decimal commas in a comma-separated file
        (
            "Time,Aggregate,Kettle\n2013-06-01 00:00:00,1,5,0,25\n2013-06-01 00:01:00,2,0\n",
            ("a.csv:2", "decimal commas", "';'"),
        ),
        # any other malformed row still says fix the row
        (
            "Time,Aggregate,Kettle\n2013-01-01 00:00:00,1,0,9\n",
            ("a.csv:2", "4 fields but the header has 3", "fix the row"),
        ),
        # a quoted decimal comma gets a hint
        (
            'Time,Aggregate,Kettle\n2013-06-01 00:00:00,"1,5",0\n2013-06-01 00:01:00,2,0\n',
            ("a.csv:2", "non-numeric", "decimal comma?"),
        ),
    ],
    ids=["mixed-delimiters", "decimal-commas", "other-malformed-row", "quoted-decimal-comma"],
)
def test_malformed_rows_name_their_cause(tmp_path, text, expected):
    f = tmp_path / "a.csv"
    f.write_text(text)
    _one_line_error(lambda: load_csv(f), *expected)


def test_kw_from_header_and_from_unit_option(tmp_path):
    f = tmp_path / "kw.csv"
    f.write_text(_rows(header=("Time", "Aggregate_kW", "Kettle (kW)"), agg=lambda i: 0.3, kettle=lambda i: 2.0))
    h = _quiet_load(f)
    assert h.aggregate[0] == pytest.approx(300) and h.appliances["kettle"][0] == pytest.approx(2000)
    assert h.meta["units"] == ["Aggregate_kW", "Kettle (kW)"]
    assert "kW -> W: Aggregate_kW, Kettle (kW)" in "\n".join(load_notes(h.meta))

    g = tmp_path / "plain.csv"
    g.write_text(_rows(agg=lambda i: 0.3, kettle=lambda i: 2.0))
    with pytest.warns(DataWarning, match="--unit kW"):  # looks like kW: say how to read it so
        load_csv(g)
    h = _quiet_load(g, unit="kW")
    assert h.aggregate[0] == pytest.approx(300) and h.meta["units"] == ["Aggregate", "Kettle"]
    w = tmp_path / "w.csv"  # an explicit W in the name beats --unit kW
    w.write_text(_rows(header=("Time", "Aggregate (W)", "Kettle")))
    h = _quiet_load(w, unit="kW")
    assert h.aggregate[0] == pytest.approx(300.5) and h.appliances["kettle"][0] == pytest.approx(2_000_250)
    _one_line_error(lambda: load_csv(g, unit="MW"), "--unit", "kW")


def test_negative_readings_are_clipped_counted_and_warned(tmp_path):
    f = tmp_path / "neg.csv"
    f.write_text(_rows(agg=lambda i: -5 if i in (3, 9) else 300, kettle=lambda i: -1 if i == 4 else 0))
    with pytest.warns(DataWarning, match=r"3 negative readings clipped to 0 W \(Aggregate 2, Kettle 1\)"):
        h = load_csv(f)
    assert h.aggregate.min() == 0 and h.appliances["kettle"].min() == 0 and h.aggregate[3] == 0
    assert h.meta["negative_clipped"] == {"Aggregate": 2, "Kettle": 1}
    assert load_notes(h.meta) == ["negative      3 readings clipped to 0 W (Aggregate 2, Kettle 1)"]


def test_unknown_columns_are_named_not_ignored_silently(tmp_path):
    f = tmp_path / "u.csv"
    f.write_text(_rows(header=("Time", "Aggregate", "Kettle", "Toaster", "Kettle_status"), extra=("7", "0")))
    with pytest.warns(DataWarning, match="ignoring column.*Toaster; map one with --columns") as rec:
        h = load_csv(f)
    assert len(rec) == 1 and h.meta["unknown_columns"] == ["Toaster"]
    assert "ignored       columns no device maps to: Toaster" in load_notes(h.meta)


def test_trailing_delimiter_column_is_not_unknown(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("\n".join(r + ";" for r in _rows(sep=";").splitlines()) + "\n")
    assert _quiet_load(f).meta["unknown_columns"] == []


def test_cli_prints_one_line_warnings_and_the_counts(tmp_path):
    f = tmp_path / "neg.csv"
    n = 3 * 1440  # 3 days of minutes: enough to window
    f.write_text(
        _rows(
            n=n,
            sep=";",
            dec=",",
            agg=lambda i: -2.5 if i % 1000 == 1 else 300 + (i % 7),
            kettle=lambda i: 2000 if i % 90 < 3 else 0,
            header=("Time", "Aggregate", "Kettle", "Toaster"),
            extra=("1",),
        )
    )
    r = CliRunner().invoke(main, ["data", "--source", f"csv:{f}", "--window", "60", "--stride", "60"])
    assert r.exit_code == 0, r.output + r.stderr
    assert "Traceback" not in r.stderr
    warn = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert any("5 negative readings clipped" in ln for ln in warn), r.stderr
    assert any("Toaster" in ln for ln in warn), r.stderr
    assert "negative      5 readings clipped to 0 W (Aggregate 5)" in r.stdout
    assert "ignored       columns no device maps to: Toaster" in r.stdout


def test_cli_unit_option_and_delimiter_error(tmp_path):
    f = tmp_path / "kw.csv"
    f.write_text(_rows(n=3 * 1440, agg=lambda i: 0.3, kettle=lambda i: 2.0 if i % 90 < 3 else 0))
    r = CliRunner().invoke(main, ["data", "--source", f"csv:{f}", "--unit", "kW", "--window", "60", "--stride", "60"])
    assert r.exit_code == 0, r.stderr
    assert "units         kW -> W: Aggregate, Kettle" in r.stdout and "--unit kW" not in r.stderr
    # --unit applies to this command only: the next one reads watts (and says the data looks like kW)
    r = CliRunner().invoke(main, ["data", "--source", f"csv:{f}", "--window", "60", "--stride", "60"])
    assert "pass --unit kW" in r.stderr
    g = tmp_path / "bad.csv"
    g.write_text("Time;Aggregate;Kettle\n2013-06-01 00:00:00;1;0\n2013-06-01 00:01:00,2,0\n")
    r = CliRunner().invoke(main, ["data", "--source", f"csv:{g}"])
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and "mixed delimiters" in r.stderr
    # the public entry point takes unit= too: kW columns come back in watts, and without it they stay as read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        kw, raw = load_source(f"csv:{f}", unit="kW"), load_source(f"csv:{f}")
    np.testing.assert_allclose(kw.aggregate[:3], [300.0, 300.0, 300.0], rtol=1e-6)
    np.testing.assert_allclose(kw.appliances["kettle"][:4], [2000.0, 2000.0, 2000.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(raw.aggregate[:3], [0.3, 0.3, 0.3], rtol=1e-6)
