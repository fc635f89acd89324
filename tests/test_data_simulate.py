"""Built-in simulator: determinism, shapes, speed and appliance signatures."""

import hashlib
import time

import numpy as np

from nilmbuild.data import DEVICE_NAMES, simulate_household
from nilmbuild.data.preprocess import on_off
from nilmbuild.data.simulate import STEPS_PER_DAY


def test_same_seed_same_bytes_and_different_seed_differs():
    a, b, c = simulate_household(3, seed=7), simulate_household(3, seed=7), simulate_household(3, seed=8)
    assert a.aggregate.tobytes() == b.aggregate.tobytes()
    assert all(a.appliances[d].tobytes() == b.appliances[d].tobytes() for d in DEVICE_NAMES)
    assert a.aggregate.tobytes() != c.aggregate.tobytes()


def test_stream_is_pinned():
    """The shipped checkpoint's splits are re-simulated from (days, seed): a rewrite of the simulator (e.g. for speed)
    must keep every array's bits. Digest of 2 days, seed 1, targets and unlabelled appliances (numpy's PCG64 stream)."""
    hh = simulate_household(2, seed=1, keep_unlabelled=True)
    arrays = [hh.aggregate, *(hh.appliances[k] for k in sorted(hh.appliances))]
    arrays += [hh.meta["unlabelled"][k] for k in sorted(hh.meta["unlabelled"])]
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()
    assert digest[:16] == "8d6fb8043a694ce3"


def test_shapes_dtypes_and_invariants():
    h = simulate_household(2, seed=1, start="2024-07-01").check()
    assert len(h) == 2 * STEPS_PER_DAY and h.rate_s == 6
    assert str(h.timestamps[0]) == "2024-07-01T00:00:00"
    assert tuple(h.appliances) == DEVICE_NAMES and h.meta["missing"] == []
    total = sum(h.appliances[d] for d in DEVICE_NAMES)
    assert (h.aggregate >= total - 30).all()  # targets are part of the aggregate (minus meter noise)
    assert (h.aggregate - total).mean() > 50  # plus base load, lighting and unlabelled loads


def test_sixty_days_is_fast():
    t = time.perf_counter()
    h = simulate_household(60, seed=0)
    assert len(h) == 864_000
    assert time.perf_counter() - t < 5.0


def _runs(on):
    d = np.diff(np.concatenate([[0], on.astype(np.int8), [0]]))
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def test_signatures_look_like_real_meters():
    h = simulate_household(20, seed=3)
    k = h.appliances["kettle"]
    s, e = _runs(k > 1000)
    per_day = s.size / 20
    assert 2 <= per_day <= 10
    assert np.median(e - s) * 6 / 60 > 1.5 and (e - s).max() * 6 <= 5 * 60 + 6  # 2-5 min
    assert 2000 < np.median(k[k > 1000]) < 3000
    f = h.appliances["fridge"]
    s, e = _runs(f > 50)
    assert 20 < s.size / 20 < 45  # tens-of-minute cycles
    assert f.max() > 200 and 70 < np.median(f[f > 50]) < 150  # start-up spikes
    for dev, lo in (("dishwasher", 1.2), ("washing_machine", 0.9)):
        x = h.appliances[dev]
        assert ((x > 1700) & (x < 2500)).any()  # ~2 kW heating
        s, e = _runs(on_off(x, 10, 1, 300))  # bridge pauses shorter than 30 min
        assert lo * 3600 < np.median(e - s) * 6 < 2.2 * 3600
    m = h.appliances["microwave"]
    assert 700 < np.median(m[m > 500]) < 1500
    hours = (np.arange(len(h)) % STEPS_PER_DAY) * 6 / 3600
    assert (k[(hours > 1) & (hours < 5)] < 100).all()  # nobody boils water at 3 am


def test_keep_unlabelled_returns_the_hidden_appliances_without_changing_anything():
    a = simulate_household(days=3, seed=5)
    b = simulate_household(days=3, seed=5, keep_unlabelled=True)
    assert np.array_equal(a.aggregate, b.aggregate)
    for d in DEVICE_NAMES:
        assert np.array_equal(a.appliances[d], b.appliances[d])
    hidden = b.meta["unlabelled"]
    assert set(hidden) == {"oven", "hob", "toaster", "tv", "computer", "vacuum", "immersion"}
    toaster = hidden["toaster"]
    assert toaster.shape == a.aggregate.shape and (toaster > 0).any()
    assert 700 < np.median(toaster[toaster > 0]) < 1200  # a toaster's element
    # the aggregate carries every hidden appliance: it is never far below their sum plus the targets
    targets = sum(a.appliances[d].astype(np.float64) for d in DEVICE_NAMES)
    assert (a.aggregate - targets - sum(v.astype(np.float64) for v in hidden.values()) > -60).all()


def test_false_positive_minutes_map_to_the_appliance_running_then():
    from types import SimpleNamespace

    from nilmbuild.bench.false_positives import _unlabelled_at

    t0 = np.datetime64("2024-01-01T00:00:00")
    w = np.zeros(60, np.float32)  # 6 minutes at 6 s
    w[20:30] = 1000.0  # minute 2 (steps 20-29)
    hh = SimpleNamespace(
        timestamps=t0 + np.arange(60) * np.timedelta64(6, "s"), rate_s=6, meta={"unlabelled": {"x": w}}
    )
    ts = t0 + np.array([1, 2, 3]) * np.timedelta64(60, "s")
    assert _unlabelled_at(hh, ts)["x"].tolist() == [0.0, 1000.0, 0.0]


def test_the_simulated_source_does_not_import_pandas():
    """pandas (~0.1 s to import, ~50 MB) is for reading files: a build from the simulator, the default source, must
    not load it (nilmbuild/data/loaders.py imports it where a file is read)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from nilmbuild.data.loaders import load_source\n"
        "from nilmbuild.data.preprocess import prepare\n"
        "load_source('synthetic', days=1)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
