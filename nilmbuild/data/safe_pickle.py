"""A restricted unpickler for metadata that other programs pickled into a user's file (NILMTK's HDF5 stores).

`loads_plain(data)` rebuilds only plain values: None, bool, int, float, complex, str, bytes, bytearray and
lists, tuples, dicts, sets and frozensets of them. No class is imported and nothing is called, with two
exceptions that name a value rather than run code:

- a pytz timezone (`pytz._p('Europe/London', ...)`, how pandas pickles an index's tz) becomes
  `TimezoneName('Europe/London')`, a `str`; pytz is never imported;
- Python 2's `__builtin__.set` / `frozenset` (old NILMTK stores) become the builtin types.

Anything else (a class, a function, `os.system`, a persistent id) raises `RefusedPickle` before it is looked up.
"""

from __future__ import annotations

import io
import pickle


class RefusedPickle(pickle.UnpicklingError):
    """The data asks for something other than plain containers and scalars."""


class TimezoneName(str):
    """The zone name of a pickled pytz timezone (e.g. 'Europe/London'); pytz itself is never imported."""


def _pytz_name(zone, *_args) -> TimezoneName:
    """Stands in for `pytz._p(zone, utcoffset, dstoffset, tzname)` and `pytz.timezone(zone)`."""
    if not isinstance(zone, str):
        raise RefusedPickle(f"a pytz timezone whose name is {type(zone).__name__}, not text")
    return TimezoneName(zone)


def _utc() -> TimezoneName:
    """Stands in for `pytz._UTC()`."""
    return TimezoneName("UTC")


#: (module, name) -> what it stands for. Nothing outside this table is ever imported or called.
ALLOWED: dict[tuple[str, str], object] = {
    ("pytz", "_p"): _pytz_name,
    ("pytz", "timezone"): _pytz_name,
    ("pytz", "_UTC"): _utc,
    ("__builtin__", "set"): set,
    ("__builtin__", "frozenset"): frozenset,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
}


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        try:
            return ALLOWED[(module, name)]
        except KeyError:
            raise RefusedPickle(f"refused to load {module}.{name}") from None

    def persistent_load(self, pid):
        raise RefusedPickle("refused a persistent id")


def loads_plain(data: bytes):
    """Unpickle `data` allowing only plain containers and scalars (see the module docstring).

    Python 2 pickles' 8-bit strings are decoded as latin-1 (what NILMTK's old stores need)."""
    return _Restricted(io.BytesIO(bytes(data)), encoding="latin1").load()
