"""The training trajectory: the weights at the end of every epoch, kept beside the checkpoint.

``OUT.trajectory.pt`` holds ``{"format": "nilmbuild-trajectory", "epochs": [1, 2, ...], "states":
[state_dict, ...]}`` with every floating tensor in float16 (1.4 MB an epoch for the default model). The loss
landscape (``nilmbuild landscape``) projects these points onto its plane; the file is not needed to
run or explain the model, so it stays in the run folder and is never shipped.
"""

from __future__ import annotations

import os

import torch

from nilmbuild.errors import UserError
from nilmbuild.model.checkpoint import atomic_write_bytes

FORMAT = "nilmbuild-trajectory"


def trajectory_path(out: str | os.PathLike) -> str:
    """runs/x.pt -> runs/x.trajectory.pt"""
    out = str(out)
    return (out[:-3] if out.endswith(".pt") else out) + ".trajectory.pt"


def _half(state: dict) -> dict:
    return {
        k: (t.detach().to("cpu", torch.float16) if t.is_floating_point() else t.detach().cpu().clone())
        for k, t in state.items()
    }


def load_trajectory(path: str | os.PathLike) -> dict | None:
    """The trajectory file, or None when there is none (an older run, or a shipped checkpoint)."""
    if not os.path.isfile(path):
        return None
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)  # never runs code from the file
    except Exception as e:  # truncated, not a torch file, or a pickle that names anything but tensors
        raise UserError(
            f"trajectory {path} is unreadable or not a weights file ({type(e).__name__}): "
            "delete it, or retrain with `nilmbuild train` to write a new one"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data


def append_epoch(path: str | os.PathLike, epoch: int, state: dict) -> None:
    """Add (or replace, after a resume) the weights at the end of `epoch` (1-based), atomically."""
    data = load_trajectory(path) or {"format": FORMAT, "epochs": [], "states": []}
    keep = [i for i, e in enumerate(data["epochs"]) if e < epoch]
    data = {
        "format": FORMAT,
        "epochs": [data["epochs"][i] for i in keep] + [epoch],
        "states": [data["states"][i] for i in keep] + [_half(state)],
    }
    atomic_write_bytes(path, lambda f: torch.save(data, f))
