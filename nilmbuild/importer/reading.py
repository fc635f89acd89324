"""Read a user's upstream file without ever running code from it.

Every file goes through PyTorch's weights-only unpickler (`torch.load(weights_only=True)`), which builds only
tensors, containers and plain values. The original NILMFormer's log dict also holds numpy scalars and arrays
(metrics, predictions), so the unpickler is additionally allowed exactly the numpy names that rebuild those: the
array and scalar constructors, `numpy.ndarray`, `numpy.dtype` and the numeric dtype classes. Nothing else: no
object arrays, no user classes, never `weights_only=False`.
"""

from __future__ import annotations

import hashlib
import pickle
import warnings
from pathlib import Path

import numpy as np
import torch

from nilmbuild.errors import UserError

_NUMERIC_DTYPES = (
    "Float16DType Float32DType Float64DType Int8DType Int16DType Int32DType Int64DType UInt8DType UInt16DType "
    "UInt32DType UInt64DType BoolDType LongDType ULongDType LongLongDType ULongLongDType"
).split()


def numpy_safe_globals() -> list:
    """The numpy names a metrics/predictions log needs, under numpy 2's module names and numpy 1's
    (`numpy.core.multiarray`, which files written with numpy < 2 name)."""
    from numpy._core import multiarray

    dtype_classes = [getattr(np.dtypes, n) for n in _NUMERIC_DTYPES if hasattr(np.dtypes, n)]
    return [
        np.ndarray,
        np.dtype,
        multiarray._reconstruct,
        multiarray.scalar,
        (multiarray._reconstruct, "numpy.core.multiarray._reconstruct"),
        (multiarray.scalar, "numpy.core.multiarray.scalar"),
        *dtype_classes,
    ]


def file_identity(path: Path) -> dict:
    """{name, sha256, bytes} of a file: what a checkpoint records about where it came from (never a path)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"name": path.name, "sha256": h.hexdigest(), "bytes": path.stat().st_size}


def read_torch_file(path: Path, what: str = "UPSTREAM_CKPT"):
    """The object a torch.save'd file holds, read weights-only with tensors mapped to the CPU."""
    if not path.is_file():
        raise UserError(f"{what} {path} does not exist: pass a CondiNILM .ckpt or an original NILMFormer .pt")
    try:
        with torch.serialization.safe_globals(numpy_safe_globals()), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Detected pickle protocol")  # a plain pickle: refused below
            return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # a refused global, a truncated zip, a text file, ...
        raise UserError(_refusal(path, e)) from None


def _refusal(path: Path, e: Exception) -> str:
    """One line for a file the weights-only reader would not (or could not) read."""
    text = str(e)
    if isinstance(e, pickle.UnpicklingError) and ("GLOBAL" in text or "global" in text or "Can only build" in text):
        return (
            f"{path.name}: refused to read it, it asks to rebuild Python objects beyond tensors and numpy values "
            "(nilmbuild never runs code from a checkpoint): pass the .ckpt CondiNILM wrote or the .pt log "
            "the original NILMFormer wrote, unmodified"
        )
    return (
        f"{path.name} is not a PyTorch file or is truncated ({type(e).__name__}): pass a CondiNILM Lightning .ckpt "
        "(last.ckpt, ckpt_epoch=NNN.ckpt, best_f1_epoch=NNN.ckpt) or an original NILMFormer log NILMFormer_<seed>.pt"
    )
