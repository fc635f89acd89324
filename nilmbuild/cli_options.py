"""Click options that several commands share, so their flags, types and help are written once."""

from __future__ import annotations

import click

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


def _buildings(ctx, param, value):
    """'2' -> 2; '1,3,4,5' -> (1, 3, 4, 5) (several buildings: `nilmbuild train` only, nilmbuild.data.buildings)."""
    if value is None:
        return None
    try:
        numbers = [int(v) for v in str(value).split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r}: give a number or comma-separated numbers, e.g. 2 or 1,3,4,5") from None
    if not numbers:
        raise click.BadParameter("give a number or comma-separated numbers, e.g. 2 or 1,3,4,5")
    if len(set(numbers)) != len(numbers):
        raise click.BadParameter(f"{value!r} names a building twice")
    return numbers[0] if len(numbers) == 1 else tuple(numbers)


def _house(many: bool):
    what = (
        "House number (UK-DALE/REDD default 1, REFIT 2); --building N: building of a nilmtk: store (default: its first)"
    )
    return click.option(
        "--house",
        "--building",
        "house",
        default=None,
        metavar="N[,N...]" if many else "N",
        callback=_buildings if many else None,
        type=None if many else int,
        help=what + ("; several, e.g. 1,3,4,5, train one model on all of them." if many else "."),
    )


def _span(flag: str, what: str):
    return click.option(
        flag,
        flag[2:],
        default=None,
        metavar="DATE",
        help=f"{what} of the data to read (UTC, YYYY-MM-DD[THH:MM]); a nilmtk: store is read only inside it.",
    )


def house_option(f):
    """`--house/--building N` (which house or building of the source) and `--start/--end DATE` (which span of it):
    the command receives `house`, `start` and `end` and passes them on (`span=span_of(start, end)`)."""
    return _house(False)(_span("--start", "First time")(_span("--end", "End (exclusive)")(f)))


def houses_option(f):
    """house_option for `nilmbuild train`: --building also takes a list (1,3,4,5), one model over all of them."""
    return _house(True)(_span("--start", "First time")(_span("--end", "End (exclusive)")(f)))


#: `--house/--building N` alone, for a command whose --start/--end mean something else (`nilmbuild explain`).
building_option = _house(False)


def span_of(start: str | None, end: str | None) -> tuple[str | None, str | None] | None:
    """--start/--end -> the `span` the pipeline takes: None when neither was given (a command that runs a checkpoint
    then reads the span it was trained on, pipeline.load_household_for)."""
    return (start, end) if (start or end) else None


#: `--unit W|kW` for every command that takes --source: the unit of CSV power columns whose name has none. The
#: command passes it on as `unit=` (a data setting, recorded in the checkpoint: see nilmbuild.units).
unit_option = click.option(
    "--unit",
    type=click.Choice(sorted(UNITS)),
    default=None,
    help="Unit of CSV power columns without one in their name (default W, or the unit the checkpoint was trained "
    "with when the source is its own; 'Aggregate_kW' or 'kettle (kW)' are read as kW anyway).",
)
