"""`nilmbuild disaggregate` and `nilmbuild evaluate` values, not just their keys and shapes.

A tiny random checkpoint (3 simulated days, window 48) with a non-identity output FiLM, so the
prediction is far from all-zero and post-processing (long-OFF suppression, clamping) changes it. disaggregate's CSV is compared with postprocess(seq2subseq(...)) in
watts run here from the checkpoint; evaluate's JSON with metrics written out below from their
definitions (docs/metrics.md), on the same post-processed prediction and the split's ground truth.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import PrepConfig, load_source, prepare
from nilmbuild.data.preprocess import exogenous
from nilmbuild.infer import PostConfig, postprocess, seq2subseq
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.pipeline import load_data_for

PREP = {"window": 48, "stride": 24, "fractions": [0.5, 0.25, 0.25], "gap_windows": 1}
PROV = {"source": "synthetic", "days": 3, "seed": 1, "prep": PREP}
SPAN = ("2024-01-02", "2024-01-03")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=1))
    with torch.no_grad():  # a non-identity output FiLM: closed gates give non-zero (even negative)
        g = model.decoder_film.gen  # power, so post-processing has something to do
        g.fc2.weight.normal_(0, 0.3)
        g.fc2.bias.normal_(0, 0.3)
    prepared = prepare(load_source("synthetic", days=3, seed=1), PrepConfig(**{**PREP, "fractions": (0.5, 0.25, 0.25)}))
    path = tmp_path_factory.mktemp("ck") / "tiny.pt"
    save_checkpoint(path, model, scalers=prepared.scalers, provenance=PROV)
    return path


def reference_watts(loaded, prepared, split):
    """Post-processed prediction (D, T) in W, built here: model input from the checkpoint's aggregate
    scaler ("max") + time features, seq2subseq, postprocess with the data's duration settings."""
    sp = prepared.splits[split]
    sc = loaded.scalers["aggregate"]
    assert sc["kind"] == "max"
    x = np.concatenate([(sp.aggregate_w / sc["max"])[None], exogenous(sp.timestamps)]).astype(np.float32)
    res = seq2subseq(loaded.model, x, batch_size=8, timestamps=sp.timestamps, step_s=prepared.resample_s)
    pc = PostConfig.for_model(
        loaded,
        step_s=prepared.resample_s,
        min_on_steps=dict(prepared.min_on_steps),
        min_off_steps=dict(prepared.min_off_steps),
    )
    return postprocess(res.power, res.gate, loaded.devices, loaded.scalers, pc, aggregate_w=sp.aggregate_w)["final_w"]


def read_csv(path):
    rows = list(csv.reader(path.open()))
    table = np.array([[float(v) if v else np.nan for v in r[1:]] for r in rows[1:]])
    return rows[0], [r[0] for r in rows[1:]], table


def test_disaggregate_csv_is_the_postprocessed_prediction_in_watts(ckpt, tmp_path):
    out = tmp_path / "pred.csv"
    r = CliRunner().invoke(
        main, ["disaggregate", "-c", str(ckpt), "--out", str(out), "--from", SPAN[0], "--to", SPAN[1]]
    )
    assert r.exit_code == 0, r.output
    header, times, table = read_csv(out)
    loaded = load_checkpoint(ckpt)
    prepared = load_data_for(loaded, date_from=SPAN[0], date_to=SPAN[1], whole=True)
    sp = prepared.splits["train"]
    want = reference_watts(loaded, prepared, "train")  # (D, T) W
    assert header == ["time", "aggregate", *loaded.devices]
    assert times[0] == "2024-01-02T00:00:00Z" and times[-1] == "2024-01-02T23:59:00Z" and len(times) == want.shape[1]
    v = sp.valid.astype(bool)
    assert np.isnan(table[~v]).all()  # gaps are empty cells
    np.testing.assert_allclose(table[v, 0], sp.aggregate_w[v], atol=0.051)  # written with one decimal
    np.testing.assert_allclose(table[v, 1:], want[:, v].T, atol=0.051)
    # the reference is not trivially zero, in watts (not scaled units), and post-processed (not the raw output)
    on = want[:, v] > 1.0
    assert on.mean() > 0.2 and want.max() > 50, (on.mean(), want.max())
    assert (on.mean(axis=1) < 0.05).any()  # a device whose output post-processing zeroed
    assert len({tuple(np.round(c, 1)) for c in want}) == len(loaded.devices)  # every column its own device


def metrics_by_hand(y, yhat, states, thr_w):
    """docs/metrics.md, written out: y, yhat (T,) W over valid samples, states (T,) 0/1."""
    e = yhat - y
    t, p = states > 0, yhat > thr_w
    tp, fp, fn = (t & p).sum(), (~t & p).sum(), (t & ~p).sum()
    t10, p10 = y > 10, yhat > 10
    return {
        "mae": np.abs(e).mean(),
        "rmse": np.sqrt((e**2).mean()),
        "nde": (e**2).sum() / (y**2).sum(),
        "sae": abs(yhat.sum() - y.sum()) / y.sum(),
        "teca": 1 - np.abs(e).sum() / (2 * y.sum()),
        "mr": np.minimum(y, yhat).sum() / np.maximum(y, yhat).sum(),
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "f1": 2 * tp / (2 * tp + fp + fn),
        "f1_10w": 2 * (t10 & p10).sum() / (2 * (t10 & p10).sum() + (~t10 & p10).sum() + (t10 & ~p10).sum()),
    }


def assert_metrics(got: dict, want: dict, who: str):
    for k, w in want.items():
        w = float(w)
        if np.isfinite(w):
            assert got[k] == pytest.approx(w, rel=1e-5, abs=1e-6), (who, k, got[k], w)
        else:
            assert got[k] is None, (who, k, got[k])


def test_evaluate_json_matches_metrics_by_hand(ckpt):
    r = CliRunner().invoke(main, ["evaluate", "-c", str(ckpt), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    loaded = load_checkpoint(ckpt)
    prepared = load_data_for(loaded)
    te, tr = prepared.test, prepared.train
    v, vt = te.valid.astype(bool), tr.valid.astype(bool)
    assert out["split"] == "test" and out["samples"] == int(v.sum())
    pred = reference_watts(loaded, prepared, "test")
    mean_baseline = out.get("baselines", {}).get("mean", out.get("baseline"))  # "baselines" may replace it
    zero_baseline = out.get("baselines", {}).get("zero")
    f1s = []
    for i, d in enumerate(loaded.devices):
        j = list(prepared.devices).index(d)
        y, st, thr = te.appliances_w[j][v].astype(np.float64), te.states[j][v], prepared.thresholds_w[d]
        yhat = pred[i][v].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = metrics_by_hand(y, yhat, st, thr)
            assert_metrics(out["devices"][d], want, d)
            mean = float(tr.appliances_w[j][vt].mean())
            assert_metrics(mean_baseline[d], metrics_by_hand(y, np.full_like(y, mean), st, thr), f"{d} mean")
            if zero_baseline is not None:
                assert_metrics(zero_baseline[d], metrics_by_hand(y, np.zeros_like(y), st, thr), f"{d} zero")
        f1s.append(float(want["f1"]))
    assert np.isfinite(f1s).sum() >= 4 and max(f1s) > 0.05, f1s  # real F1 values, not 0/0 everywhere
