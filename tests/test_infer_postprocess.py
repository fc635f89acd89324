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


def test_default_long_off_window_is_15_centred_samples():
    """The default pool (15 min at 1 min) is centred: 7 samples each side. A lone gate spike at step 20 keeps the
    prediction at steps 13..27 and nowhere else (a 14- or 16-sample pool moves one of the two edges)."""
    gate = np.zeros((1, 41), np.float32)
    gate[0, 20] = 0.9
    scalers = {"appliances": {"fridge": {"kind": "max", "max": 100.0}}}
    pc = PostConfig(short=False, gate_thresholds={"fridge": 0.5})
    r = postprocess(np.ones((1, 41), np.float32), gate, ["fridge"], scalers, pc)
    assert np.flatnonzero(r["final_w"][0]).tolist() == list(range(13, 28))
    assert PostConfig.for_model(_spec_cfg()).off_window == 15


def _spec_cfg():
    from nilmbuild.model import NILMFormerConfig

    return NILMFormerConfig()


def test_default_durations_are_the_nilm_facts_seconds_at_one_minute():
    """PostConfig() without step counts: fridge ON >= 60 s = 1 step; dishwasher ON >= 1800 s = 30 steps and OFF
    gaps bridged below 30 steps. Worked out by hand: the lone fridge step stays; the dishwasher's 30-step run stays,
    its 29-step run 30 steps later goes."""
    T = 100
    gate = np.zeros((2, T), np.float32)
    gate[0, 5] = 0.9
    gate[1, 0:30] = gate[1, 60:89] = 0.9
    scalers = {"appliances": {d: {"kind": "max", "max": 100.0} for d in ("fridge", "dishwasher")}}
    pc = PostConfig(long_off=False, gate_thresholds={"fridge": 0.5, "dishwasher": 0.5})
    r = postprocess((gate > 0.5).astype(np.float32), gate, ["fridge", "dishwasher"], scalers, pc)
    assert np.flatnonzero(r["final_w"][0]).tolist() == [5]
    assert np.flatnonzero(r["final_w"][1]).tolist() == list(range(30))


def test_a_gate_exactly_at_its_threshold_is_off_and_not_below_it():
    """ON means gate > threshold; the long-OFF test zeroes where both pools are < their thresholds. A gate exactly
    at the threshold is therefore OFF for the model and never counts as a long OFF period."""
    gate = np.full((1, 5), 0.5, np.float32)
    scalers = {"appliances": {"fridge": {"kind": "max", "max": 100.0}}}
    pc = PostConfig(gate_thresholds={"fridge": 0.5}, min_on_steps={"fridge": 1}, off_window=3)
    r = postprocess(np.full((1, 5), 0.2, np.float32), gate, ["fridge"], scalers, pc)
    assert not r["on_model"].any() and not r["off_suppressed"].any()
    np.testing.assert_allclose(r["final_w"][0], 20.0)
    power = np.full(3, 7.0, np.float32)
    _, supp, _, _ = suppress_long_off(power, np.array([0.2, 0.5, 0.2]), thr=0.5, window=3)
    assert not supp.any()  # max pool exactly 0.5
    _, supp, avg, _ = suppress_long_off(power, np.full(3, 0.5), thr=0.5, window=3, thr_max=0.9)
    assert avg.tolist() == [0.5, 0.5, 0.5] and not supp.any()  # average pool exactly 0.5


def test_a_pool_of_one_or_zero_samples_is_the_gate_itself():
    gate = np.array([0.1, 0.7, 0.3], np.float32)
    for k in (1, 0):
        _, supp, avg, mx = suppress_long_off(np.ones(3, np.float32), gate, thr=0.5, window=k)
        np.testing.assert_allclose(avg, gate, rtol=1e-6)
        np.testing.assert_allclose(mx, gate, rtol=1e-6)
        assert supp.tolist() == [True, False, True]


def test_for_model_defaults_and_upstream_models_skip_the_gate_steps():
    """A spec model at the default 60 s: the durations of nilm-facts in steps, its calibrated thresholds. An
    imported upstream model (already gated, or without a gate) runs neither suppression step."""
    from types import SimpleNamespace

    from nilmbuild.model import NILMFormerConfig

    pc = PostConfig.for_model(NILMFormerConfig())
    assert pc.step_s == 60 and (pc.short, pc.long_off) == (True, True)
    assert pc.min_on_steps == {"kettle": 1, "microwave": 1, "fridge": 1, "dishwasher": 30, "washing_machine": 30}
    assert pc.min_off_steps == {"kettle": 1, "microwave": 1, "fridge": 1, "dishwasher": 30, "washing_machine": 3}
    up = PostConfig.for_model(SimpleNamespace(arch="condinilm", devices=["kettle", "fridge"]))
    assert (up.short, up.long_off, up.cap) == (False, False, True)
    assert up.gate_thresholds == {"kettle": 0.5, "fridge": 0.5}


def test_without_an_aggregate_nothing_is_capped_and_cap_binds_says_so():
    scalers = {"appliances": {"kettle": {"kind": "max", "max": 100.0}}}
    pc = PostConfig(short=False, long_off=False)
    r = postprocess(np.array([[5.0, -1.0, 2.0]], np.float32), np.ones((1, 3), np.float32), ["kettle"], scalers, pc)
    assert r["cap_binds"].tolist() == [False, False, False]
    np.testing.assert_allclose(r["final_w"][0], [500.0, 0.0, 200.0])
    np.testing.assert_allclose(r["clamped_w"], r["final_w"])


def test_an_even_pool_has_one_more_sample_after_than_before():
    """k = 4: (k - 1) // 2 = 1 sample before and k // 2 = 2 after. A spike at 3 of 8 is seen from steps 1..4."""
    gate = np.zeros(8, np.float32)
    gate[3] = 0.9
    _, supp, _, mx = suppress_long_off(np.ones(8, np.float32), gate, thr=0.5, window=4)
    assert np.flatnonzero(mx > 0.5).tolist() == [1, 2, 3, 4]
    assert np.flatnonzero(~supp).tolist() == [1, 2, 3, 4]


def test_a_device_without_a_threshold_is_judged_at_one_half():
    scalers = {"appliances": {"kettle": {"kind": "max", "max": 100.0}}}
    gate = np.array([[0.7, 0.3, 0.5]], np.float32)
    r = postprocess(np.ones((1, 3), np.float32), gate, ["kettle"], scalers, PostConfig(short=False, long_off=False))
    assert r["on_model"][0].tolist() == [True, False, False]


def test_a_one_step_gap_is_bridged_only_when_min_off_exceeds_one():
    p = np.array([5, 5, 0, 5, 5], np.float32)
    for min_off, kept_want in ((1, [1, 1, 0, 1, 1]), (0, [1, 1, 0, 1, 1]), (2, [1, 1, 1, 1, 1])):
        _, kept, _ = suppress_short_activations(p, p > 0, min_on_steps=2, min_off_steps=min_off)
        assert kept.astype(int).tolist() == kept_want, min_off


def test_no_devices_gives_empty_device_axes():
    r = postprocess(np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32), [], {"appliances": {}}, PostConfig())
    assert r["final_w"].shape == (0, 4) and r["raw_w"].shape == (0, 4) and r["cap_binds"].shape == (4,)
