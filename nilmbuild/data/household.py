"""The `Household` record every data source returns, and the appliance names the model predicts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from nilmbuild.errors import UserError

#: Model output order. Every source maps its channels onto these names.
DEVICE_NAMES: tuple[str, ...] = ("kettle", "microwave", "fridge", "dishwasher", "washing_machine")

#: Normalised dataset label (lower case, letters and digits only) -> our device name.
#: Several channels that map to one device are summed by the loaders.
LABEL_TO_DEVICE: dict[str, str] = {
    "kettle": "kettle",
    "microwave": "microwave",
    "microwaveoven": "microwave",
    "fridge": "fridge",
    "fridgefreezer": "fridge",
    "refrigerator": "fridge",
    "dishwasher": "dishwasher",
    "dishwaser": "dishwasher",  # REDD's spelling
    "washingmachine": "washing_machine",
    "washerdryer": "washing_machine",
    "washer": "washing_machine",
}


def normalise_label(name: str) -> str:
    """'Washing Machine', 'washing_machine', 'WashingMachine' -> 'washingmachine'."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def device_for_label(name: str) -> str | None:
    """Our device name for a dataset's channel label, or None when it is not one of DEVICE_NAMES."""
    return LABEL_TO_DEVICE.get(normalise_label(name))


@dataclass
class Household:
    """One house's power series, as loaded or simulated (before any resampling).

    timestamps: (T,) datetime64[s], UTC, strictly increasing (not necessarily regular).
    aggregate:  (T,) float32 watts, NaN = missing.
    appliances: name -> (T,) float32 watts for the DEVICE_NAMES this house has; absent devices are
                listed in meta["missing"] and filled with zeros (with a warning) by preprocessing.
    rate_s:     native sampling period in seconds.
    meta:       {"dataset": ..., "house": ..., "source": ..., "missing": [...]}.
    """

    timestamps: np.ndarray
    aggregate: np.ndarray
    appliances: dict[str, np.ndarray]
    rate_s: int
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.meta.setdefault("missing", [d for d in DEVICE_NAMES if d not in self.appliances])

    def __len__(self) -> int:
        return int(self.timestamps.shape[0])

    def check(self) -> Household:
        """Assert the invariants above (programming errors, not user errors). Returns self."""
        t = self.timestamps
        assert t.dtype == np.dtype("datetime64[s]"), t.dtype
        assert t.ndim == 1 and self.aggregate.shape == t.shape
        assert t.size < 2 or bool(np.all(np.diff(t.astype(np.int64)) > 0)), "timestamps not increasing"
        for name, v in self.appliances.items():
            assert name in DEVICE_NAMES, name
            assert v.shape == t.shape and v.dtype == np.float32, (name, v.shape, v.dtype)
        return self


def between(hh, date_from: str | None, date_to: str | None):
    """The samples of `hh` in [date_from, date_to)."""
    try:
        lo = np.datetime64(date_from, "s") if date_from else None
        hi = np.datetime64(date_to, "s") if date_to else None
    except ValueError:
        raise UserError(f"bad date {date_from or date_to!r}; use YYYY-MM-DD or YYYY-MM-DDTHH:MM") from None
    keep = np.ones(len(hh), dtype=bool)
    if lo is not None:
        keep &= hh.timestamps >= lo
    if hi is not None:
        keep &= hh.timestamps < hi
    if not keep.any():
        raise UserError(
            f"no samples between {date_from or 'start'} and {date_to or 'end'} "
            f"(data spans {hh.timestamps[0]} .. {hh.timestamps[-1]})"
        )
    return Household(
        timestamps=hh.timestamps[keep],
        aggregate=hh.aggregate[keep],
        appliances={k: v[keep] for k, v in hh.appliances.items()},
        rate_s=hh.rate_s,
        meta=dict(hh.meta),
    )
