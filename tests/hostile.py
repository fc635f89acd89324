"""Pickles that would run code: the planted payloads of the loader security tests. Unpickled freely, each creates
`marker`; a safe loader must refuse it before it runs, so the marker never appears. Two payloads, because the
refusals name the global they refused (posix.system or builtins.exec)."""

from __future__ import annotations

import os


class RunsCode:
    """Calls os.system("touch marker") when unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class ExecsCode(RunsCode):
    """Calls exec(...) when unpickled, which creates marker without a shell."""

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').close()",)
