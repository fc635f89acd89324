"""Power units of CSV columns (`--unit`), kept apart from nilmbuild.data.loaders (pandas) so that the command line
can offer them without importing the data stack.

The unit is a data setting like the source: passed explicitly to `load_source(..., unit=)`, recorded in a
checkpoint's provenance (`pipeline.training_provenance`) and in a run's TrainConfig, and read back from there by
everything that runs the checkpoint (`pipeline.data_settings`).
"""

from __future__ import annotations

UNITS = {"W": 1.0, "kW": 1000.0}


def same_unit(a: str | None, b: str | None) -> bool:
    """Whether two --unit settings read a CSV the same way (None: watts unless a column name says otherwise)."""
    return (a or "W") == (b or "W")
