"""`nilmbuild data`: load or simulate a household, preprocess it, print a summary, optionally save."""

from __future__ import annotations

import warnings

import click

from nilmbuild.cli_options import house_option, source_option, span_of, unit_option
from nilmbuild.data.loaders import load_notes, load_source, parse_column_map
from nilmbuild.data.preprocess import SCALERS, PrepConfig, prepare, summary


@click.command("data")
@source_option("synthetic")
@house_option
@click.option("--days", type=click.IntRange(1), default=60, show_default=True, help="Simulated days (synthetic only).")
@click.option("--seed", type=int, default=0, show_default=True, help="Simulator seed (synthetic only).")
@click.option(
    "--resample", "resample_s", type=click.IntRange(1), default=60, show_default=True, help="Resample period, seconds."
)
@click.option("--window", type=click.IntRange(2), default=480, show_default=True, help="Window length, bins.")
@click.option("--stride", type=click.IntRange(1), default=240, show_default=True, help="Train window stride, bins.")
@click.option(
    "--cutoff", type=float, default=None, help="Aggregate cutoff, W (default: UK-DALE/CSV 6000, REFIT 10000)."
)
@click.option("--scaler", type=click.Choice(sorted(SCALERS)), default="max", show_default=True)
@click.option(
    "--columns",
    default=None,
    metavar="MAP",
    help="CSV/REFIT column map, e.g. Kettle=kettle,WashingMachine=washing_machine (also COL=time, COL=aggregate).",
)
@click.option(
    "--val-from", default=None, metavar="DATE", help="Validation starts here (UTC date), instead of fractions."
)
@click.option("--test-from", default=None, metavar="DATE", help="Test starts here (UTC date), e.g. 2013-10-01.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the prepared arrays (.npz).")
@unit_option
def data(
    source,
    house,
    start,
    end,
    days,
    seed,
    resample_s,
    window,
    stride,
    cutoff,
    scaler,
    columns,
    val_from,
    test_from,
    out,
    unit,
):
    """Load (or simulate) a household, preprocess it and print a summary.

    Sources: synthetic, csv:PATH, ukdale:PATH, refit:PATH, redd:PATH and nilmtk:PATH.h5 (a NILMTK DataStore such
    as UK-DALE's ukdale.h5: --building N picks the building, --start/--end the span read; the summary says which
    site meter and power measurement make the aggregate and which appliances were left out).

    Resamples to 1 min, fills gaps up to 3 min (windows over longer gaps are dropped), clips the
    aggregate at the dataset's cutoff, computes ON/OFF states, splits the timeline 70/15/15 (with a
    one-window gap between splits), fits the scalers on train and cuts 480-bin windows.

    \b
    Examples:
      nilmbuild data                                   # 60 simulated days
      nilmbuild data --source csv:../shared/data/ukdale-house2-30s --out ukdale2.npz
      nilmbuild data --source ukdale:~/ukdale --house 2 --test-from 2013-09-01
      nilmbuild data --source nilmtk:ukdale.h5 --building 2 --start 2013-06-01 --end 2013-09-01
      nilmbuild data --source csv:export.csv --unit kW  # ';' and decimal commas are detected
    """
    cfg = PrepConfig(
        resample_s=resample_s,
        window=window,
        stride=stride,
        cutoff_w=cutoff,
        scaler=scaler,
        val_from=val_from,
        test_from=test_from,
    )
    columns = parse_column_map(columns) or None
    hh = load_source(source, house=house, columns=columns, days=days, seed=seed, unit=unit, span=span_of(start, end))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = prepare(hh, cfg)
    for w in caught:
        click.echo(f"warning: {w.message}", err=True)
    click.echo(summary(prepared))
    notes = load_notes(hh.meta)  # negative readings clipped, kW columns, ignored columns
    if notes:
        click.echo("\n".join(notes))
    if out:
        prepared.to_npz(out)
        click.echo(f"wrote {out}")
