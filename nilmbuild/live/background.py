"""The live model's ONNX export in a background process, so that it overlaps the capture instead of following it.

`nilmbuild site` calls start(loaded) once the checkpoint is loaded: when the export cache (nilmbuild/live/cache.py)
has no graph for the checkpoint, a child process (`python -m nilmbuild.live.background CHECKPOINT`, one torch
thread) exports it into that cache, and gzips the runtime's wasm into it if missing, while the parent captures
the example batch. export.onnx_bytes calls wait(key) first, then reads the cache; a child that failed or was never
started changes nothing but the timing: the parent exports in its own process, as it did before. The export costs
~10 s of one core and the capture ~12 s, so on two cores this takes the export off a cold build's critical path.
"""

from __future__ import annotations

import atexit
import subprocess
import sys
from pathlib import Path

_RUNNING: dict[str, subprocess.Popen] = {}  # cache key -> the child exporting it


def start(loaded) -> bool:
    """Start exporting `loaded`'s graph into the cache in a child process, unless the cache has it, a child is
    already at it, or the checkpoint is not a file the child can read. -> whether a child was started."""
    from nilmbuild.live.cache import cache_dir
    from nilmbuild.live.export import cache_key

    path = Path(getattr(loaded, "path", "") or "")
    if not path.is_file():
        return False
    key = cache_key(loaded)
    if key in _RUNNING or (cache_dir() / f"{key}.onnx").is_file():
        return False
    _RUNNING[key] = subprocess.Popen(
        [sys.executable, "-m", "nilmbuild.live.background", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # its failure is not reported: the parent then exports and reports its own
    )
    return True


def wait(key: str) -> None:
    """Block until the child exporting `key` (if any) has finished, successfully or not."""
    proc = _RUNNING.pop(key, None)
    if proc is not None:
        proc.wait()


@atexit.register
def _stop_all() -> None:
    """A parent that stops early (an error, Ctrl-C) takes its children with it."""
    for proc in _RUNNING.values():
        proc.kill()
        proc.wait()
    _RUNNING.clear()


def _main(checkpoint: str) -> None:
    import torch

    from nilmbuild.live.export import onnx_bytes
    from nilmbuild.live.runtime import gzipped_wasm
    from nilmbuild.model.checkpoint import load_checkpoint
    from nilmbuild.site.assets import ROOT

    torch.set_num_threads(1)  # the parent's capture uses the other threads
    onnx_bytes(load_checkpoint(checkpoint))
    # the runtime's other cached product (~1 s on a first build); a missing runtime: the parent says so
    gzipped_wasm(ROOT)


if __name__ == "__main__":
    _main(sys.argv[1])
