"""One UK-DALE house on the grid CondiNILM's UKDALE_DataBuilder puts it on, re-implemented with nilmbuild's own
readers of UK-DALE's raw files (nilmbuild.data.raw_channels.read_labels / read_channel).

What the builder computes (src/helpers/preprocessing.py, UKDALE_DataBuilder._get_dataframe), step by step:
1. each channel on its own: the mean of its samples in each 10 s bin (6 s when the run's rate is 6 s), from its
   first bin to its last; gaps of up to 6 bins take the last value before them; readings under 5 W become 0;
2. the aggregate is always channel_1.dat; an appliance is the first labels.dat line that names it exactly, else
   the first that names one of its aliases (dishwasher: dish_washer, ...);
3. the channels are joined on the bins they all have (an inner join), and clipped to [0, 6000] W;
4. unless the rate is 10 s (or 6 s), the joined bins are averaged again into bins of the rate, counted from
   midnight of the first day, and gaps of up to 6 of those bins again take the last value.
Missing stays NaN; a window with any NaN is later left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nilmbuild.data.raw_channels import read_channel, read_labels
from nilmbuild.errors import UserError

from .refit_block import UKDALE_ALIASES, TrainingBlock

CUTOFF_W = 6000.0  # UKDALE_DataBuilder.cutoff
QUIET_W = 5.0  # readings under this become 0
FFILL_LIMIT = 6  # bins a gap is filled forward
DAY_S = 86400


@dataclass(frozen=True)
class HouseSeries:
    start_s: int  # unix seconds of the first step
    step_s: int
    power: np.ndarray  # (1 + D, T) float64 watts, NaN = missing; row 0 the aggregate, then the block's devices


def house_folder(root: Path, house: int) -> Path:
    """root/house_N (or houseN, House_N, HouseN, as CondiNILM looks for them), root being the folder that holds
    them or CondiNILM's data_path (which holds UKDALE/)."""
    names = (f"house_{house}", f"house{house}", f"House_{house}", f"House{house}")
    for base in (root, root / "UKDALE"):
        for n in names:
            if (base / n).is_dir():
                return base / n
    raise UserError(
        f"--source {root.name}: no house_{house} folder (the config's ind_house_train_val names house {house}): "
        "pass ukdale:PATH, PATH holding the house_N folders CondiNILM read"
    )


def read_house(root: Path, house: int, block: TrainingBlock) -> HouseSeries:
    """House `house` on the run's grid, as CondiNILM's builder makes it."""
    hdir = house_folder(root, house)
    labels = read_labels(hdir / "labels.dat")
    base_s = 6 if block.rate in ("6s", "6S") else 10
    rows = [base_bins(*read_channel(hdir / "channel_1.dat"), base_s)]
    for device in block.devices:
        k = channel_of(labels, device, hdir)
        rows.append(base_bins(*read_channel(hdir / f"channel_{k}.dat"), base_s))
    first, power = inner_join(rows, hdir, block.devices)
    power = np.clip(power, 0.0, CUTOFF_W)  # NaN stays NaN
    if block.rate in ("10s", "6s", "6S"):
        return HouseSeries(first * base_s, base_s, power)
    start_s, power = rebin(first * base_s, base_s, power, block.rate_s)
    return HouseSeries(start_s, block.rate_s, power)


def channel_of(labels: dict[int, str], device: str, hdir: Path) -> int:
    """The channel number of `device`: the first line naming it, else the first naming one of its aliases."""
    for name in (device, *UKDALE_ALIASES.get(device, ())):
        for k, label in labels.items():
            if label == name:
                return k
    names = " or ".join((device, *UKDALE_ALIASES.get(device, ())))
    raise UserError(
        f"{hdir.name}/labels.dat names no channel {names}, so CondiNILM could not have trained on this house: "
        "check --source"
    )


def base_bins(sec: np.ndarray, watts: np.ndarray, base_s: int) -> tuple[int, np.ndarray]:
    """(first bin number, (n,) watts): each bin's mean, gaps forward-filled up to 6 bins, under 5 W -> 0."""
    b = sec // base_s
    mean = bin_means(b - b[0], watts, int(b[-1] - b[0]) + 1)
    mean = ffill(mean, FFILL_LIMIT)
    mean[mean < QUIET_W] = 0.0
    return int(b[0]), mean


def bin_means(idx: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Mean of `values` per bin index in 0..n-1, skipping NaN; NaN where a bin has none."""
    ok = np.isfinite(values)
    sums = np.bincount(idx[ok], weights=values[ok], minlength=n)
    counts = np.bincount(idx[ok], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def ffill(x: np.ndarray, limit: int) -> np.ndarray:
    """pandas' ffill(limit=limit) of a 1-D float array: each NaN takes the last value before it when at most
    `limit` NaNs precede it since that value."""
    pos = np.arange(x.size)
    valid = ~np.isnan(x)
    last = np.maximum.accumulate(np.where(valid, pos, -1))
    fill = ~valid & (last >= 0) & (pos - last <= limit)
    out = x.copy()
    out[fill] = x[last[fill]]
    return out


def inner_join(rows: list[tuple[int, np.ndarray]], hdir: Path, devices: list[str]) -> tuple[int, np.ndarray]:
    """The bins every channel has: (first bin, (len(rows), n) watts)."""
    first = max(f for f, _ in rows)
    stop = min(f + v.size for f, v in rows)
    if stop <= first:
        raise UserError(
            f"{hdir.name}: the aggregate and {', '.join(devices)} have no time in common, so CondiNILM could not "
            "have trained on this house: check --source"
        )
    return first, np.stack([v[first - f : stop - f] for f, v in rows])


def rebin(start_s: int, step_s: int, power: np.ndarray, rate_s: int) -> tuple[int, np.ndarray]:
    """pandas' resample(rate).mean().ffill(limit=6) of a regular series: bins of `rate_s` counted from midnight
    (UTC) of the first step's day -> (first bin's unix seconds, (rows, m) watts)."""
    origin = (start_s // DAY_S) * DAY_S
    k = (start_s + step_s * np.arange(power.shape[1]) - origin) // rate_s
    idx, n = k - k[0], int(k[-1] - k[0]) + 1
    out = np.stack([ffill(bin_means(idx, row, n), FFILL_LIMIT) for row in power])
    return int(origin + k[0] * rate_s), out
