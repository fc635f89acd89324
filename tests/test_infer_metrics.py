"""Every metric on tiny hand-computed examples."""

import json
import math

import numpy as np
import pytest

from nilmbuild.infer import METRICS, all_metrics, device_metrics, format_table, json_safe, mean_baseline
from nilmbuild.infer import metrics as M

Y = np.array([0, 100, 200, 0], float)
YH = np.array([10, 80, 260, 0], float)  # errors 10, -20, 60, 0


def test_regression_metrics():
    assert M.mae(Y, YH) == pytest.approx(90 / 4)
    assert M.rmse(Y, YH) == pytest.approx(math.sqrt((100 + 400 + 3600) / 4))
    assert M.nde(Y, YH) == pytest.approx(4100 / 50000)  # squared errors / sum y^2, no sqrt
    assert M.sae(Y, YH) == pytest.approx(50 / 300)
    assert M.teca(Y, YH) == pytest.approx(1 - 90 / 600)
    assert M.mr(Y, YH) == pytest.approx(280 / 370)


def test_mask_selects_samples():
    mask = np.array([0, 1, 1, 0], bool)
    assert M.mae(Y, YH, mask) == pytest.approx(40)
    assert M.sae(Y, YH, mask) == pytest.approx(40 / 300)


def test_classification_and_device_metrics():
    states = np.array([0, 0, 1, 1])  # duration-filtered truth
    m = device_metrics(Y, YH, states, threshold_w=50)
    # predicted ON (yhat > 50): [0, 1, 1, 0] -> TP 1, FP 1, FN 1
    assert (m["precision"], m["recall"], m["f1"]) == (0.5, 0.5, 0.5)
    # NILMTK: yhat > 10 = [0, 1, 1, 0] (10 is not > 10), y > 10 = [0, 1, 1, 0]
    assert m["f1_10w"] == 1.0
    assert set(m) == set(METRICS)


def test_zero_division_conventions():
    z = np.zeros(4)
    m = device_metrics(z, z, z, threshold_w=10)
    assert math.isnan(m["nde"]) and math.isnan(m["sae"]) and math.isnan(m["teca"]) and math.isnan(m["mr"])
    assert math.isnan(m["precision"]) and math.isnan(m["recall"]) and math.isnan(m["f1"])
    assert m["mae"] == 0 and m["rmse"] == 0
    # true ON samples but nothing predicted: recall 0, F1 0, precision undefined
    c = M.classification([1, 1, 0], [0, 0, 0])
    assert c["recall"] == 0 and c["f1"] == 0 and math.isnan(c["precision"])


def test_mean_baseline_and_table():
    y = np.stack([Y, np.array([50, 50, 0, 0], float)])
    st = (y > 20).astype(np.uint8)
    base = mean_baseline(["a", "b"], y, st, {"a": 20, "b": 20}, {"a": 75.0, "b": 25.0})
    assert base["a"]["mae"] == pytest.approx((75 + 25 + 125 + 75) / 4)
    assert base["b"]["mae"] == pytest.approx(25.0)
    assert base["b"]["sae"] == pytest.approx(0.0)
    assert base["a"]["recall"] == 1.0 and base["a"]["precision"] == 0.5  # constant 75 W > 20 W everywhere
    assert base["b"]["f1"] == pytest.approx(2 / 3)  # TP 2, FP 2, FN 0: 4 / 6
    res = {"devices": all_metrics(["a", "b"], y, y, st, {"a": 20, "b": 20}), "baseline": base}
    assert res["devices"]["a"]["mae"] == 0 and res["devices"]["a"]["f1"] == 1
    text = format_table(res)
    assert "a" in text and "mean" in text and "f1_10w" in text
    json.dumps(json_safe({"x": float("nan"), "y": np.float32(1.5)}), allow_nan=False)
