"""Metrics, post-processing and scalers against references written here (issue 36): hand-computed small cases and
plain loops that share no code with nilmbuild, on the inputs the happy path never has: masks with invalid bins,
per-device thresholds other than 0.5 (the shipped ones run 0.15 to 0.99), standard and min-max scalers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from independent import ref_inverse, ref_metrics, ref_postprocess  # tests/independent.py

from nilmbuild.data.preprocess import SCALERS, scaler_affine
from nilmbuild.infer import PostConfig, all_metrics, baselines, denormalise, device_metrics, postprocess

# ---- metrics --------------------------------------------------------------------------------------------------


def test_f1_at_10w_counts_only_valid_bins():
    y = np.array([0, 50, 50, 0, 50], float)
    yh = np.array([50, 50, 0, 0, 50], float)
    mask = np.array([0, 1, 0, 1, 1], bool)  # the FP at 0 and the FN at 2 are invalid bins
    assert device_metrics(y, yh, y > 10, threshold_w=10, mask=mask)["f1_10w"] == 1.0
    assert device_metrics(y, yh, y > 10, threshold_w=10)["f1_10w"] == pytest.approx(4 / 6)  # TP 2, FP 1, FN 1


def test_on_thresholds_are_strict_and_no_valid_bin_is_nan():
    """ON means above the threshold: a prediction exactly at the device threshold is OFF, 10 W is not above the
    NILMTK 10 W, 10.5 W is. With no valid bin every regression metric is NaN."""
    y = np.array([10.0, 10.5, 10.5, 0.0])
    yh = np.array([0.0, 10.5, 1500.0, 10.0])
    states = np.array([0, 1, 1, 0])
    m = device_metrics(y, yh, states, threshold_w=1500.0)
    assert math.isnan(m["precision"]) and (m["recall"], m["f1"]) == (0.0, 0.0)  # 1500 W is not above 1500 W
    # y > 10: [0, 1, 1, 0]; yhat > 10: [0, 1, 1, 0] (10 W at index 3 is not above): F1 1
    assert m["f1_10w"] == 1.0
    m2 = device_metrics(y, yh, states, threshold_w=1499.0)
    assert (m2["precision"], m2["recall"]) == (1.0, 0.5)
    none = device_metrics(y, yh, states, threshold_w=10.0, mask=np.zeros(4, bool))
    assert all(math.isnan(none[k]) for k in ("mae", "rmse", "nde", "sae", "teca", "mr", "f1", "f1_10w"))


def test_every_metric_with_invalid_bins_and_per_device_thresholds_equals_a_loop():
    rng = np.random.default_rng(7)
    T, names, thr = 200, ["fridge", "kettle", "dishwasher"], {"fridge": 37.0, "kettle": 1500.0, "dishwasher": 5.0}
    y = np.where(rng.random((3, T)) < 0.4, rng.uniform(0, 3000, (3, T)), 0.0)
    yh = np.clip(y + rng.normal(0, 400, (3, T)), -50, None)
    states = (rng.random((3, T)) < 0.5).astype(np.uint8)
    mask = rng.random(T) > 0.3
    yh[:, ~mask] = 1e5  # invalid bins carry garbage: any metric that reads them is far off
    got = all_metrics(names, y, yh, states, thr, mask)
    for i, d in enumerate(names):
        want = ref_metrics(y[i], yh[i], states[i], thr[d], mask)
        for m, v in want.items():
            assert got[d][m] == pytest.approx(v, rel=1e-9, abs=1e-12), (d, m)
    base = baselines(names, y, states, thr, {"fridge": 80.0, "kettle": 20.0, "dishwasher": 7.0}, mask)
    for i, d in enumerate(names):
        const = {"fridge": 80.0, "kettle": 20.0, "dishwasher": 7.0}[d]
        assert base["mean"][d]["mae"] == pytest.approx(np.abs(y[i][mask] - const).mean())
        assert base["zero"][d]["recall"] == 0.0 and base["zero"][d]["mae"] == pytest.approx(y[i][mask].mean())


def test_evaluate_table_layout_by_hand():
    """`nilmbuild evaluate`'s plain-text table: 18-wide device, 12-wide predictor, each metric right-aligned in 10
    characters with 3 decimals, a dash for NaN, a rule as long as the header."""
    from nilmbuild.infer import METRICS, format_table

    m = {k: 0.5 for k in METRICS} | {"nde": float("nan")}
    lines = format_table({"devices": {"kettle": m}, "baselines": {"zero": {"kettle": m}}}).splitlines()
    head = "device" + " " * 12 + "predictor" + " " * 3 + "".join(" " * (10 - len(k)) + k for k in METRICS)
    cells = "".join("         -" if k == "nde" else "     0.500" for k in METRICS)
    assert lines == [
        head,
        "-" * len(head),
        "kettle" + " " * 12 + "NILMFormer  " + cells,
        " " * 18 + "zero" + " " * 8 + cells,
    ]
    legacy = format_table({"devices": {"kettle": m}, "baseline": {"kettle": m}}).splitlines()  # one "baseline"
    assert legacy[3] == " " * 18 + "mean" + " " * 8 + cells


# ---- scalers --------------------------------------------------------------------------------------------------

X = np.array([20.0, 30.0, 270.0, 60.0])  # max 270, min 20, mean 95, population std sqrt(10425)


@pytest.mark.parametrize(
    "kind,state,scaled_270",
    [
        ("max", {"max": 270.0}, 1.0),
        ("standard", {"mean": 95.0, "std": math.sqrt(10425.0)}, 175.0 / math.sqrt(10425.0)),
        ("minmax", {"min": 20.0, "max": 270.0}, 1.0),
        ("mean", {"mean": 95.0}, 270.0 / 95.0),
    ],
)
def test_scaler_fit_transform_and_inverse_by_hand(kind, state, scaled_270):
    s = SCALERS[kind]().fit(X)
    for key, v in state.items():
        assert getattr(s, key) == pytest.approx(v, rel=1e-12), key
    assert s.transform(np.array([270.0]))[0] == pytest.approx(scaled_270, rel=1e-12)
    z = np.array([-0.5, 0.0, 0.5, 2.0])
    want = [ref_inverse(v, {"kind": kind, **state}) for v in z]
    np.testing.assert_allclose(s.inverse(z), want, rtol=1e-12)
    np.testing.assert_allclose(denormalise(z, {"kind": kind, **state}), want, rtol=1e-6)


@pytest.mark.parametrize(
    "scaler,a,b",
    [
        ({"kind": "max", "max": 2000.0}, 2000.0, 0.0),
        ({"kind": "standard", "mean": 100.0, "std": 50.0}, 50.0, 100.0),
        ({"kind": "minmax", "min": 20.0, "max": 270.0}, 250.0, 20.0),
        ({"kind": "mean", "mean": 80.0}, 80.0, 0.0),
    ],
)
def test_live_affines_keep_the_offset(scaler, a, b):
    """The one scaled -> watts affine (z * a + b, data.preprocess.scaler_affine, which the live graph and the pages
    use), by hand, and the scaler's own transform is its inverse."""
    from nilmbuild.data.preprocess import scaler_from_dict

    assert scaler_affine(scaler) == pytest.approx((a, b), rel=1e-12)
    assert scaler_from_dict(scaler).transform(np.array([270.0]))[0] == pytest.approx((270.0 - b) / a, rel=1e-12)


def test_live_model_watts_use_the_scalers_offset():
    """LiveModel's watts output = output.power * std + mean for standard scalers and * range + min for min-max."""
    import torch

    from nilmbuild.live.export import LiveModel
    from nilmbuild.model import NILMFormer, NILMFormerConfig
    from nilmbuild.model.checkpoint import Loaded
    from nilmbuild.model.whatif import FIELDS, WhatIf

    torch.manual_seed(0)
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=3)  # the graph has 3
    model = NILMFormer(cfg).eval()
    scalers = {}
    for i, d in enumerate(cfg.device_names):
        scalers[d] = (
            {"kind": "standard", "mean": 100.0 + i, "std": 50.0}
            if i % 2 == 0
            else {"kind": "minmax", "min": 20.0 + i, "max": 270.0}
        )
    live = LiveModel(Loaded(model=model, cfg=cfg, scalers={"appliances": scalers}))
    x = torch.from_numpy(np.random.default_rng(1).normal(size=(1, 7, 48)).astype(np.float32))
    wi = WhatIf.defaults(cfg)
    with torch.no_grad():
        watts = live(x, torch.tensor(0), *(getattr(wi, k) for k in FIELDS))[0].numpy()
        power = model(x, gate_mode="hard").power[0].numpy()
    for i, d in enumerate(cfg.device_names):
        want = [ref_inverse(float(v), scalers[d]) for v in power[i]]
        np.testing.assert_allclose(watts[i], want, rtol=1e-5, atol=1e-4)


# ---- post-processing -------------------------------------------------------------------------------------------


def test_cap_binds_after_negatives_are_clamped():
    """A: 150 W, B: -50 W, meter 100 W. Clamped first, the sum is 150 W > 100 W: A is scaled to 100 W. (Capped
    first, the sum is exactly 100 W, nothing binds, and the clamp then leaves 150 W on a 100 W meter.)"""
    scalers = {"appliances": {"a": {"kind": "max", "max": 100.0}, "b": {"kind": "max", "max": 100.0}}}
    pc = PostConfig(short=False, long_off=False, gate_thresholds={"a": 0.5, "b": 0.5})
    r = postprocess(
        np.array([[1.5], [-0.5]], np.float32), np.ones((2, 1), np.float32), ["a", "b"], scalers, pc, [100.0]
    )
    np.testing.assert_allclose(r["final_w"][:, 0], [100.0, 0.0], atol=1e-4)
    assert r["cap_binds"].tolist() == [True]


def test_each_device_is_judged_at_its_own_threshold():
    """Gate 0.3 is ON for a device calibrated at 0.15 and OFF for one at 0.9; 0.7 is OFF at 0.9 (but ON at 0.5)."""
    scalers = {"appliances": {"fridge": {"kind": "max", "max": 100.0}, "kettle": {"kind": "max", "max": 3000.0}}}
    gate = np.array([[0.3] * 6, [0.0, 0.7, 0.7, 0.7, 0.0, 0.0]], np.float32)
    z = np.full((2, 6), 0.5, np.float32)
    pc = PostConfig(
        gate_thresholds={"fridge": 0.15, "kettle": 0.9},
        min_on_steps={"fridge": 1, "kettle": 1},
        min_off_steps={"fridge": 1, "kettle": 1},
        off_window=3,
    )
    r = postprocess(z, gate, ["fridge", "kettle"], scalers, pc)
    assert r["on_model"].tolist() == [[True] * 6, [False] * 6]
    np.testing.assert_allclose(r["final_w"], [[50.0] * 6, [0.0] * 6])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pipeline_equals_a_loop_with_mixed_scalers_and_thresholds(seed):
    rng = np.random.default_rng(seed)
    T, K = 90, 5
    names = ["fridge", "kettle", "washing_machine"]
    thr = [0.15, 0.62, 0.99]
    scal = [
        {"kind": "standard", "mean": 60.0, "std": 45.0},
        {"kind": "minmax", "min": -10.0, "max": 2990.0},
        {"kind": "max", "max": 2200.0},
    ]
    min_on, min_off = [1, 2, 4], [1, 3, 2]
    # gates in blocks (so segments and pools have structure), values around every threshold
    gate = np.repeat(rng.choice([0.05, 0.14, 0.16, 0.5, 0.63, 0.985, 0.995], size=(3, T // 3)), 3, axis=1)
    gate = gate.astype(np.float32)
    z = rng.normal(0.3, 0.6, (3, T)).astype(np.float32)
    agg = rng.uniform(-20, 4000, T)
    pc = PostConfig(
        gate_thresholds=dict(zip(names, thr)),
        min_on_steps=dict(zip(names, min_on)),
        min_off_steps=dict(zip(names, min_off)),
        off_window=K,
    )
    got = postprocess(z, gate, names, {"appliances": dict(zip(names, scal))}, pc, agg)["final_w"]
    want = ref_postprocess(z, gate, scal, thr, min_on, min_off, K, agg)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-3)
    assert (got.sum(axis=0) <= np.maximum(agg, 0) + 1e-2).all()
