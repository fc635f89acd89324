"""`--source`: refit CondiNILM's NILMscaler from the data, the way its run_experiment.py fits it.

For each house of the training block (refit_block), on the run's grid (ukdale_house):
- windows of `window` steps start every `stride` steps from the first step (the last one that fits is the last);
  a window with any missing step is left out;
- the windows of all houses, in house order, are split as CondiNILM splits them:
  overlap 0: a shuffle of the window numbers with numpy's legacy generator seeded by `seed` (np.random.seed +
    np.random.shuffle, i.e. RandomState(seed).shuffle); the first int(n * (1 - 0.2)) are the training windows;
  overlap > 0: per house, in time order, the first n - n_valid - ceil(window / stride) windows are the training
    windows (n_valid = max(1, int(n * 0.2)); when that leaves none, the first int(n * (1 - 0.2))); a house with
    one window or none adds nothing; when no house adds any, the overlap-0 split with seed 0 is used;
- the NILMscaler statistics of the training windows (fit_fields): per scaling type, as its fit() computes them.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

from nilmbuild.errors import UserError

from .refit_block import TrainingBlock, training_block
from .ukdale_house import HouseSeries, read_house
from .upstream_config import UpstreamConfig

PERC_VALID = 0.2  # run_experiment.py's validation share (perc_house_test / perc_valid)


def refit_scaler(source: str, cfg: UpstreamConfig) -> dict:
    """NILMscaler fields (as --scaler takes them) fitted on `source`'s training block of `cfg`."""
    root = source_root(source)
    block = training_block(cfg)
    from tqdm import tqdm

    per_house = []
    bar = tqdm(block.houses, desc="refitting the scaler", unit="house", file=sys.stderr, leave=False, disable=None)
    for house in bar:  # a bar on a terminal only (disable=None): a big UK-DALE house takes a while to read
        per_house.append(windows(read_house(root, house, block), block))
    train = training_windows(per_house, block)
    if len(train) == 0:
        raise UserError(
            f"--source {root.name}: houses {block.houses} give no complete window of {block.window} steps, so "
            "CondiNILM could not have fitted a scaler on them: check --source"
        )
    return fit_fields(train, block)


def source_root(source: str) -> Path:
    """`ukdale:PATH` -> PATH (the folder holding house_N/, or CondiNILM's data_path holding UKDALE/)."""
    kind, _, rest = source.partition(":")
    if kind.strip().lower() != "ukdale" or not rest:
        raise UserError(
            f"--source {source!r}: --source takes ukdale:PATH, the UK-DALE folder (house_N/labels.dat and "
            "channel_N.dat) CondiNILM trained on; it cannot refit from csv:, refit:, redd: or nilmtk: sources: "
            "pass --scaler SCALER.json instead (docs/upstream-models.md)"
        )
    root = Path(rest).expanduser()
    if not root.is_dir():
        raise UserError(f"--source {source!r}: no such folder; pass ukdale:PATH, PATH holding the house_N folders")
    return root


def windows(series: HouseSeries, block: TrainingBlock) -> np.ndarray:
    """(n, 1 + D, window) complete windows of one house, in time order."""
    power, w, s = series.power, block.window, block.stride
    total = power.shape[1]
    n = total // s if w == s else 1 + (total - w) // s
    starts = np.arange(max(n, 0)) * s
    if starts.size == 0:
        return np.empty((0, power.shape[0], w))
    cut = np.stack([power[:, i : i + w] for i in starts])
    return cut[~np.isnan(cut).any(axis=(1, 2))]


def training_windows(per_house: list[np.ndarray], block: TrainingBlock) -> np.ndarray:
    """The windows CondiNILM's split keeps for training (see the module doc)."""
    if block.overlap == 0:
        return random_split(np.concatenate(per_house), block.seed)
    gap = math.ceil(block.window / block.stride)
    kept = [_time_block(h, gap) for h in _by_house(per_house, block.houses) if len(h) > 1]
    if not kept:
        return random_split(np.concatenate(per_house), 0)
    return np.concatenate(kept)


def _by_house(per_house: list[np.ndarray], houses: list[int]) -> list[np.ndarray]:
    """Each house's windows in time order, houses in first-listed order. CondiNILM groups the windows by house
    number and sorts them by start time, so a house listed k times gives each of its windows k times in a row."""
    first = {}
    for h, wins in zip(houses, per_house, strict=True):
        first.setdefault(h, wins)
    return [np.repeat(wins, houses.count(h), axis=0) for h, wins in first.items()]


def _time_block(wins: np.ndarray, gap: int) -> np.ndarray:
    n = len(wins)
    n_train = n - max(1, int(n * PERC_VALID)) - gap
    if n_train <= 0:
        return wins[: int(n * (1 - PERC_VALID))]
    return wins[:n_train]


def random_split(wins: np.ndarray, seed: int) -> np.ndarray:
    order = np.arange(len(wins))
    np.random.RandomState(seed).shuffle(order)
    return wins[order[: int(len(wins) * (1 - PERC_VALID))]]


def fit_fields(train: np.ndarray, block: TrainingBlock) -> dict:
    """NILMscaler.fit of CondiNILM on (n, 1 + D, L) training windows -> its fields."""
    p1, p2 = channel_stats(train[:, 0], block.power_type, "power_scaling_type")
    a1, a2 = [], []
    for d in range(1, train.shape[1]):
        if block.appliance_type == "SameAsPower":
            s1, s2 = p1, p2
        else:
            s1, s2 = channel_stats(train[:, d], block.appliance_type, "appliance_scaling_type")
        a1.append(s1)
        a2.append(s2)
    return {
        "power_scaling_type": block.power_type,
        "appliance_scaling_type": block.appliance_type,
        "power_stat1": p1,
        "power_stat2": p2,
        "appliance_stat1": a1,
        "appliance_stat2": a2,
        "devices": list(block.devices),
    }


def channel_stats(x: np.ndarray, kind, key: str) -> tuple[float, float]:
    """(stat1, stat2) of one channel for a NILMscaler scaling type (an int: a fixed divisor)."""
    if isinstance(kind, int) and not isinstance(kind, bool):
        return 0.0, float(kind)
    stats = {
        "StandardScaling": lambda: (x.mean(), x.std()),
        "MinMax": lambda: (x.min(), x.max()),
        "MeanMaxScaling": lambda: (x.mean(), x.max()),
        "MaxScaling": lambda: (0.0, x.max()),
    }
    if key == "power_scaling_type":
        stats["MeanScaling"] = lambda: (0.0, x.mean())
    if kind not in stats:
        raise UserError(
            f"--source: CondiNILM's NILMscaler fits no {key} {kind!r} (it takes {', '.join(stats)} or an int): "
            "pass --scaler SCALER.json with the fields of the scaler your run used"
        )
    s1, s2 = stats[kind]()
    return float(s1), float(s2)
