import numpy as np
import pytest

from nilmbuild.train.device_types import classify, device_specs, device_stats, head_for, pos_weight_for


def st(duty, peak, dur, cv=0.3):
    return {"duty_cycle": duty, "peak_w": peak, "mean_on_min": dur, "cv_on": cv}


@pytest.mark.parametrize(
    "stats,expected",
    [
        (st(0.012, 2900, 3), "sparse_high_power"),  # kettle
        (st(0.005, 1400, 4), "sparse_medium_power"),  # microwave below 2000 W
        (st(0.022, 2300, 75), "long_cycle"),  # washing machine: rare but long
        (st(0.032, 2200, 84), "long_cycle"),  # dishwasher
        (st(0.33, 200, 17, 0.2), "cycling_low_power"),  # fridge (regular cycles)
        (st(0.2, 900, 10, 0.8), "cycling_low_power"),  # the spec's own rule: duty < 0.25 and cv > 0.5
        (st(0.95, 30, 600), "always_on"),
        (st(0.5, 1500, 20), "regular"),
    ],
)
def test_tree(stats, expected):
    assert classify(stats) == expected


def test_heads_and_specs():
    assert head_for("sparse_high_power") == head_for("sparse_medium_power") == "sparse"
    assert head_for("long_cycle") == "regular"
    specs = device_specs({"kettle": {"head": "sparse"}, "fridge": {"head": "regular"}})
    assert [(s.name, s.head) for s in specs] == [("kettle", "sparse"), ("fridge", "regular")]


def test_stats_on_a_tiny_series():
    p = np.array([0, 3000, 3000, 0, 0, 0, 2500, 0, 0, 0], dtype=np.float32)
    s = (p > 2000).astype(np.uint8)
    d = device_stats(p, s, step_s=60)
    assert d["duty_cycle"] == pytest.approx(0.3)
    assert d["peak_w"] == 3000
    assert d["mean_on_min"] == pytest.approx(1.5)
    assert d["cv_on"] == pytest.approx(0.5 / 1.5)
    assert d["n_activations"] == 2


def test_pos_weight_bounds():
    assert pos_weight_for(0.5) == 1.0
    assert pos_weight_for(0.001) == 10.0
    assert pos_weight_for(0.0) == 1.0
