"""--unit is a data setting: a run trained with `--unit kW` records it (TrainConfig, checkpoint provenance), and a
resume or an evaluation that leaves --unit out reads the same CSV as kilowatts again (issue 33: it used to be a
context variable that `train --resume` never saw, so kilowatts came back as watts)."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.pipeline import load_data_for
from nilmbuild.train.trainer import TrainConfig, resume_path, train

TINY = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 1, "window": 96, "film_hidden_dim": 8}
MINUTES = 2 * 1440


def _kw_csv(path):
    """Two days at one minute, power in kW, column names without a unit; returns the aggregate in kW."""
    rng = np.random.default_rng(7)
    t = np.datetime64("2024-03-01T00:00:00") + np.arange(MINUTES) * np.timedelta64(60, "s")
    kettle = np.where(rng.random(MINUTES) < 0.03, 2.0, 0.0)
    fridge = np.where((np.arange(MINUTES) // 20) % 3 == 0, 0.09, 0.0)
    agg = np.round(0.15 + kettle + fridge + rng.random(MINUTES) * 0.05, 3)
    rows = ["Time,Aggregate,Kettle,Fridge"]
    rows += [f"{str(ts).replace('T', ' ')},{a:g},{k:g},{f:g}" for ts, a, k, f in zip(t, agg, kettle, fridge)]
    path.write_text("\n".join(rows) + "\n")
    return agg


def test_resume_without_unit_reads_kilowatts_again(tmp_path, prepared_runs):
    csv = tmp_path / "house.csv"
    agg_kw = _kw_csv(csv)
    out = tmp_path / "m.pt"
    tc = TrainConfig(
        source=f"csv:{csv}",
        unit="kW",
        epochs=1,
        max_steps=1,
        batch_size=4,
        model=TINY,
        out=str(out),
        progress=False,
        threads=1,
        pcgrad=False,
    )
    train(tc, log=lambda *a: None)
    first = prepared_runs[0].splits["train"]
    # minute data, no resampling: the train split's first aggregate samples are the file's kW values in W
    n = 50
    np.testing.assert_allclose(first.aggregate_w[:n], agg_kw[:n] * 1000, rtol=1e-6)

    r = CliRunner().invoke(main, ["train", "--resume", str(resume_path(out)), "--quiet"])
    assert r.exit_code == 0, r.output
    resumed = prepared_runs[1]
    for split in ("train", "val", "test"):
        np.testing.assert_array_equal(resumed.splits[split].aggregate_w, prepared_runs[0].splits[split].aggregate_w)
        np.testing.assert_array_equal(getattr(resumed, split).x, getattr(prepared_runs[0], split).x)

    loaded = load_checkpoint(out)
    assert loaded.provenance["unit"] == "kW" and loaded.extra["train_config"]["unit"] == "kW"
    again = load_data_for(loaded)  # `nilmbuild evaluate` without --unit
    np.testing.assert_array_equal(again.splits["train"].aggregate_w, first.aggregate_w)


def test_resume_with_another_unit_says_what_to_do(tmp_path):
    csv = tmp_path / "house.csv"
    _kw_csv(csv)
    out = tmp_path / "m.pt"
    base = dict(epochs=1, max_steps=1, batch_size=4, model=TINY, progress=False, threads=1, pcgrad=False)
    train(TrainConfig(source=f"csv:{csv}", unit="kW", out=str(out), **base), log=lambda *a: None)
    r = CliRunner().invoke(main, ["train", "--resume", str(resume_path(out)), "--unit", "W", "--quiet"])
    assert r.exit_code == 2 and "trained with --unit kW" in r.output and "Traceback" not in r.output
