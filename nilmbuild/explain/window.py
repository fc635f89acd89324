"""One window of a data source, in watts, as the model sees it: `nilmbuild explain -s SOURCE --start ISO`."""

from __future__ import annotations

import numpy as np

from nilmbuild.errors import UserError


def parse_time(value: str, what: str) -> np.datetime64:
    """An ISO date-time -> datetime64[s], or a one-line UserError naming the option."""
    try:
        return np.datetime64(value, "s")
    except (ValueError, TypeError):
        raise UserError(f"bad {what} {value!r}: use an ISO date-time such as 2024-06-05T08:00") from None


def load_window(
    loaded, source: str | None, start: np.datetime64, house: int | None = None, unit: str | None = None
) -> np.ndarray:
    """The (L,) float32 aggregate watts of the window that starts at `start`, resampled and cleaned with the
    checkpoint's own settings (pipeline.prepare_for), from `source` (None: the checkpoint's)."""
    from nilmbuild.api import Model
    from nilmbuild.pipeline import load_household_for, prepare_for

    model = Model(loaded)
    stamps = model.timestamps(start)
    end = stamps[-1] + np.timedelta64(model.step_s, "s")
    hh = load_household_for(loaded, source, house, date_from=str(stamps[0]), date_to=str(end), unit=unit)
    split = prepare_for(loaded, hh, whole=True).splits["train"]
    ts = split.timestamps.astype("datetime64[s]")
    at = np.flatnonzero(ts == stamps[0])
    if at.size == 0 or at[0] + model.window > ts.size:
        raise UserError(
            f"no full {model.window}-step window at {stamps[0]} in the data: pick a start on its "
            f"{model.step_s} s grid with {model.window} steps of data after it"
        )
    sl = slice(int(at[0]), int(at[0]) + model.window)
    if not split.valid[sl].all():
        raise UserError(f"the window at {stamps[0]} crosses a gap in the data; pick another start")
    return np.asarray(split.aggregate_w[sl], dtype=np.float32)
