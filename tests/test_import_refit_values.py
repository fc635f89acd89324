"""`--source ukdale:PATH`, value by value: each step of CondiNILM's UK-DALE pipeline that the scaler refit
re-implements, on tiny UK-DALE houses written here, against values worked out by hand from CondiNILM's
UKDALE_DataBuilder._get_dataframe, split_train_valid_timeblock_nilmdataset and NILMscaler.fit (issue 36's
mutation pass of scaler_refit.py, refit_block.py and ukdale_house.py; docs/testing.md).

- the grid of one house: 10 s (or 6 s) bins' means, forward fill of exactly 6 bins, readings under 5 W, the
  clip, the inner join of the channels, the rebin to the run's rate from midnight, the labels.dat aliases;
- the split: the time-block split's boundaries (ceil of window / stride, n_train 0 or 1, houses with 0, 1 or 2
  windows, a house listed twice, the seed-0 fallback) on windows numbered so the kept ones can be read back;
- the config: every key's checks, the stride, the scaling types (MeanScaling for power, int divisors).
"""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.errors import UserError
from nilmbuild.importer.refit_block import TrainingBlock, training_block
from nilmbuild.importer.scaler_refit import channel_stats, refit_scaler, training_windows, windows
from nilmbuild.importer.ukdale_house import HouseSeries, base_bins, read_house
from nilmbuild.importer.upstream_config import UpstreamConfig, read_config
from tests.upstream_files import condinilm_config, write_json, write_ukdale_house

M = 1370044800  # 2013-06-01 00:00 UTC: a midnight
NAN = np.nan
_DROP = object()  # config(key=_DROP): the key left out


def block(**over) -> TrainingBlock:
    fields = dict(
        houses=[1], devices=["kettle"], rate="10s", rate_s=10, window=4, stride=4, overlap=0.0, seed=0,
        power_type="MaxScaling", appliance_type="MaxScaling",
    )  # fmt: skip
    fields.update(over)
    return TrainingBlock(**fields)


def config(tmp_path, **over):
    cfg = condinilm_config(
        devices=["kettle"], window_size=4, sampling_rate="10s", dataset="UKDALE", ind_house_train_val=[1],
        ind_house_test=[9], overlap=0.0, seed=0, power_scaling_type="MaxScaling", appliance_scaling_type="MaxScaling",
    )  # fmt: skip
    cfg.update(over)
    cfg = {k: v for k, v in cfg.items() if v is not _DROP}
    return read_config(write_json(tmp_path / "experiment_config.json", cfg))


# ---- one house on the run's grid -------------------------------------------------------------------------------


def _gappy_house(tmp_path, rate="10s"):
    """Aggregate: 10-s bins 0..19 from midnight; the kettle: bins 1..25, so the join is bins 1..19."""
    agg = {
        1: 100.0, 6: 200.0,  # bin 0: mean 150 (before the kettle starts: outside the join)
        12: 5.0,  # bin 1: exactly 5 W stays 5
        21: 4.9,  # bin 2: under 5 W reads 0
        30: 300.0,  # bin 3, then bins 4..9 missing: a gap of exactly 6 bins is filled with 300
        100: 400.0,  # bin 10, then bins 11..17 missing: 11..16 take 400, the 7th (17) stays missing
        180: 7000.0,  # bin 18: clipped to 6000
        199: 500.0,  # bin 19: the aggregate's last
    }  # fmt: skip
    kettle_t = np.arange(10, 260, 10)
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + np.array(list(agg)), list(agg.values())), "kettle": (M + kettle_t, 2 * kettle_t)},
    )
    return read_house(root, 1, block(rate=rate))


def test_base_bins_fill_quiet_clip_and_join(tmp_path):
    series = _gappy_house(tmp_path)
    want_agg = [5, 0, 300, *[300] * 6, 400, *[400] * 6, NAN, 6000, 500]
    np.testing.assert_array_equal(series.power[0], want_agg)
    np.testing.assert_array_equal(series.power[1], 2 * np.arange(10, 200, 10))  # the kettle's bins 1..19
    assert (series.start_s, series.step_s) == (M + 10, 10)


def test_a_10s_run_is_not_rebinned(tmp_path):
    """At 10 s CondiNILM does not resample again, so the 7th bin of a gap stays missing (a second pass of
    resample().ffill(limit=6) would fill it) and the window over it is left out."""
    series = _gappy_house(tmp_path)
    wins = windows(series, block(window=3, stride=3))  # steps 0-2, 3-5, 6-8, 9-11, 12-14, (15-17: NaN)
    np.testing.assert_array_equal(wins[:, 0, 0], [5, 300, 300, 400, 400])


def test_channels_that_end_apart_are_joined_on_the_common_bins(tmp_path):
    """The kettle starts later and ends later than the aggregate: only their common bins are kept."""
    series = _gappy_house(tmp_path)
    assert series.power.shape == (2, 19)


@pytest.mark.parametrize("kettle_from", [200, 230])
def test_channels_with_no_time_in_common(tmp_path, kettle_from):
    """The kettle starts in the bin after the aggregate's last (200 s), or later: one line, no traceback."""
    t = np.arange(0, 200, 10)
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + t, t + 100.0), "kettle": (M + kettle_from + t, t + 100.0)},
    )
    with pytest.raises(UserError, match="house_1: the aggregate and kettle have no time in common") as e:
        read_house(root, 1, block())
    assert "\n" not in str(e.value)


def test_a_channel_with_one_reading(tmp_path):
    first, mean = base_bins(np.array([M + 15]), np.array([42.0]), 10)
    assert first == M // 10 + 1 and mean.tolist() == [42.0]
    first, mean = base_bins(np.array([M + 15, M + 31]), np.array([42.0, 43.0]), 10)
    assert first == M // 10 + 1 and mean.tolist() == [42.0, 42.0, 43.0]
    t = np.arange(0, 100, 10)
    root = write_ukdale_house(tmp_path / "ukdale", 1, {"aggregate": (M + t, t + 100.0), "kettle": ([M + 30], [7.0])})
    series = read_house(root, 1, block())
    assert series.start_s == M + 30 and series.power.tolist() == [[130.0], [7.0]]


@pytest.mark.parametrize("rate", ["6s", "6S"])
def test_a_6s_run_bins_on_6s_and_is_not_rebinned(tmp_path, rate):
    """6-s bins from midnight: [0,6) [6,12) [12,18) [18,24), then 7 empty bins of which 6 are filled."""
    agg = {0: 100.0, 5: 200.0, 7: 300.0, 11: 500.0, 12: 700.0, 20: 900.0, 66: 1000.0}
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + np.array(list(agg)), list(agg.values())), "kettle": (M + np.arange(0, 67), [50.0] * 67)},
    )
    series = read_house(root, 1, block(rate=rate, rate_s=6))
    np.testing.assert_array_equal(series.power[0], [150, 400, 700, 900, *[900] * 6, NAN, 1000])
    np.testing.assert_array_equal(series.power[1], [50.0] * 12)
    assert (series.start_s, series.step_s) == (M, 6)


def test_rebin_counts_bins_from_midnight(tmp_path):
    """7-min bins counted from midnight (not from the first reading, nor the epoch: 7 min does not divide a day).

    The aggregate starts at 05:00:50, the last 10 s of 7-min bin 42 (04:54:00-05:01:00), and reads 100 W per bin
    number after 41: bin 42 holds that one reading, bin 53 only its last. The kettle reads 1000 W until the end of
    bin 44, then nothing until much later: 6 of its 10-s bins are filled (bin 45 is their mean), then 6 of its
    7-min bins (46..51), and bins 52, 53 stay missing."""
    t = np.arange(18050, 22261, 10)
    kettle_t = np.concatenate([np.arange(18050, 18900, 10), [30000]])
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + t, 100.0 * (t // 420 - 41)), "kettle": (M + kettle_t, [1000.0] * kettle_t.size)},
    )
    series = read_house(root, 1, block(rate="7min", rate_s=420))
    np.testing.assert_array_equal(series.power[0], 100.0 * np.arange(1, 13))
    np.testing.assert_array_equal(series.power[1], [1000.0] * 10 + [NAN, NAN])
    assert (series.start_s, series.step_s) == (M + 42 * 420, 420)


# ---- labels.dat: names and aliases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("device", "label"),
    [
        ("fridge", "freezer"),
        ("fridge", "fridge_freezer"),
        ("fridge", "fridge-freezer"),
        ("washing_machine", "washer_dryer"),
        ("washing_machine", "washer"),
        ("washing_machine", "clothes_washer"),
        ("dishwasher", "dish_washer"),
        ("microwave", "microwave_oven"),
        *((d, d) for d in ("washing_machine", "cooker", "dishwasher", "kettle", "fridge", "microwave")),
        ("electric_heater", "electric_heater"),
    ],
)
def test_labels_name_the_device_or_its_alias(tmp_path, device, label):
    """labels.dat names the device's channel (3) by the device's own name or one of CondiNILM's aliases."""
    t = np.arange(0, 40, 10)
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + t, [100.0] * 4), "lighting": (M + t, [20.0] * 4), label: (M + t, [300.0] * 4)},
    )
    series = read_house(root, 1, block(devices=[device]))
    assert series.power.tolist() == [[100.0] * 4, [300.0] * 4]


def test_the_first_alias_in_condinilms_order_wins(tmp_path):
    t = np.arange(0, 40, 10)
    root = write_ukdale_house(
        tmp_path / "ukdale",
        1,
        {"aggregate": (M + t, [100.0] * 4), "fridge_freezer": (M + t, [20.0] * 4), "freezer": (M + t, [30.0] * 4)},
    )
    assert read_house(root, 1, block(devices=["fridge"])).power[1].tolist() == [30.0] * 4


def test_every_appliance_condinilm_builds_for_ukdale_is_a_training_block():
    """UKDALE_DataBuilder._check_appliance_names' seven names. (read_config's device names refuse cooker and
    electric_heater before this, since nilmbuild cannot explain them.)"""
    names = ["washing_machine", "cooker", "dishwasher", "kettle", "fridge", "microwave", "electric_heater"]
    raw = {
        "dataset": "UKDALE", "ind_house_train_val": [1], "overlap": 0, "seed": 0, "sampling_rate": "1min",
        "power_scaling_type": "MaxScaling", "appliance_scaling_type": "MaxScaling",
    }  # fmt: skip
    cfg = UpstreamConfig(raw=raw, devices=names, names=names, window=8, step_s=60, name="c.json")
    assert training_block(cfg).devices == names


# ---- the config ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"ind_house_train_val": 3}, "no `ind_house_train_val` list"),
        ({"ind_house_train_val": []}, "no `ind_house_train_val` list"),
        ({"ind_house_train_val": [True]}, "no `ind_house_train_val` list"),
        ({"ind_house_train_val": [1, True]}, "no `ind_house_train_val` list"),
        ({"ind_house_train_val": ["1"]}, "no `ind_house_train_val` list"),
        ({"overlap": 1}, "overlap is 1;"),
        ({"overlap": 1.0}, "overlap is 1.0;"),
        ({"overlap": -0.1}, "overlap is -0.1;"),
        ({"overlap": True}, "overlap is True;"),
        ({"overlap": "0.5"}, "overlap is '0.5';"),
        ({"overlap": None}, "overlap is None;"),
        ({"seed": _DROP}, "no integer `seed`"),
        ({"seed": 1.5}, "no integer `seed`"),
        ({"seed": True}, "no integer `seed`"),
        ({"seed": "0"}, "no integer `seed`"),
        ({"power_scaling_type": _DROP}, "has no `power_scaling_type`"),
        ({"appliance_scaling_type": _DROP}, "has no `appliance_scaling_type`"),
    ],
)
def test_config_checks(tmp_path, over, match):
    with pytest.raises(UserError, match=match) as e:
        training_block(config(tmp_path, **over))
    assert "\n" not in str(e.value)


def test_what_to_pass_instead(tmp_path):
    with pytest.raises(UserError) as e:
        training_block(config(tmp_path, seed=_DROP))
    assert str(e.value).endswith(
        "(its split depends on it): pass --scaler SCALER.json instead (docs/upstream-models.md)"
    )


@pytest.mark.parametrize(
    ("window", "overlap", "stride"),
    [(10, 0, 10), (10, 0.0, 10), (10, 0.3, 7), (10, 0.6, 4), (10, 0.9, 1), (4, 0.9, 1), (128, 0.5, 64)],
)
def test_stride(tmp_path, window, overlap, stride):
    """window_size * (1 - overlap) rounded, at least 1 (10 * 0.1 is 0.99..98 in floats: 1; 4 * 0.1: 0 -> 1)."""
    got = training_block(config(tmp_path, window_size=window, overlap=overlap))
    assert (got.window, got.stride, got.overlap, got.rate, got.rate_s) == (window, stride, overlap, "10s", 10)
    assert got.houses == [1] and got.seed == 0


def test_houses_are_kept_in_order_with_repeats(tmp_path):
    assert training_block(config(tmp_path, ind_house_train_val=[2, 1, 2])).houses == [2, 1, 2]


# ---- the split -------------------------------------------------------------------------------------------------


def numbered(first: int, n: int) -> np.ndarray:
    """n windows (n, 2, 3) whose every value is the window's number, first .. first + n - 1."""
    return np.broadcast_to(np.arange(first, first + n, dtype=float)[:, None, None], (n, 2, 3)).copy()


def kept(per_house, **over) -> list[int]:
    return training_windows(per_house, block(overlap=0.5, **over))[:, 0, 0].astype(int).tolist()


@pytest.mark.parametrize(
    ("stride", "n", "want"),
    [
        (7, 10, [0, 1, 2, 3, 4, 5]),  # gap ceil(10 / 7) = 2 (not 1), n_valid int(10 * 0.2) = 2: 10 - 2 - 2 = 6
        (4, 6, [0, 1]),  # gap ceil(2.5) = 3, n_valid int(1.2) = 1: 6 - 1 - 3 = 2
        (4, 5, [0]),  # n_train exactly 1: the first window
        (4, 4, [0, 1, 2]),  # n_train exactly 0 (n_valid max(1, int(0.8)) = 1): the first int(4 * 0.8) = 3
        (4, 3, [0, 1]),  # n_train < 0: int(3 * 0.8) = 2
        (4, 2, [0]),  # two windows: int(1.6) = 1
        (5, 4, [0]),  # gap 2, n_valid max(1, 0) = 1 (not 0): 4 - 1 - 2 = 1
    ],
)
def test_time_block_split_of_one_house(stride, n, want):
    assert kept([numbered(0, n)], window=10, stride=stride) == want


def test_time_block_split_per_house():
    """Each house is split on its own: 2 windows keep their first; 6 keep 2 (gap 3); one window or none adds
    nothing."""
    per_house = [numbered(0, 2), numbered(10, 6), numbered(20, 1), numbered(30, 0)]
    assert kept(per_house, houses=[1, 2, 3, 4], window=10, stride=4) == [0, 10, 11]


def test_a_house_listed_twice_gives_each_window_twice():
    """ind_house_train_val [1, 2, 1]: house 1's windows 0, 1, 2 become 0, 0, 1, 1, 2, 2 (6: 6 - 1 - 3 = 2 kept)."""
    per_house = [numbered(0, 3), numbered(10, 6), numbered(0, 3)]
    assert kept(per_house, houses=[1, 2, 1], window=10, stride=4) == [0, 0, 10, 11]


def test_no_house_adds_any_window_so_seed_0_splits_them():
    """Six houses of one window each (and one of none): CondiNILM falls back to the random split with seed 0,
    whatever the config's seed (7 here): the first int(6 * 0.8) = 4 of numpy's legacy shuffle of 0..5."""
    order = np.arange(6)
    np.random.RandomState(0).shuffle(order)  # CondiNILM's split_train_test_nilmdataset(seed=0)
    per_house = [numbered(k, 1) for k in range(6)] + [numbered(9, 0)]
    got = kept(per_house, houses=[1, 2, 3, 4, 5, 6, 7], window=10, stride=4, seed=7)
    assert got == order[:4].tolist() and sorted(got) == [1, 2, 3, 5]


def _steps_house(tmp_path, house: int, n: int, first_w: float):
    """n 10-s steps from midnight: the aggregate reads first_w, first_w + 1, ...; the kettle 1000 W more."""
    t = np.arange(n) * 10
    return write_ukdale_house(
        tmp_path / "ukdale", house, {"aggregate": (M + t, first_w + t / 10), "kettle": (M + t, 1000 + t / 10)}
    )


def test_refit_of_an_overlapping_run(tmp_path):
    """window 10, overlap 0.3: stride 7, 73 steps give 10 windows, the first 6 are trained on (gap 2): steps
    0 .. 5 * 7 + 9 = 44, so MinMax reads 100 and 144, the kettle's max 1044."""
    root = _steps_house(tmp_path, 1, 73, 100.0)
    cfg = config(tmp_path, window_size=10, overlap=0.3, power_scaling_type="MinMax")
    got = refit_scaler(f"ukdale:{root}", cfg)
    assert (got["power_stat1"], got["power_stat2"], got["appliance_stat2"]) == (100.0, 144.0, [1044.0])


def _first_of_two() -> int:
    """The window CondiNILM's random split (seed 0) trains on out of two: int(2 * 0.8) = 1 of the shuffle."""
    order = np.arange(2)
    np.random.RandomState(0).shuffle(order)
    return int(order[0])


def test_houses_shorter_than_a_window_add_nothing(tmp_path):
    """House 2 has 3 steps, less than one window of 4 (overlap 0 and 0.5): the fit is house 1's alone. House 1:
    8 steps of 100..107 W. Overlap 0 cuts 2 windows (max 103 and 107) and trains on the first of numpy's legacy
    shuffle with the seed 0 (int(2 * 0.8) = 1). Overlap 0.5 (stride 2) cuts 3 windows (steps 0-3, 2-5, 4-7): a
    gap of 2 and one validation window leave none, so the first int(3 * 0.8) = 2 are trained on: max 105."""
    root = _steps_house(tmp_path, 1, 8, 100.0)
    _steps_house(tmp_path, 2, 3, 5000.0)
    want0 = 103.0 + 4 * _first_of_two()
    assert refit_scaler(f"ukdale:{root}", config(tmp_path, ind_house_train_val=[1, 2]))["power_stat2"] == want0
    got = refit_scaler(f"ukdale:{root}", config(tmp_path, ind_house_train_val=[2, 1], overlap=0.5))
    assert got["power_stat2"] == 105.0


# ---- the scaling types ---------------------------------------------------------------------------------------


def test_mean_scaling_for_power(tmp_path):
    """NILMscaler's MeanScaling (power only): stat1 0, stat2 the mean. Windows 100..103 and 104..107, overlap 0,
    the one trained on (as above) has the mean 101.5 or 105.5, the kettle's max 1003 or 1007."""
    root = _steps_house(tmp_path, 1, 8, 100.0)
    got = refit_scaler(f"ukdale:{root}", config(tmp_path, power_scaling_type="MeanScaling"))
    first = _first_of_two()
    assert got["power_scaling_type"] == "MeanScaling" and got["power_stat1"] == 0.0
    assert (got["power_stat2"], got["appliance_stat2"]) == (101.5 + 4 * first, [1003.0 + 4 * first])


def test_int_divisors_and_the_types_each_side_takes():
    x = np.array([[1.0, 3.0], [5.0, 7.0]])
    assert channel_stats(x, 1000, "power_scaling_type") == (0.0, 1000.0)
    assert channel_stats(x, 250, "appliance_scaling_type") == (0.0, 250.0)
    assert channel_stats(x, "MeanScaling", "power_scaling_type") == (0.0, 4.0)
    assert channel_stats(x, "MeanMaxScaling", "appliance_scaling_type") == (4.0, 7.0)
    assert channel_stats(x, "MinMax", "appliance_scaling_type") == (1.0, 7.0)
    for kind, key in [(True, "power_scaling_type"), ("MeanScaling", "appliance_scaling_type")]:
        with pytest.raises(UserError, match=f"fits no {key} {kind!r}"):
            channel_stats(x, kind, key)


def test_windows_of_a_short_house():
    """Fewer steps than a window: no window, shaped (0, 1 + D, window) so it joins the other houses'."""
    series = HouseSeries(M, 10, np.arange(10.0).reshape(2, 5))
    for stride in (6, 4, 2):
        assert windows(series, block(window=6, stride=stride)).shape == (0, 2, 6)
    np.testing.assert_array_equal(windows(series, block(window=2, stride=2))[:, 1, 0], [5, 7])
