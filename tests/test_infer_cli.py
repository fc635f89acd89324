"""evaluate / disaggregate end to end on a tiny random checkpoint and 3 simulated days."""

import csv
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import PrepConfig, load_source, prepare
from nilmbuild.infer import disaggregate_series, evaluate
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.pipeline import data_settings, load_data_for

PREP = {"window": 48, "stride": 24, "fractions": [0.5, 0.25, 0.25], "gap_windows": 1}
PROV = {"source": "synthetic", "days": 3, "seed": 1, "prep": PREP}


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=1))
    prepared = prepare(load_source("synthetic", days=3, seed=1), PrepConfig(**{**PREP, "fractions": (0.5, 0.25, 0.25)}))
    path = tmp_path_factory.mktemp("ck") / "tiny.pt"
    save_checkpoint(path, model, scalers=prepared.scalers, provenance=PROV)
    return path


def test_data_settings_aliases():
    assert data_settings({})["source"] == "synthetic"
    s = data_settings({"data": {"source": "csv:x", "prep_config": {"window": 8}}, "seed": 3})
    assert (s["source"], s["prep"], s["seed"]) == ("csv:x", {"window": 8}, 3)


def test_evaluate_json(ckpt):
    r = CliRunner().invoke(main, ["evaluate", "--checkpoint", str(ckpt), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out["devices"]) == {"kettle", "microwave", "fridge", "dishwasher", "washing_machine"}
    keys = {"mae", "rmse", "nde", "sae", "teca", "mr", "precision", "recall", "f1", "f1_10w"}
    for part in ("devices", "baseline"):
        for m in out[part].values():
            assert set(m) == keys
    assert out["split"] == "test" and out["samples"] > 0


def test_evaluate_table(ckpt):
    r = CliRunner().invoke(main, ["evaluate", "--checkpoint", str(ckpt), "--split", "val"])
    assert r.exit_code == 0, r.output
    assert "kettle" in r.stdout and "mean" in r.stdout and "mae" in r.stdout


def test_evaluate_uses_checkpoint_scalers_and_split(ckpt):
    loaded = load_checkpoint(ckpt)
    prepared = load_data_for(loaded)
    assert prepared.stats["split_bins"]["test"][0] == round(4320 * 0.75) + 48
    res = evaluate(loaded, prepared, "test")
    base = res["baseline"]["fridge"]
    tr = prepared.train
    mean = tr.appliances_w[2][tr.valid].mean()
    te = prepared.test
    assert base["mae"] == pytest.approx(np.abs(te.appliances_w[2][te.valid] - mean).mean(), rel=1e-5)


def test_disaggregate_csv(ckpt, tmp_path):
    out = tmp_path / "pred.csv"
    r = CliRunner().invoke(
        main,
        ["disaggregate", "--checkpoint", str(ckpt), "--out", str(out), "--from", "2024-01-02", "--to", "2024-01-03"],
    )
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["time", "aggregate", "kettle", "microwave", "fridge", "dishwasher", "washing_machine"]
    assert len(rows) == 1 + 1440
    assert rows[1][0] == "2024-01-02T00:00:00Z"
    assert all(float(v) >= 0 for v in rows[100][2:])
    assert not list(tmp_path.glob(".*.tmp"))


def test_errors_are_one_line(ckpt, tmp_path):
    r = CliRunner().invoke(main, ["evaluate", "--checkpoint", str(tmp_path / "missing.pt")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = CliRunner().invoke(
        main, ["disaggregate", "--checkpoint", str(ckpt), "--out", str(tmp_path / "p.csv"), "--from", "2030-01-01"]
    )
    assert r.exit_code == 2 and "no samples" in r.output


def test_disaggregate_series_shape(ckpt):
    loaded = load_checkpoint(ckpt)
    prepared = load_data_for(loaded)
    T = prepared.test.timestamps.shape[0]
    d = disaggregate_series(loaded, prepared, start=10, length=100)
    D, L = 5, 100
    assert d["length"] == L and d["timestamps"].shape == (L,) and d["input"].shape == (7, L)
    for k in ("truth_w", "states", "power_scaled", "power_raw_scaled", "gate", "prediction_w"):
        assert d[k].shape == (D, L), k
    for k in ("raw_w", "short_w", "long_off_w", "final_w", "on_model", "short_removed", "off_suppressed"):
        assert d["post"][k].shape == (D, L), k
    assert d["seams"].tolist() == [24, 48, 72, 96]
    assert d["geometry"]["margin"] == 12
    assert set(d["metrics"]) == set(loaded.devices) and set(d["metrics"]["kettle"])
    np.testing.assert_array_equal(d["truth_w"], prepared.test.appliances_w[:, 10:110])
    # a dict series without truth, start as a date, default length = one day cropped to the series
    s = {"timestamps": prepared.test.timestamps, "aggregate_w": prepared.test.aggregate_w}
    e = disaggregate_series(loaded, s, start=str(prepared.test.timestamps[5]))
    assert e["start"] == 5 and e["length"] == min(1440, T - 5) and e["metrics"] is None and e["truth_w"] is None
