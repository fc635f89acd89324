"""The flags of `nilmbuild train` -> TrainConfig, shared by the command (train/cli.py) and the torchrun
entry point (train/ddp.py), so neither imports the other and a flag is declared once."""

from __future__ import annotations

import shlex
import sys

import click

from nilmbuild.cli_options import houses_option, source_option, span_of, unit_option
from nilmbuild.errors import UserError

TRAIN_HELP = """Train NILMFormer and write a checkpoint (weights, scalers, device types, training log, provenance).

--building 1,3,4,5 trains one model on several buildings of a source with houses (nilmtk:, ukdale:, refit:, redd:):
each split 70/15/15 on its own timeline, scalers fitted on all their train parts, no window across two buildings,
the devices every building meters (docs/training.md, "Several buildings").

\b
Examples:
  nilmbuild train --source synthetic --days 60 --epochs 10 --out runs/sim.pt
  nilmbuild train --source csv:/data/ukdale-house2-30s --test-from 2013-09-10 --out runs/ukdale.pt
  nilmbuild train --resume runs/sim.resume.pt          # after Ctrl-C or --max-steps
  nilmbuild train -s nilmtk:ukdale.h5 --building 1,3,4,5 --start 2013-04-12 --end 2014-04-12 --out runs/b1345.pt
  nilmbuild evaluate -c runs/b1345.pt -s nilmtk:ukdale.h5 --building 2   # on the held-out building
  torchrun --nproc_per_node=2 -m nilmbuild.train.ddp --source synthetic --epochs 4
"""

TRAIN_OPTIONS = [
    unit_option,
    source_option("synthetic"),
    houses_option,
    click.option("--days", type=int, default=60, show_default=True, help="Simulated days (synthetic only)."),
    click.option(
        "--epochs", type=int, default=None, help="Epochs to train [10; with --resume: the resumed run's, unless given]."
    ),
    click.option(
        "--batch-size", type=int, default=16, show_default=True, help="Windows per step (per process under DDP)."
    ),
    click.option(
        "--lr",
        type=float,
        default=2e-3,
        show_default=True,
        help="Peak AdamW learning rate (linear warm-up over 5 % of the steps, then cosine decay to 5 %).",
    ),
    click.option(
        "--seed", type=int, default=0, show_default=True, help="Seeds the simulator, the model and the batch order."
    ),
    click.option("--no-pcgrad", is_flag=True, help="Plain summed loss instead of PCGrad (faster, for comparison)."),
    click.option(
        "--pcgrad-from",
        "pcgrad_from_epoch",
        type=int,
        default=None,
        help="First epoch (1-based) trained with PCGrad; earlier epochs use the plain summed loss "
        "[the last quarter of the epochs: a PCGrad step costs ~1.5-2x a plain one].",
    ),
    click.option(
        "--max-minutes",
        type=float,
        default=None,
        help="Stop after this many minutes (best checkpoint kept, resumable).",
    ),
    click.option(
        "--warmup", "warmup_epochs", type=int, default=None, help="Warm-up epochs without crops [epochs // 4, >= 1]."
    ),
    click.option("--val-from", default=None, help="First day of the validation split (YYYY-MM-DD)."),
    click.option("--test-from", default=None, help="First day of the test split (YYYY-MM-DD); default: last 15 %."),
    click.option("--devices", default=None, help="Comma-separated devices [every device the source has]."),
    click.option(
        "--out",
        default="runs/model.pt",
        show_default=True,
        type=click.Path(dir_okay=False),
        help="Checkpoint (best epoch by validation loss); the resumable state goes to OUT minus .pt + .resume.pt.",
    ),
    click.option("--resume", default=None, type=click.Path(dir_okay=False), help="Continue from a .resume.pt file."),
    click.option("--max-steps", type=int, default=None, help="Stop after this many optimizer steps (resumable)."),
    click.option("--threads", type=int, default=2, show_default=True, help="torch CPU threads per process."),
    click.option("--ddp", is_flag=True, help="Distributed run: launch with torchrun (reads RANK/WORLD_SIZE)."),
    click.option(
        "--device",
        type=click.Choice(["auto", "cpu", "cuda"]),
        default="auto",
        show_default=True,
        help="Where to train; cuda uses bf16 mixed precision. auto = cuda when torch sees a GPU.",
    ),
    click.option(
        "--crop-len",
        type=int,
        default=None,
        help="After warm-up, train on 2-4 event-biased crops of this many steps per window [window // 2]; 0 = full windows.",
    ),
    click.option(
        "--windows-per-epoch",
        type=click.IntRange(1),
        default=None,
        help="Windows drawn at random offsets per epoch [as many as the stride-240 grid has]; more = fewer validations.",
    ),
    click.option(
        "--on-share",
        type=click.FloatRange(0.0, 1.0),
        default=0.0,
        show_default=True,
        help="Share of each epoch's random windows drawn where a device, picked at random, is ON (balanced sampling: "
        "a rarely used device is seen as often as the fridge); 0 draws uniformly.",
    ),
    click.option(
        "--fixed-grid",
        is_flag=True,
        help="Train on the fixed stride grid of windows instead of fresh random offsets each epoch.",
    ),
    click.option(
        "--loss-weighting",
        type=click.Choice(["fixed", "uncertainty"]),
        default="fixed",
        show_default=True,
        help="fixed: per-device-type weights; uncertainty: learned per-device weights exp(-s) (Kendall et al. 2018).",
    ),
    click.option(
        "--scaler",
        type=click.Choice(["max", "minmax", "standard", "mean"]),
        default="max",
        show_default=True,
        help="Aggregate scaling (architecture.md 2.2). Appliance targets are always max-scaled: the heads output power >= 0.",
    ),
    click.option("--quiet", is_flag=True, help="No progress bar."),
]


def train_options(f):
    """Apply every `nilmbuild train` flag to the Click command `f` (in --help order)."""
    for option in reversed(TRAIN_OPTIONS):
        f = option(f)
    return f


def config_from_options(
    unit,
    source,
    house,
    start,
    end,
    days,
    epochs,
    batch_size,
    lr,
    seed,
    no_pcgrad,
    pcgrad_from_epoch,
    max_minutes,
    warmup_epochs,
    val_from,
    test_from,
    devices,
    out,
    resume,
    max_steps,
    threads,
    ddp,
    device,
    crop_len,
    windows_per_epoch,
    on_share,
    fixed_grid,
    loss_weighting,
    scaler,
    quiet,
):
    """The parsed flags -> TrainConfig (`ddp` only chooses the launcher; it is not part of the config)."""
    from .config import TrainConfig

    if epochs is None and not resume:
        epochs = 10
    if (epochs is not None and epochs < 1) or batch_size < 1:
        raise UserError("--epochs and --batch-size must be at least 1")
    if on_share and fixed_grid:
        raise UserError("--on-share draws random windows: leave out --fixed-grid")
    return TrainConfig(
        source=source,
        unit=unit,
        span=span_of(start, end),
        house=house,
        days=days,
        seed=seed,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        pcgrad=not no_pcgrad,
        pcgrad_from_epoch=None if pcgrad_from_epoch is None else max(0, pcgrad_from_epoch - 1),
        max_minutes=max_minutes,
        warmup_epochs=warmup_epochs,
        val_from=val_from,
        test_from=test_from,
        devices=tuple(d.strip() for d in devices.split(",") if d.strip()) if devices else None,
        out=out,
        resume=resume,
        max_steps=max_steps,
        threads=threads,
        progress=not quiet,
        device=device,
        crop_len=crop_len,
        random_offsets=not fixed_grid,
        windows_per_epoch=windows_per_epoch,
        on_share=on_share,
        loss_weighting=loss_weighting,
        scaler=scaler,
        command="nilmbuild train " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if len(sys.argv) > 1 else "",
    )
