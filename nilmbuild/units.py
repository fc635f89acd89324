"""Power units of CSV columns, and the `--unit` default every command that reads a source shares.

Kept apart from nilmbuild.data.loaders (pandas) so that the command line can set and reset the default without
importing the data stack.
"""

from __future__ import annotations

import contextvars

UNITS = {"W": 1.0, "kW": 1000.0}
#: Default unit for power columns whose name carries no unit (set by the CLI's --unit; None = watts).
default_unit: contextvars.ContextVar[str | None] = contextvars.ContextVar("nilmbuild_default_unit", default=None)
