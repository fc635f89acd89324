"""nilmbuild/site/findings.py on small tensors whose answers are worked out by hand in each test."""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.site import findings as F


def test_film_off_change_picks_the_largest_growth_of_error():
    # 2 samples, 2 devices, 2 steps; truth 0 everywhere except sample 1 device 0
    true = np.array([[[0, 0], [0, 0]], [[100, 100], [0, 0]]], float)
    on = np.array([[[10, 10], [0, 0]], [[100, 100], [5, 5]]], float)
    off = np.array([[[20, 20], [0, 0]], [[40, 60], [5, 25]]], float)
    # MAE on: [[10, 0], [0, 5]]; off: [[20, 0], [50, 15]]; growth [[10, 0], [50, 10]] -> (1, 0)
    c = F.film_off_change(on, off, true)
    assert (c["sample"], c["device"]) == (1, 0)
    assert c["mae_on_w"] == 0.0 and c["mae_off_w"] == 50.0
    assert c["delta_w"] == pytest.approx(50.0 - 100.0)  # mean power 50 W off vs 100 W on


def test_gate_removed_energy_counts_raw_power_where_the_gate_is_closed():
    raw = np.array([[[1000.0, 2000.0, 3000.0], [600.0, 600.0, 600.0]]])  # (1, 2, 3) W
    prob = np.array([[[0.9, 0.2, 0.5], [0.1, 0.1, 0.95]]])
    thr = [0.5, 0.9]  # open where prob > thr: device 0 open at step 0 only (0.5 is not > 0.5)
    g = F.gate_removed_energy(raw, prob, thr, step_h=0.5)
    # device 0 closed at steps 1, 2: (2000 + 3000) W x 0.5 h = 2.5 kWh; device 1: 1200 x 0.5 = 0.6 kWh
    assert (g["sample"], g["device"], g["closed_steps"]) == (0, 0, 2)
    assert g["kwh"] == pytest.approx(2.5)


def test_top_head_is_the_largest_cell_with_its_sample():
    d = np.zeros((2, 3, 4))
    d[1, 2, 3] = 7.5
    d[0, 1, 0] = 7.0
    s = np.arange(24).reshape(2, 3, 4)
    assert F.top_head(d, s) == {"layer": 1, "head": 2, "device": 3, "delta_w": 7.5, "sample": 23}


def test_attention_distance_of_known_rows():
    # head 0: every query puts all weight on the next step (distance 1, the last on the previous);
    # head 1: uniform over 4 keys: query 0 -> (0+1+2+3)/4 = 1.5, query 1 -> (1+0+1+2)/4 = 1, query 2 -> 1, query 3 -> 1.5
    L = 4
    near = np.zeros((L, L))
    for t in range(L):
        near[t, t + 1 if t + 1 < L else t - 1] = 1
    w = np.stack([near, np.full((L, L), 0.25)])[None]  # (1, 2, 4, 4)
    np.testing.assert_allclose(F.attention_distance(w), [1.0, 1.25])
    lg = F.local_and_global(np.array([[3.0, 1.0], [2.0, 9.0]]))
    assert lg == {"local": [0, 1, 1.0], "global": [1, 1, 9.0]}


def test_weight_moved_is_half_the_l1_distance():
    m = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # masked: all weight off the diagonal
    u = np.array([[[[0.5, 0.5], [0.25, 0.75]]]])  # rows move 0.5 and 0.75 of their weight
    np.testing.assert_allclose(F.weight_moved(m, u), [0.625])


def test_pcgrad_timeline_from_a_log():
    epochs = [
        {"epoch": 1, "pcgrad": {"enabled": False, "mean_cos": {}}},
        {"epoch": 2, "pcgrad": {"enabled": True, "mean_cos": {"a|b": 0.3, "a|c": 0.1}}},
        {"epoch": 3, "pcgrad": {"enabled": True, "mean_cos": {"a|b": -0.2, "a|c": 0.05}}},
        {"epoch": 4, "pcgrad": {"enabled": True, "mean_cos": {"a|b": 0.1, "a|c": -0.4}}},
    ]
    pc = F.pcgrad_timeline(epochs)
    assert pc == {"first_on": 2, "first_conflict": 3, "epochs": 4, "min_cos": -0.4, "min_epoch": 4, "pair": ["a", "c"]}
    never = F.pcgrad_timeline(epochs[:1])
    assert never == {"first_on": None, "first_conflict": None, "epochs": 1}


def test_best_epoch():
    epochs = [
        {"epoch": 1, "val": {"loss": 2.0}},
        {"epoch": 2, "val": {"loss": 1.5}},
        {"epoch": 3, "val": {"loss": 1.7}},
    ]
    assert F.best_epoch(epochs) == {"epoch": 2, "loss": 1.5}
    assert F.best_epoch([{"epoch": 1}]) is None


def test_device_errors_relative_to_energy():
    true = np.array([[[10.0, 10.0], [0.0, 100.0], [0.0, 0.0]]])  # (1, 3 devices, 2 steps)
    pred = np.array([[[10.0, 20.0], [0.0, 90.0], [5.0, 0.0]]])
    e = F.device_errors(pred, true)
    # device 0: 10 / 20 = 0.5; device 1: 10 / 100 = 0.1; device 2 has no energy: left out of best/worst
    np.testing.assert_allclose(e["relative"][:2], [0.5, 0.1])
    assert (e["best"], e["worst"]) == (1, 0)
    masked = F.device_errors(pred, true, valid=np.array([True, False]))  # only step 0: device 0 exact, device 1 none
    assert (masked["best"], masked["worst"]) == (0, 0)
    assert F.device_errors(pred * 0, true * 0)["best"] is None


def test_appliance_share_and_rarest_device():
    agg = np.array([[100.0, 300.0]])
    dev = np.array([[[50.0, 50.0], [0.0, 100.0]]])
    assert F.appliance_share(agg, dev) == pytest.approx(0.5)
    states = np.array([[[1, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]]])  # shares 0.5, 0.25, 0 (never on: skipped)
    assert F.rarest_device(states) == {"device": 1, "share": 0.25}


def test_tracking_feature_finds_the_correlated_row():
    sig = np.array([[0.0, 1.0, 2.0, 3.0]])
    feats = np.array([[[1.0, 0.0, 1.0, 0.0], [6.0, 4.0, 2.0, 0.0], [0.0, 1.0, 2.0, 4.0]]])  # row 1: r = -1 exactly
    t = F.tracking_feature(feats, sig)
    assert t["feature"] == 1 and t["r"] == pytest.approx(-1.0)


def test_stream_updates_relative_sizes():
    ins = [np.array([3.0, 4.0]), np.array([0.0, 10.0])]  # norms 5 and 10
    adds = {
        "attention": [np.array([0.0, 1.0]), np.array([0.0, 2.0])],
        "ffn": [np.array([3.0, 0.0]), np.array([1.0, 0.0])],
    }
    u = F.stream_updates(ins, adds)
    assert u["ratios"] == {"attention": [0.2, 0.2], "ffn": [0.6, 0.1]}
    assert (u["layer"], u["part"], u["ratio"]) == (0, "ffn", 0.6)


def test_peak_owner_and_top_energy():
    agg = np.array([[100.0, 900.0], [500.0, 400.0]])
    out = np.zeros((2, 2, 2))
    out[0, :, 1] = [300.0, 500.0]
    p = F.peak_owner(agg, out)
    assert p == {"sample": 0, "t": 1, "aggregate_w": 900.0, "device": 1, "device_w": 500.0}
    e = F.top_energy(np.array([[[1000.0, 1000.0], [0.0, -50.0]], [[0.0, 0.0], [3000.0, 0.0]]]), step_h=0.5)
    assert (e["sample"], e["device"]) == (1, 1) and e["kwh"] == pytest.approx(1.5)  # 3000 W x 0.5 h


def test_busiest_window_counts_each_device_against_its_own_largest():
    from nilmbuild.site.findings import busiest_window

    # window 0: device 0 at its largest (1.0); window 1: both devices at half of their largest (0.5 + 0.5 = 1.0,
    # a tie: the first wins); window 2: device 1 at its largest and device 0 at 0.4 (1.4)
    energy = np.array([[10.0, 0.0], [5.0, 1.0], [4.0, 2.0]])
    assert busiest_window(energy) == 2
    assert busiest_window(np.zeros((3, 2))) == 0  # nothing predicted anywhere: the first window


def test_removed_share_reads_the_nearest_fraction():
    from nilmbuild.site.findings import removed_share

    assert removed_share([0, 0.1, 0.2], [1.0, 0.25, 0.0], 0.1) == {"fraction": 0.1, "removed": 0.75}
    assert removed_share([0, 0.5, 1.0], [1.0, 0.6, 0.0], 0.1) == {"fraction": 0.0, "removed": 0.0}


def test_most_faithful_is_the_lowest_finite_deletion_area():
    from nilmbuild.site.findings import most_faithful

    rows = [
        {"device": "kettle", "method": "ig", "deletion_area": 0.3, "random_deletion_area": 0.5},
        {"device": "kettle", "method": "occlusion", "deletion_area": 0.1, "random_deletion_area": 0.5},
        {"device": "kettle", "method": "saliency", "deletion_area": float("nan"), "random_deletion_area": 0.5},
        {"device": "fridge", "method": "ig", "deletion_area": None, "random_deletion_area": 0.4},
    ]
    assert most_faithful(rows, "kettle") == {"method": "occlusion", "area": 0.1, "random": 0.5}
    assert most_faithful(rows, "fridge") is None
