"""UK-DALE and REDD raw files: one 'unix_ts watts' file per meter (channel_K.dat) and labels.dat.

Each channel has its own timestamps; the channels are put on the mains' time grid by averaging each channel
within bins of `rate_s` seconds. Every problem with a file raises a one-line `UserError` naming the file (and
line) and what to do; unsorted timestamps are an error, never sorted silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from nilmbuild.data.household import DEVICE_NAMES, Household, device_for_label, normalise_label
from nilmbuild.errors import UserError

RAW_RATE_S = {"ukdale": 6, "redd": 3}
F32_MAX = float(np.finfo(np.float32).max)  # power is stored as float32: anything larger would become inf


def read_channel(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Read a 'unix_timestamp watts' file -> (int64 seconds (K,), float64 watts (K,)).

    Fast path with pandas; on any problem a line-by-line scan finds and reports the first bad line.
    """
    import pandas as pd

    if not path.is_file():
        raise UserError(f"{path}: channel file is missing; re-download the house or drop the channel from labels.dat")
    try:
        df = pd.read_csv(path, sep=" ", header=None, dtype=np.float64, engine="c", skip_blank_lines=True)
        ok = (
            df.shape[0] > 0
            and df.shape[1] == 2
            and bool((df[0].abs() < 1e11).all())  # unix s before year 5000
            and bool((df[1].abs() <= F32_MAX).all())
        )  # finite in float32
        ts, w = (df[0].to_numpy(), df[1].to_numpy()) if ok else (None, None)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
        ok = False
    if not ok:
        _scan_channel_for_error(path)
        raise UserError(f"{path}: could not read 'unix_timestamp watts' lines; check the file format")
    sec = np.floor(ts).astype(np.int64)
    check_increasing(path, sec, first_line=1)
    return sec, w


def _scan_channel_for_error(path: Path) -> None:
    """Raise a UserError for the first malformed line of a channel file (slow path, errors only)."""
    n = 0
    with open(path, errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            n += 1
            if len(parts) != 2:
                raise UserError(
                    f"{path}:{lineno}: expected 'unix_timestamp watts', got {line.strip()[:60]!r}; fix or delete the line"
                )
            try:
                finite = abs(float(parts[0])) < 1e11 and abs(float(parts[1])) <= F32_MAX
            except ValueError:
                finite = False
            if not finite:
                raise UserError(
                    f"{path}:{lineno}: non-numeric or out-of-range value in {line.strip()[:60]!r}; fix or delete the line"
                )
    if n == 0:
        raise UserError(f"{path}: file is empty; re-download it or remove the channel")


def check_increasing(path: Path, sec: np.ndarray, first_line: int, line_step: int = 1) -> None:
    """Duplicates and unsorted timestamps are errors naming the first offending line."""
    d = np.diff(sec)
    bad = np.flatnonzero(d <= 0)
    if bad.size:
        i = int(bad[0]) + 1
        line = first_line + i * line_step
        what = "duplicate timestamp" if d[i - 1] == 0 else "timestamp earlier than the line before (file not sorted)"
        when = np.datetime64(int(sec[i]), "s")
        raise UserError(f"{path}:{line}: {what} {when}; remove duplicates / sort the file by time")


def read_labels(path: Path) -> dict[int, str]:
    """labels.dat ('K name' per line) -> {K: name}."""
    if not path.is_file():
        raise UserError(f"{path}: labels.dat is missing; every house folder needs one ('channel name' per line)")
    out: dict[int, str] = {}
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit():
            raise UserError(f"{path}:{lineno}: expected 'channel_number name', got {line.strip()[:60]!r}")
        out[int(parts[0])] = parts[1]
    if not out:
        raise UserError(f"{path}: labels.dat is empty; list the channels as 'number name' lines")
    return out


def _house_dir(root: Path, house: int) -> Path:
    """root/house_N (or root itself when it already is a house folder)."""
    if re.fullmatch(r"house_\d+", root.name):  # the user pointed at a house folder: it wins
        return root
    d = root / f"house_{house}"
    if not d.is_dir():
        found = sorted(int(p.name[6:]) for p in root.glob("house_*") if p.name[6:].isdigit())
        raise UserError(
            f"{root}: no house_{house} folder (found houses: {', '.join(map(str, found)) or 'none'}); "
            f"pass --house with one of them"
        )
    return d


def _on_grid(grid: np.ndarray, sec: np.ndarray, w: np.ndarray, rate_s: int) -> np.ndarray:
    """Mean of (sec, w) samples within each `rate_s` bin of `grid` (bin indices, (G,)) -> (G,) float32, NaN if none."""
    b = sec // rate_s
    pos = np.searchsorted(grid, b)
    pos_c = np.minimum(pos, grid.size - 1)
    keep = (grid[pos_c] == b) & np.isfinite(w)
    s = np.bincount(pos_c[keep], weights=w[keep], minlength=grid.size)
    c = np.bincount(pos_c[keep], minlength=grid.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan).astype(np.float32)


def _load_raw_house(hdir: Path, dataset: str, mains_labels: tuple[str, ...], house: int) -> Household:
    """Shared UK-DALE/REDD logic: mains = sum of mains channels, targets = sum of mapped channels."""
    rate = RAW_RATE_S[dataset]
    labels = read_labels(hdir / "labels.dat")
    mains = [k for k, v in labels.items() if normalise_label(v) in mains_labels]
    if not mains:
        raise UserError(f"{hdir / 'labels.dat'}: no mains channel (labelled {' or '.join(mains_labels)}); add it")
    targets: dict[str, list[int]] = {}
    for k, v in labels.items():
        dev = device_for_label(v)
        if dev is not None:
            targets.setdefault(dev, []).append(k)
    chans = {k: read_channel(hdir / f"channel_{k}.dat") for k in sorted(set(mains).union(*targets.values()))}
    grid = np.unique(np.concatenate([chans[k][0] // rate for k in mains]))  # (G,) bin numbers
    aggregate = np.sum([_on_grid(grid, *chans[k], rate) for k in mains], axis=0).astype(np.float32)
    appliances = {}
    for dev in DEVICE_NAMES:
        if dev in targets:
            parts = [_on_grid(grid, *chans[k], rate) for k in targets[dev]]
            appliances[dev] = np.sum(parts, axis=0).astype(np.float32)  # NaN if any part is missing
            if np.isnan(appliances[dev]).all():  # as the CSV loader: an all-missing channel is an error
                files = ", ".join(f"channel_{k}.dat" for k in targets[dev])
                raise UserError(
                    f"{hdir}: {files} ({dev}) has no samples at the mains' times; check its timestamps "
                    f"or drop it from labels.dat"
                )
    if not appliances:
        raise UserError(
            f"{hdir / 'labels.dat'}: none of {', '.join(DEVICE_NAMES)} is labelled in this house; pick another house"
        )
    ts = (grid * rate).astype("datetime64[s]")
    return Household(
        ts,
        aggregate,
        appliances,
        rate,
        meta={
            "dataset": dataset,
            "house": int(hdir.name[6:]) if hdir.name[6:].isdigit() else house,
            "source": str(hdir),
            "channels": {dev: [labels[k] for k in ks] for dev, ks in targets.items()},
        },
    )


def load_ukdale(path: Path, house: int = 1) -> Household:
    """UK-DALE raw: PATH (the dataset root holding house_N/, or a house folder) with
    channel_K.dat ('unix_ts watts') and labels.dat ('K name'); mains is the 'aggregate' channel."""
    return _load_raw_house(_house_dir(Path(path), house), "ukdale", ("aggregate", "mains"), house)


def load_redd(path: Path, house: int = 1) -> Household:
    """REDD low_freq: PATH (low_freq/ or the folder holding it, or a house folder); mains = channels
    labelled 'mains' (1 and 2) summed."""
    root = Path(path)
    if (root / "low_freq").is_dir():
        root = root / "low_freq"
    return _load_raw_house(_house_dir(root, house), "redd", ("mains",), house)
