"""Click options that several commands share, so their flags and types are written once."""

from __future__ import annotations

import click


def checkpoint_option(help: str = "Checkpoint file (default: the shipped one).", **kw):
    """`--checkpoint/-c PATH`: a checkpoint file; None means the shipped nilmbuild/checkpoints/default.pt."""
    return click.option("--checkpoint", "-c", type=click.Path(dir_okay=False), default=None, help=help, **kw)
