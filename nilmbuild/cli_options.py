"""Click options that several commands share, so their flags, types and help are written once."""

from __future__ import annotations

import click

from nilmbuild.source_span import source_span
from nilmbuild.units import UNITS

SOURCES = "synthetic | csv:PATH | ukdale:PATH | refit:PATH | redd:PATH | nilmtk:PATH.h5"


def checkpoint_option(help: str = "Checkpoint file (default: the shipped one).", **kw):
    """`--checkpoint/-c PATH`: a checkpoint file; None means the shipped nilmbuild/checkpoints/default.pt."""
    return click.option("--checkpoint", "-c", type=click.Path(dir_okay=False), default=None, help=help, **kw)


def source_option(default: str | None = None):
    """`--source/-s SOURCE`: where the data comes from; default None means the source the checkpoint was trained on."""
    if default is None:
        return click.option(
            "--source",
            "-s",
            default=None,
            metavar="SOURCE",
            help=f"{SOURCES} (default: the one the checkpoint was trained on).",
        )
    return click.option("--source", "-s", default=default, show_default=True, metavar="SOURCE", help=SOURCES)


_house = click.option(
    "--house",
    "--building",
    "house",
    type=int,
    default=None,
    help="House number (UK-DALE/REDD default 1, REFIT 2); --building N: building of a nilmtk: store (default: its first).",
)


def _set_span(ctx, param, value):
    start, end = source_span.get()
    source_span.set((value, end) if param.name == "start" else (start, value))  # read by load_source
    return value


def _span(flag: str, what: str):
    return click.option(
        flag,
        default=None,
        metavar="DATE",
        callback=_set_span,
        expose_value=False,
        help=f"{what} of the data to read (UTC, YYYY-MM-DD[THH:MM]); a nilmtk: store is read only inside it.",
    )


def house_option(f):
    """`--house/--building N` (which house or building of the source) and `--start/--end DATE` (which span of it)."""
    return _house(_span("--start", "First time")(_span("--end", "End (exclusive)")(f)))


#: `--unit W|kW` for every command that takes --source: the unit of CSV power columns whose name has none. The
#: command passes it on as `unit=` (a data setting, recorded in the checkpoint: see nilmbuild.units).
unit_option = click.option(
    "--unit",
    type=click.Choice(sorted(UNITS)),
    default=None,
    help="Unit of CSV power columns without one in their name (default W, or the unit the checkpoint was trained "
    "with when the source is its own; 'Aggregate_kW' or 'kettle (kW)' are read as kW anyway).",
)
