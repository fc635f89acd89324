"""The `--start`/`--end` time range every command that takes --source shares (UTC dates, end exclusive).

Kept apart from nilmbuild.data (pandas, PyTables) so that the command line can set and reset it without importing
the data stack. `nilmbuild.data.loaders.load_source` reads it: a `nilmtk:` store is read only inside the range
(lazily, by binary search on each meter's index); other sources are cut to it after loading.
"""

from __future__ import annotations

import contextvars

#: (start, end) as given on the command line; None = the data's own start / end.
source_span: contextvars.ContextVar[tuple[str | None, str | None]] = contextvars.ContextVar(
    "nilmbuild_source_span", default=(None, None)
)
