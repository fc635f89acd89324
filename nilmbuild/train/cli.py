"""`nilmbuild train`: train NILMFormer on a data source and write a checkpoint; `nilmbuild calibrate`."""

from __future__ import annotations

import sys

import click

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

    from .trainer import recalibrate

    if not Path(checkpoint).is_file():
        raise UserError(f"{checkpoint}: no such checkpoint file")
    cal = recalibrate(checkpoint, batch_size)
    for d, c in cal.items():
        f1 = "-" if c["f1"] is None else f"{c['f1']:.3f}"
        mae = "-" if c["mae_w"] is None else f"{c['mae_w']:.1f} W"
        click.echo(f"{d:<16} threshold {c['threshold']:.2f} (was {c['default']:.2f})  val F1 {f1}  MAE {mae}")
    click.echo(f"rewrote {checkpoint}")
