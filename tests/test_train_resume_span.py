"""--start/--end are explicit data settings (issue 33), as --unit is (tests/test_train_resume_unit.py): each command
passes them on as `span=`, a run keeps them in its TrainConfig and checkpoint provenance, and a resume that leaves
them out reads the span it was started with. A resume with another span is a one-line error, as another --unit is:
the resumed optimizer, schedule and best checkpoint belong to the data the run started on."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import loaders
from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.train.trainer import TrainConfig, resume_path, train
from tests.test_train_resume_unit import TINY, _kw_csv

START = "2024-03-01T06:00"


def _run(tmp_path, **kw):
    csv = tmp_path / "house.csv"
    _kw_csv(csv)
    out = tmp_path / "m.pt"
    base = dict(epochs=1, max_steps=1, batch_size=4, model=TINY, progress=False, threads=1, pcgrad=False, unit="kW")
    train(TrainConfig(source=f"csv:{csv}", out=str(out), **base, **kw), log=lambda *a: None)
    return out


def test_resume_without_start_reads_the_recorded_span(tmp_path, prepared_runs):
    out = _run(tmp_path, span=(START, None))
    first = prepared_runs[0]
    assert str(first.train.timestamps[0]) == "2024-03-01T06:00:00"  # the CSV starts at midnight: --start applied
    r = CliRunner().invoke(main, ["train", "--resume", str(resume_path(out)), "--quiet"])
    assert r.exit_code == 0, r.output
    for split in ("train", "val", "test"):
        np.testing.assert_array_equal(prepared_runs[1][split].timestamps, first[split].timestamps)
        np.testing.assert_array_equal(prepared_runs[1][split].x, first[split].x)
    loaded = load_checkpoint(out)
    assert loaded.provenance["start"] == START and loaded.provenance["end"] is None
    assert list(loaded.extra["train_config"]["span"]) == [START, None]
    r = CliRunner().invoke(main, ["train", "--resume", str(resume_path(out)), "--start", START, "--quiet"])
    assert r.exit_code == 0, r.output  # the same span again is the same data: allowed


def test_resume_with_another_span_says_what_to_do(tmp_path):
    out = _run(tmp_path, span=(START, None))
    r = CliRunner().invoke(main, ["train", "--resume", str(resume_path(out)), "--start", "2024-03-01", "--quiet"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert f"was trained with --start {START} --end (none)" in r.output and "leave --start/--end out" in r.output


@pytest.fixture
def spans(monkeypatch):
    """The `span` every load_source call receives; the call then stops the command with a UserError."""
    seen = []

    def spy(spec, house=None, columns=None, days=60, seed=0, unit=None, span=None):
        seen.append(span)
        raise UserError("stopped by the test")

    monkeypatch.setattr(loaders, "load_source", spy)
    monkeypatch.setattr("nilmbuild.data.cli.load_source", spy)
    return seen


@pytest.mark.parametrize(
    "command",
    [
        ["data"],
        ["train", "--out", "unused.pt", "--quiet"],
        ["evaluate"],
        ["disaggregate", "--out", "unused.csv"],
        ["capture", "--out", "unused.msgpack"],
    ],
)
def test_every_command_that_reads_a_source_passes_start_and_end_on(command, spans):
    r = CliRunner().invoke(main, [*command, "--start", "2024-01-02", "--end", "2024-01-05"])
    assert r.exit_code == 2 and "stopped by the test" in r.output, r.output
    assert spans == [("2024-01-02", "2024-01-05")]


def test_site_passes_start_and_end_on(monkeypatch, tmp_path):
    seen = []

    def make_context(checkpoint, source, **kw):
        seen.append(kw["span"])
        raise UserError("stopped by the test")

    monkeypatch.setattr("nilmbuild.site.context.make_context", make_context)
    args = ["site", "--no-cache", "-q", "-o", str(tmp_path), "--start", "2024-01-02"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and seen == [("2024-01-02", None)], r.output


def test_without_start_a_checkpoint_reads_its_own_span_and_another_house_all(spans):
    from types import SimpleNamespace

    from nilmbuild.pipeline import load_household_for

    ck = SimpleNamespace(provenance={"source": "nilmtk:x.h5", "house": 1, "start": "2013-06-07", "end": None})
    for house, given, expected in [
        (None, None, ("2013-06-07", None)),  # its own building: its span
        (1, None, ("2013-06-07", None)),
        (2, None, (None, None)),  # another building: all of it
        (None, ("2013-06-09", None), ("2013-06-09", None)),  # --start given: that
    ]:
        spans.clear()
        with pytest.raises(UserError, match="stopped"):
            load_household_for(ck, None, house, span=given)
        assert spans == [expected], (house, given)


def test_explain_end_is_the_explained_interval_not_a_data_span():
    """explain's --start/--end are the window and interval it explains. They used to share click's parameter names
    with the data span options, so --end also cut the data there and the window after it was missing."""
    args = ["explain", "-d", "kettle", "--start", "2024-06-20T04:00", "--end", "2024-06-20T06:00", "-m", "saliency"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "2024-06-20T06:00" in r.output and "no full 480-step window" not in r.output
