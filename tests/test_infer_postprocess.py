"""Post-processing steps on hand-made arrays."""

import numpy as np

from nilmbuild.infer import (
    PostConfig,
    clamp_negative,
    denormalise,
    duration_steps,
    postprocess,
    suppress_long_off,
    suppress_short_activations,
)
from nilmbuild.infer.postprocess import min_steps


def test_duration_steps():
    assert duration_steps(12, 60) == 1 and duration_steps(0, 60) == 1
    assert duration_steps(1800, 60) == 30 and duration_steps(61, 60) == 2
    assert min_steps(["kettle", "fridge", "dishwasher"], 6) == {"kettle": 2, "fridge": 10, "dishwasher": 300}


def test_short_activation_suppression():
    p = np.array([0, 5, 5, 0, 7, 7, 7, 0], np.float32)
    out, kept, removed = suppress_short_activations(p, p > 0, min_on_steps=3)
    assert out.tolist() == [0, 0, 0, 0, 7, 7, 7, 0]
    assert removed.tolist() == [0, 1, 1, 0, 0, 0, 0, 0]
    assert kept.tolist() == [0, 0, 0, 0, 1, 1, 1, 0]
    out1, _, removed1 = suppress_short_activations(p, p > 0, min_on_steps=1)
    assert out1.tolist() == p.tolist() and not removed1.any()


def test_short_activation_bridges_short_gaps():
    p = np.array([4, 4, -1, 4, 0, 0, 0, 9], np.float32)
    on = np.array([1, 1, 0, 1, 0, 0, 0, 1], bool)
    out, kept, removed = suppress_short_activations(p, on, min_on_steps=4, min_off_steps=2)
    # [0, 4) is one segment of 4 after bridging the 1-sample gap: kept (gap sample keeps its value)
    assert out.tolist() == [4, 4, -1, 4, 0, 0, 0, 0]
    assert kept.tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert removed.tolist() == [0, 0, 0, 0, 0, 0, 0, 1]


def test_long_off_suppression():
    gate = np.array([0, 0, 0, 0, 0.9, 0, 0, 0, 0, 0.2], np.float32)
    power = np.full(10, 3.0, np.float32)
    out, supp, avg, mx = suppress_long_off(power, gate, thr=0.5, window=3)
    assert supp.tolist() == [1, 1, 1, 0, 0, 0, 1, 1, 1, 1]
    assert out.tolist() == [0, 0, 0, 3, 3, 3, 0, 0, 0, 0]
    np.testing.assert_allclose(avg[[0, 4, 9]], [0.0, 0.3, 0.1], atol=1e-6)  # ends truncated
    np.testing.assert_allclose(mx[[3, 4, 5, 9]], [0.9, 0.9, 0.9, 0.2], atol=1e-6)
    # separate thresholds: avg < 0.5 but max must be < 0.1
    _, supp2, _, _ = suppress_long_off(power, gate, thr=0.5, window=3, thr_max=0.1)
    assert supp2.tolist() == [1, 1, 1, 0, 0, 0, 1, 1, 0, 0]


def test_clamp_and_denormalise():
    assert clamp_negative(np.array([-1, 0, 2])).tolist() == [0, 0, 2]
    np.testing.assert_allclose(denormalise(np.array([0, 0.5, 1]), {"kind": "max", "max": 2000.0}), [0, 1000, 2000])
    np.testing.assert_allclose(
        denormalise(np.array([-1, 0, 2]), {"kind": "standard", "mean": 100.0, "std": 50.0}), [50, 100, 200]
    )


def test_pipeline_stages():
    gate = np.array([[0, 0.9, 0, 0, 0, 0, 0.9, 0.9, 0.9, 0]], np.float32)
    scaled = np.array([[-0.01, 0.5, 0.02, 0.02, 0.02, 0.02, 1, 1, -0.2, 0.02]], np.float32)
    scalers = {"aggregate": {"kind": "max", "max": 1.0}, "appliances": {"kettle": {"kind": "max", "max": 100.0}}}
    pc = PostConfig(
        min_on_steps={"kettle": 2}, min_off_steps={"kettle": 1}, gate_thresholds={"kettle": 0.5}, off_window=3
    )
    r = postprocess(scaled, gate, ["kettle"], scalers, pc)
    np.testing.assert_allclose(r["raw_w"][0], [-1, 50, 2, 2, 2, 2, 100, 100, -20, 2], atol=1e-4)
    np.testing.assert_allclose(r["short_w"][0], [-1, 0, 2, 2, 2, 2, 100, 100, -20, 2], atol=1e-4)
    assert r["short_removed"][0].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    # max pool of the gate over 3 samples is < 0.5 only at 2..4 (index 0 still sees the 0.9 at 1)
    assert r["off_suppressed"][0].tolist() == [0, 0, 0, 1, 1, 0, 0, 0, 0, 0]
    np.testing.assert_allclose(r["long_off_w"][0], [-1, 0, 2, 0, 0, 2, 100, 100, -20, 2], atol=1e-4)
    np.testing.assert_allclose(r["final_w"][0], [0, 0, 2, 0, 0, 2, 100, 100, 0, 2], atol=1e-4)
    assert r["on_model"].dtype == bool and r["final_w"].shape == (1, 10)
    off = postprocess(scaled, gate, ["kettle"], scalers, PostConfig(short=False, long_off=False, off_window=3))
    np.testing.assert_allclose(off["final_w"][0], np.maximum(r["raw_w"][0], 0), atol=1e-4)


def test_cap_to_aggregate_scales_every_device_by_the_same_factor_only_where_the_sum_exceeds():
    from nilmbuild.infer.postprocess import cap_to_aggregate

    p = np.array([[2000.0, 100.0, 0.0], [1000.0, 50.0, 0.0]])  # 2 devices, 3 steps
    agg = np.array([1500.0, 400.0, -5.0])  # step 0 exceeded, 1 not, 2 negative meter
    out, binds = cap_to_aggregate(p, agg)
    assert binds.tolist() == [True, False, False]
    np.testing.assert_allclose(out[:, 0], [1000.0, 500.0])  # x 1500 / 3000, proportions kept
    np.testing.assert_allclose(out[:, 1:], p[:, 1:])
    assert abs(out[:, 0].sum() - 1500.0) < 1e-3
