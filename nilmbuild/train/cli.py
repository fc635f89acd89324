"""`nilmbuild train`: train NILMFormer on a data source and write a checkpoint; `nilmbuild calibrate`."""

from __future__ import annotations

import sys

import click

from nilmbuild.cli_options import checkpoint_option
from nilmbuild.errors import UserError

from .options import TRAIN_HELP, config_from_options, train_options


@click.command(help=TRAIN_HELP)
@train_options
def train(ddp: bool, **options) -> None:
    from .trainer import Interrupted
    from .trainer import train as run

    tc = config_from_options(ddp=ddp, **options)
    try:
        if ddp:
            from .ddp import run_torchrun

            run_torchrun(tc, log=click.echo)
        else:
            run(tc, log=click.echo)
    except Interrupted:
        sys.exit(130)


@click.command()
@click.argument("checkpoint", type=click.Path(dir_okay=False))
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True, help="Windows per model call.")
def calibrate(checkpoint, batch_size) -> None:
    """Re-calibrate a checkpoint's hard-gate thresholds on its validation split and rewrite it in place.

    `nilmbuild train` already does this at the end; use it after changing post-processing or for a
    checkpoint written by an older version. Each device gets the threshold with the best F1 (scored
    after post-processing, as `nilmbuild evaluate` scores) among those whose MAE beats both baselines.

    \b
    Examples:
      nilmbuild calibrate runs/model.pt
    """
    from pathlib import Path

    from .calibrate import recalibrate

    if not Path(checkpoint).is_file():
        raise UserError(f"{checkpoint}: no such checkpoint file")
    cal = recalibrate(checkpoint, batch_size)
    for d, c in cal.items():
        f1 = "-" if c["f1"] is None else f"{c['f1']:.3f}"
        mae = "-" if c["mae_w"] is None else f"{c['mae_w']:.1f} W"
        click.echo(f"{d:<16} threshold {c['threshold']:.2f} (was {c['default']:.2f})  val F1 {f1}  MAE {mae}")
    click.echo(f"rewrote {checkpoint}")


@click.command()
@checkpoint_option("Checkpoint to map and to store the result in (default: the shipped one).")
@click.option(
    "--trajectory",
    type=click.Path(dir_okay=False),
    default=None,
    help="Per-epoch weights to project (default: CHECKPOINT.trajectory.pt beside it, if there).",
)
@click.option(
    "--epochs-upto",
    type=click.IntRange(1),
    default=None,
    help="Project only epochs 1..N (e.g. the epoch the checkpoint was taken at).",
)
@click.option(
    "--grid",
    type=click.IntRange(3, 101),
    default=21,
    show_default=True,
    help="Points per axis (odd: the checkpoint is the middle point); grid^2 forward passes.",
)
@click.option(
    "--span",
    type=click.FloatRange(0, min_open=True),
    default=1.0,
    show_default=True,
    help="The plane covers -span..span along each direction (1 = every filter moved by its own norm).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the two random directions and of the validation windows.",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 256),
    default=16,
    show_default=True,
    help="Validation windows the loss is evaluated on (the same batch at every point).",
)
def landscape(checkpoint, trajectory, epochs_upto, grid, span, seed, batch) -> None:
    """Map the validation loss around a checkpoint's weights and store it in the checkpoint.

    Picks two random directions in weight space, filter-normalised (Li et al. 2018: each row of each
    weight matrix scaled to that row's norm; biases and LayerNorm get none), evaluates the validation
    objective at CHECKPOINT + a*d1 + b*d2 on a GRID x GRID plane, and projects each epoch's weights from
    the training trajectory onto the plane. The result goes into the checkpoint (extra["landscape"],
    rewritten atomically), where the Training page reads it; `nilmbuild site` never recomputes it.

    Cost: GRID^2 + (epochs) forward passes of BATCH windows; for the default model, 16 windows take
    about 2 s on one busy CPU core, so the default 21 x 21 grid is about a quarter of an hour.

    \b
    Examples:
      nilmbuild landscape -c runs/model.pt                      # trajectory: runs/model.trajectory.pt
      nilmbuild landscape -c runs/model.pt --epochs-upto 27 --grid 31 --span 0.5
    """
    from .landscape_run import run_landscape

    res = run_landscape(checkpoint, trajectory, epochs_upto, grid, span, seed, batch, echo=click.echo)
    m = res["min"]
    click.echo(
        f"centre loss {res['centre_loss']:.4f}, minimum {m['loss']:.4f} at ({m['alpha']:+.3f}, {m['beta']:+.3f}); "
        f"{len(res['trajectory'])} epochs projected"
    )
