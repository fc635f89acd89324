"""`nilmbuild landscape` without the Click layer: load, compute with a progress bar, store in the checkpoint."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from nilmbuild.errors import UserError


def run_landscape(checkpoint, trajectory, epochs_upto, grid, span, seed, batch, echo=print) -> dict:
    from nilmbuild.model.checkpoint import default_checkpoint_path, load_checkpoint, update_extra
    from nilmbuild.pipeline import load_data_for

    from .landscape import compute_landscape, trajectory_states, val_batch
    from .trajectory import load_trajectory, trajectory_path

    path = Path(checkpoint) if checkpoint else default_checkpoint_path()
    loaded = load_checkpoint(path)
    tpath = Path(trajectory) if trajectory else Path(trajectory_path(path))
    if trajectory and not tpath.is_file():
        raise UserError(f"--trajectory {tpath}: no such file (training writes OUT.trajectory.pt beside OUT)")
    traj = load_trajectory(tpath)
    if trajectory and traj is None:
        raise UserError(f"--trajectory {tpath} is not a nilmbuild trajectory file (written by `nilmbuild train`)")
    states = trajectory_states(traj, epochs_upto)
    echo(f"trajectory: {len(states)} epochs from {tpath.name}" if states else "no trajectory: the plane only")
    prepared = load_data_for(loaded)
    b = val_batch(loaded, prepared, batch, seed)
    total = grid * grid + len(states)
    with click.progressbar(length=total, label=f"loss at {grid}x{grid} points", file=sys.stderr) as bar:
        res = compute_landscape(
            loaded.model, b, grid=grid, span=span, seed=seed, trajectory=states, progress=bar.update
        )
    res["epochs_upto"] = epochs_upto
    res["trajectory_file"] = tpath.name if states else None
    update_extra(path, "landscape", res)
    echo(f"stored extra['landscape'] in {path}")
    return res
