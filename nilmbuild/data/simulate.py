"""Built-in household simulator: seeded, vectorised, with appliance signatures shaped like real meters.

The five target appliances get their own sub-metered channel; the aggregate adds an always-on base
load, time-of-day lighting and unlabelled appliances (oven, hob, toaster, TV, computer, vacuum cleaner,
immersion heater) that overlap the targets in power and time, so disaggregation is not trivial.
Usage depends on the hour (mixtures of daily peaks), the weekday (laundry at weekends) and the season
(more kettle, lighting and heating in winter; the fridge works harder in summer).

Everything is drawn from one `numpy.random.Generator(PCG64(seed))` in a fixed order, so the same
arguments give byte-identical arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES, Household

RATE_S = 6  # native period, like UK-DALE's sub-meters
STEPS_PER_MIN = 60 // RATE_S  # 10
STEPS_PER_DAY = 86400 // RATE_S  # 14400


@dataclass(frozen=True)
class Usage:
    """When an appliance is switched on: mean uses/day and a mixture of (hour, sigma_h, weight) peaks."""

    per_day: float
    peaks: tuple[tuple[float, float, float], ...]
    weekend: float = 1.0  # multiplier on Saturdays/Sundays
    winter: float = 0.0  # seasonal amplitude: rate * (1 + winter * cos(season phase)), max mid-January


USAGE = {
    "kettle": Usage(
        4.5,
        ((7.3, 0.6, 3), (10.5, 1.0, 1), (13.0, 1.0, 1.5), (16.5, 1.0, 1.5), (20.5, 1.2, 2)),
        weekend=1.2,
        winter=0.25,
    ),
    "microwave": Usage(1.6, ((7.8, 0.5, 1), (12.8, 0.8, 2), (18.5, 1.0, 2.5), (22.0, 0.8, 0.5)), weekend=1.1),
    "dishwasher": Usage(0.55, ((20.3, 1.2, 4), (9.0, 1.0, 1)), weekend=1.2),
    "washing_machine": Usage(0.45, ((9.5, 1.3, 3), (14.5, 2.0, 1.5), (19.0, 1.0, 0.5)), weekend=1.9),
    "oven": Usage(0.45, ((18.0, 0.8, 4), (12.5, 0.7, 1)), weekend=1.4, winter=0.3),
    "hob": Usage(0.9, ((18.3, 0.8, 3), (12.5, 0.8, 1.5), (8.0, 0.6, 0.7)), weekend=1.2),
    "toaster": Usage(0.7, ((7.5, 0.5, 3), (13.0, 0.8, 0.5)), weekend=1.4),
    "tv": Usage(1.3, ((20.0, 1.5, 4), (13.0, 1.5, 0.8)), weekend=1.5, winter=0.2),
    "computer": Usage(1.0, ((10.0, 1.5, 1), (15.0, 2.0, 1), (21.0, 1.0, 0.6)), weekend=0.8),
    "vacuum": Usage(0.2, ((11.0, 1.5, 1),), weekend=2.5),
    "immersion": Usage(0.35, ((6.5, 0.4, 2), (17.5, 0.8, 1)), winter=0.8),
}


def simulate_household(
    days: int = 60, seed: int = 0, start: str = "2024-01-01", *, keep_unlabelled: bool = False
) -> Household:
    """Simulate `days` days of one house at 6 s. Same arguments -> byte-identical arrays.

    Returns a Household whose `appliances` hold all of DEVICE_NAMES and whose aggregate is their sum
    plus base load, lighting, unlabelled appliances and meter noise. keep_unlabelled: also return each
    unlabelled appliance's own (T,) float32 watts in meta["unlabelled"] (for diagnosing false positives;
    the random stream and every other array are unchanged).
    """
    if days < 1:
        raise ValueError("days must be >= 1")
    rng = np.random.Generator(np.random.PCG64(seed))
    n = days * STEPS_PER_DAY
    t0 = np.datetime64(start, "s")
    timestamps = t0 + np.arange(n, dtype=np.int64).astype("timedelta64[s]") * RATE_S  # (T,)
    day_start = t0 + np.arange(days).astype("timedelta64[D]")  # (days,)
    weekday = (day_start.astype("datetime64[D]").astype(np.int64) + 3) % 7  # Monday = 0
    doy = (day_start.astype("datetime64[D]") - day_start.astype("datetime64[Y]")).astype(np.int64)
    season = np.cos(2 * np.pi * (doy - 15) / 365.25)  # +1 mid-Jan, -1 mid-Jul
    ctx = _Context(rng, n, weekday, season)

    # Targets, each on its own channel. Order of calls is fixed: it fixes the random stream.
    target = {
        "kettle": ctx.events("kettle", _kettle),
        "microwave": ctx.events("microwave", _microwave),
        "fridge": _fridge(rng, n, season),
        "dishwasher": ctx.events("dishwasher", _dishwasher),
        "washing_machine": ctx.events("washing_machine", _washing_machine),
    }
    unlabelled = {
        name: ctx.events(name, fn)
        for name, fn in (
            ("oven", _oven),
            ("hob", _hob),
            ("toaster", _toaster),
            ("tv", _tv),
            ("computer", _computer),
            ("vacuum", _vacuum),
            ("immersion", _immersion),
        )
    }
    # Sums accumulate in place, in the order of the plain expressions (same bits, no (T,) temporaries per term).
    other = _sum_in_place(list(unlabelled.values()))
    other += _base_load(rng, n)
    other += _lighting(rng, n, season)

    appliances = {}
    for name in DEVICE_NAMES:
        x = target[name]
        noise = rng.normal(0.0, 1.5, n)  # plug meter noise while running
        noise *= x > 0
        x += noise
        appliances[name] = np.maximum(x, 0.0, out=x).astype(np.float32)
    other += _sum_in_place([appliances[d].astype(np.float64) for d in DEVICE_NAMES])
    other += rng.normal(0, 4.0, n)
    aggregate = np.maximum(other, 0.0, out=other).astype(np.float32)
    return Household(
        timestamps=timestamps,
        aggregate=aggregate,
        appliances=appliances,
        rate_s=RATE_S,
        meta={
            "dataset": "synthetic",
            "house": int(seed),
            "missing": [],
            "source": f"simulator(days={days}, seed={seed}, start={start})",
            **({"unlabelled": {k: v.astype(np.float32) for k, v in unlabelled.items()}} if keep_unlabelled else {}),
        },
    )


def _sum_in_place(arrays: list[np.ndarray]) -> np.ndarray:
    """sum(arrays) (left to right, the same bits) into a copy of the first."""
    out = arrays[0].astype(np.float64, copy=True)
    for a in arrays[1:]:
        out += a
    return out


class _Context:
    """Shared state for scheduling events: random stream, length, weekday and season per day."""

    def __init__(self, rng, n, weekday, season):
        self.rng, self.n, self.weekday, self.season = rng, n, weekday, season

    def events(self, name: str, shape_fn) -> np.ndarray:
        """Sum of one appliance's activations: (T,) float64 watts."""
        out = np.zeros(self.n)
        busy_until = -1
        for start in self.starts(USAGE[name]):
            prof = shape_fn(self.rng)  # drawn even when skipped: keeps the stream fixed
            start = max(int(start), busy_until + int(self.rng.integers(30, 120)))  # one machine: no overlap
            end = min(self.n, start + prof.size)
            if start < self.n:
                out[start:end] = prof[: end - start]
            busy_until = end
        return out

    def starts(self, u: Usage) -> np.ndarray:
        """Start steps of all uses: Poisson count per day, hour from the peak mixture. Sorted (K,)."""
        rng, days = self.rng, self.weekday.size
        lam = u.per_day * np.where(self.weekday >= 5, u.weekend, 1.0) * np.clip(1 + u.winter * self.season, 0.1, None)
        counts = rng.poisson(lam)  # (days,)
        day = np.repeat(np.arange(days), counts)  # (K,)
        hours, sig, w = (np.array(c, dtype=float) for c in zip(*u.peaks))
        comp = rng.choice(hours.size, size=day.size, p=w / w.sum())
        hour = np.clip(rng.normal(hours[comp], sig[comp]), 5.5, 23.8)
        return np.sort(day * STEPS_PER_DAY + (hour * 3600 / RATE_S).astype(np.int64))


# ---- target appliance signatures: each returns a (steps,) float64 profile in watts ----------------


def _minutes(rng, lo: float, hi: float) -> int:
    return max(1, int(rng.uniform(lo, hi) * STEPS_PER_MIN))


def _kettle(rng) -> np.ndarray:
    """2-3 kW element for 2-5 min; power sags ~3 % as the element heats; partial first/last sample."""
    k = _minutes(rng, 2, 5)
    p = rng.uniform(2200, 2900) * np.linspace(1.0, 0.97, k)
    p[0] *= rng.uniform(0.3, 1.0)
    p[-1] *= rng.uniform(0.2, 1.0)
    return p + rng.normal(0, 8, k)


def _microwave(rng) -> np.ndarray:
    """1-6 min. Full power ~1.1-1.4 kW; on medium/defrost the magnetron cycles (~30 s period) over a
    ~100 W base (fan, light, turntable)."""
    k = _minutes(rng, 1, 6)
    full = rng.uniform(1000, 1400)
    base = rng.uniform(80, 130)
    p = np.full(k, full)
    if rng.random() < 0.45:  # power-level cycling
        period = int(rng.integers(4, 7))
        duty = rng.uniform(0.4, 0.7)
        on = (np.arange(k) % period) < max(1, round(duty * period))
        p = np.where(on, full, base)
    p[0] = base
    return p + rng.normal(0, 10, k)


def _fridge(rng, n: int, season: np.ndarray) -> np.ndarray:
    """Compressor cycles all day: a start-up spike decaying to ~70-150 W for 10-25 min, then off for
    15-40 min (shorter in summer); a defrost heater (~180 W, ~20 min) about once a day instead of a cycle."""
    out = np.zeros(n)
    steady = rng.uniform(85, 120)
    t = int(rng.integers(0, 30 * STEPS_PER_MIN))
    while t < n:
        summer = -season[min(t // STEPS_PER_DAY, season.size - 1)]  # +1 in July
        if rng.random() < 1 / 30:  # ~1 defrost per 30 cycles
            k = _minutes(rng, 15, 25)
            prof = rng.uniform(160, 200) + rng.normal(0, 3, k)
        else:
            k = _minutes(rng, 10, 22) + int(3 * STEPS_PER_MIN * max(summer, 0))
            i = np.arange(k)
            level = steady * (1 + 0.12 * i / k)  # slow rise while running
            prof = level + (rng.uniform(120, 170) * np.exp(-i / 1.5))  # start-up spike, ~10 s decay
            prof += rng.normal(0, 2, k)
        end = min(n, t + k)
        out[t:end] = prof[: end - t]
        out[end : end + 1] = 0.0
        off = _minutes(rng, 18, 38) - int(6 * STEPS_PER_MIN * summer)
        t = end + max(off, 5 * STEPS_PER_MIN)
    return np.clip(out, 0, 300)


def _segments(rng, parts) -> np.ndarray:
    """Concatenate programme phases: each part is (minutes_lo, minutes_hi, fn(k) -> (k,) watts)."""
    return np.concatenate([fn(_minutes(rng, lo, hi)) for lo, hi, fn in parts])


def _bursts(rng, k: int, lo: float, hi: float, idle: float, p_on: float = 0.6) -> np.ndarray:
    """Drum/pump motor: bursts of lo..hi watts (12-18 s each, i.e. 2-3 samples) between idle samples."""
    block = int(rng.integers(2, 4))
    on = np.repeat(rng.random(k // block + 1) < p_on, block)[:k]
    level = np.repeat(rng.uniform(lo, hi, k // block + 1), block)[:k]
    return np.where(on, level + rng.normal(0, 5, k), idle)


def _dishwasher(rng) -> np.ndarray:
    """~1.5-2 h: fill and pre-wash (pump), ~2 kW heating with the pump, long wash plateau, second
    ~2 kW heating for the rinse, then drying at a few watts."""
    heat = rng.uniform(1900, 2150)
    pump = rng.uniform(60, 90)
    p = _segments(
        rng,
        [
            (8, 14, lambda k: pump + rng.normal(0, 3, k)),
            (14, 22, lambda k: heat + pump + rng.normal(0, 12, k)),
            (25, 35, lambda k: _bursts(rng, k, pump + 60, pump + 110, pump, 0.5)),
            (8, 14, lambda k: np.full(k, 5.0)),
            (10, 16, lambda k: heat + pump + rng.normal(0, 12, k)),
            (20, 35, lambda k: np.full(k, 4.0) + rng.normal(0, 0.5, k)),
        ],
    )
    return np.maximum(p, 1.0)


def _washing_machine(rng) -> np.ndarray:
    """1-2 h: fill, ~2 kW heating with the drum turning, wash with drum-motor bursts, rinses with short
    spins, a final spin ramping to ~400-600 W."""
    heat = rng.uniform(1850, 2200)
    spin = rng.uniform(380, 600)
    p = _segments(
        rng,
        [
            (2, 4, lambda k: np.full(k, 12.0)),
            (12, 22, lambda k: heat + _bursts(rng, k, 80, 220, 5)),
            (25, 45, lambda k: _bursts(rng, k, 120, 320, 8)),
            (
                10,
                18,
                lambda k: np.concatenate([_bursts(rng, k - k // 4, 100, 250, 8), np.linspace(150, spin * 0.7, k // 4)]),
            ),
            (6, 12, lambda k: np.linspace(200, spin, k) + rng.normal(0, 20, k)),
            (1, 2, lambda k: np.full(k, 15.0)),
        ],
    )
    return np.maximum(p, 0.0)


# ---- unlabelled appliances (only in the aggregate) ------------------------------------------------


def _thermostat(rng, k: int, watts: float, on_s: tuple, off_s: tuple, preheat_min: float = 0) -> np.ndarray:
    """Heating element switched by a thermostat/energy regulator: solid preheat, then on/off cycling."""
    p = np.zeros(k)
    t = int(preheat_min * STEPS_PER_MIN)
    p[:t] = watts
    while t < k:
        on = max(1, int(rng.uniform(*on_s) / RATE_S))
        p[t : t + on] = watts
        t += on + max(1, int(rng.uniform(*off_s) / RATE_S))
    return p


def _oven(rng):
    k = _minutes(rng, 30, 70)
    return _thermostat(rng, k, rng.uniform(2000, 2600), (40, 150), (40, 120), rng.uniform(8, 15))


def _hob(rng):
    k = _minutes(rng, 8, 30)
    return _thermostat(rng, k, rng.uniform(1000, 1800), (12, 60), (12, 50))


def _toaster(rng):
    k = _minutes(rng, 2, 4)
    return np.full(k, rng.uniform(800, 1100)) + rng.normal(0, 6, k)


def _tv(rng):
    k = _minutes(rng, 40, 180)
    return rng.uniform(70, 160) + 15 * np.sin(np.arange(k) / rng.uniform(20, 60)) + rng.normal(0, 4, k)


def _computer(rng):
    k = _minutes(rng, 30, 150)
    return np.maximum(rng.uniform(50, 90) + _bursts(rng, k, 10, 80, 0, 0.3) + rng.normal(0, 3, k), 0)


def _vacuum(rng):
    k = _minutes(rng, 8, 25)
    on = np.repeat(rng.random(k // 20 + 1) < 0.8, 20)[:k]  # paused now and then
    return on * (rng.uniform(1200, 1800) + rng.normal(0, 40, k))


def _immersion(rng):
    k = _minutes(rng, 20, 60)
    return _thermostat(rng, k, rng.uniform(2800, 3000), (300, 900), (60, 300))


def _base_load(rng, n: int) -> np.ndarray:
    """Always-on standby (router, clocks, boiler electronics) with a slow random drift."""
    level = rng.uniform(70, 140)
    drift = np.repeat(rng.normal(0, 4, n // 600 + 1), 600)[:n]
    return level + drift


def _lighting(rng, n: int, season: np.ndarray) -> np.ndarray:
    """Lights on between waking and sunrise and between dusk and bedtime, at piecewise-constant
    levels (switches flipped every ~5-40 min). Dusk is ~16:00 in winter and ~21:00 in summer."""
    hour = np.arange(STEPS_PER_DAY) * RATE_S / 3600.0  # (steps per day,): the same every day
    sunrise = (6.8 + 1.6 * season)[:, None]  # (days, 1)
    sunset = (18.5 - 2.5 * season)[:, None]
    wake = (6.5 + rng.normal(0, 0.3, season.size))[:, None]
    bed = (23.0 + rng.normal(0, 0.5, season.size))[:, None]
    need = ((hour > wake) & (hour < sunrise)) | ((hour > sunset - 0.3) & (hour < bed))  # (days, steps per day)
    seg = rng.integers(50, 400, n // 50 + 1)  # segment lengths in steps (sum >= n: each is >= 50)
    levels = rng.uniform(30, 260, seg.size)
    used = int(np.searchsorted(np.cumsum(seg), n)) + 1  # the segments that reach step n
    piece = np.repeat(levels[:used], seg[:used])[:n]
    return need.reshape(-1) * piece  # days x steps per day = n
