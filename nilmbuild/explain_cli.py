"""`nilmbuild explain`: which steps of the aggregate made the model predict a device (docs/attributions.md).

A module of its own above the packages: the command composes nilmbuild.explain with the site's served window
(`--store`, nilmbuild/site/why_store.py), and the site builds on nilmbuild.explain, so it cannot live in either."""

from __future__ import annotations

import json

import click

from nilmbuild.cli_options import building_option, checkpoint_option, source_option, unit_option
from nilmbuild.errors import UserError
from nilmbuild.explain.methods import METHODS, Settings


@click.command("explain")
@unit_option
@checkpoint_option()
@source_option()
@building_option  # not --start/--end: here they are the explained window's
@click.option("--device", "-d", default=None, help="Device to explain, e.g. kettle (required unless --quality).")
@click.option("--start", default=None, metavar="ISO", help="First step of the window, e.g. 2024-06-05T08:00.")
@click.option(
    "--end", default=None, metavar="ISO", help="Sequence level: explain the energy up to this step (inclusive)."
)
@click.option("--step", "at", default=None, metavar="ISO", help="Point level: explain the power at this one step.")
@click.option(
    "--method", "-m", type=click.Choice(METHODS), default=None, help="Attribution method (default ig; --quality: all)."
)
@click.option(
    "--output",
    type=click.Choice(["hard", "soft"]),
    default="hard",
    show_default=True,
    help="Explained output: hard gate (the pages') or soft gate. An imported CondiNILM / NILMFormer checkpoint has "
    "one output, its evaluation's: leave this out.",
)
@click.option(
    "--ig-steps",
    type=click.IntRange(1, 256),
    default=Settings.ig_steps,
    show_default=True,
    help="IG points per path segment.",
)
@click.option(
    "--occlusion-window",
    type=click.IntRange(1),
    default=Settings.occlusion_window,
    show_default=True,
    help="Steps occluded at once.",
)
@click.option(
    "--occlusion-stride",
    type=click.IntRange(1),
    default=Settings.occlusion_stride,
    show_default=True,
    help="Steps between occluded windows.",
)
@click.option(
    "--quality", is_flag=True, help="Measure every method on the site's example windows and print the quality table."
)
@click.option(
    "--windows", type=click.IntRange(1, 32), default=1, show_default=True, help="--quality: windows per device."
)
@click.option(
    "--store",
    is_flag=True,
    help="Compute the Why page's explanations of the window `nilmbuild site` serves (same -c/-s/--house/--unit) "
    "and store them in the checkpoint, so its cold builds skip Captum. Takes no other option.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the arrays, or the quality table with its curves).")
@click.option("--png", type=click.Path(dir_okay=False), default=None, help="Write a figure of the explanation here.")
def explain(
    checkpoint,
    source,
    house,
    device,
    start,
    end,
    at,
    method,
    output,
    ig_steps,
    occlusion_window,
    occlusion_stride,
    quality,
    windows,
    store,
    as_json,
    png,
    unit,
):
    """Attribute a device's predicted energy (or power at one step) to the steps of the aggregate, in watts.

    The baseline is the window's own minimum power (its always-on load) at every step. Methods (Captum):
    ig = Integrated Gradients, occlusion = sliding windows replaced by the baseline, saliency = gradient x
    (input - baseline). --quality measures them all (faithfulness, robustness, complexity, the
    model-randomisation check) on the example windows of `nilmbuild site`. --store computes the Why page's
    numbers for the window `nilmbuild site` serves and keeps them in the checkpoint (extra["why"]; the shipped
    checkpoint has them): `nilmbuild site` then reads them instead of running Captum, as long as the window, the
    page's settings and the explanation code's version match. See docs/attributions.md.

    \b
    Examples:
      nilmbuild explain --device kettle --start 2024-06-20T04:00                 # its energy over the window
      nilmbuild explain -d kettle --start 2024-06-20T04:00 --step 2024-06-20T05:10 -m occlusion
      nilmbuild explain -d fridge --start 2024-06-20T04:00 --end 2024-06-20T06:00 --png fridge.png
      nilmbuild explain --quality --json > quality.json                         # every device and method
      nilmbuild explain -c run.pt -s csv:../shared/data/ukdale-house2-30s -d kettle --start 2013-06-01T07:00
      nilmbuild explain --store -c run.pt                                       # its site's Why page, stored
    """
    from nilmbuild.api import load_model

    if store:
        from nilmbuild.site.why_store import store_explanations

        _store_alone()
        store_explanations(checkpoint, source, house, unit, echo=lambda m: click.echo(m, err=True))
        return

    settings = Settings(ig_steps=ig_steps, occlusion_window=occlusion_window, occlusion_stride=occlusion_stride)
    loaded = load_model(checkpoint).loaded
    if quality:
        if output != "hard":
            raise UserError(
                "--quality measures the hard-gate output (the pages'); --output soft is for one explanation"
            )
        return _quality(loaded, source, house, unit, device, method, windows, settings, as_json)
    if device is None or start is None:
        raise UserError("pass --device and --start (e.g. --device kettle --start 2024-06-20T04:00), or --quality")
    e = _explain(loaded, source, house, unit, device, start, end, at, method or "ig", output, settings)
    if png:
        from nilmbuild.explain.report import explanation_png
        from nilmbuild.model.checkpoint import atomic_write_bytes

        data = explanation_png(e)
        atomic_write_bytes(png, lambda f: f.write(data))
        click.echo(f"wrote {png}", err=True)
    from nilmbuild.explain.report import explanation_dict, explanation_text

    click.echo(json.dumps(explanation_dict(e)) if as_json else explanation_text(e))


def _store_alone() -> None:
    """--store takes the data options only: it explains the site's window with the page's settings."""
    ctx = click.get_current_context()
    allowed = {"store", "checkpoint", "source", "house", "unit"}
    given = [
        p.opts[0]
        for p in ctx.command.params
        if p.name not in allowed and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT
    ]
    if given:
        raise UserError(
            f"--store explains the window `nilmbuild site` serves with the Why page's settings: pass it with "
            f"-c/-s/--house/--unit only, not {', '.join(given)}"
        )


def _explain(loaded, source, house, unit, device, start, end, at, method, output, settings):
    from nilmbuild.explain.api import explain_window
    from nilmbuild.explain.window import load_window, parse_time

    if device not in loaded.devices:
        raise UserError(f"unknown device {device!r}; this checkpoint has {', '.join(loaded.devices)}")
    t0 = parse_time(start, "--start")
    interval = interval_for(loaded, t0, end, at)
    agg = load_window(loaded, source, t0, house, unit)
    e = explain_window(loaded, agg, t0, device, interval, method, output, settings, progress=True)
    if interval.point:  # an upstream model's stats token is reported apart (attention.py)
        from nilmbuild.explain.attention import attention_rows, attention_vs_attribution, stats_index

        rows = attention_rows(loaded, agg, t0, interval.lo)
        e.attention = attention_vs_attribution(rows, e.attribution, stats_index(loaded))
    return e


def interval_for(loaded, t0, end: str | None, at: str | None):
    """--end / --step -> the Interval of window steps the target covers (neither: the whole window)."""
    from nilmbuild.api import Model
    from nilmbuild.explain.window import parse_time
    from nilmbuild.explain.wrapper import Interval

    m = Model(loaded)
    if end and at:
        raise UserError("pass --end (an interval's energy) or --step (one step's power), not both")
    if not end and not at:
        return Interval(0, m.window)
    t = parse_time(end or at, "--end" if end else "--step")
    offset = (t - t0).astype("timedelta64[s]").astype(int)
    i, rest = divmod(int(offset), m.step_s)
    if rest or not 0 <= i < m.window:
        last = m.timestamps(t0)[-1]
        raise UserError(
            f"{'--end' if end else '--step'} {t} is not a step of the window {t0} .. {last} (every {m.step_s} s)"
        )
    return Interval(i, i + 1, point=True) if at else Interval(0, i + 1)


def _quality(loaded, source, house, unit, device, method, windows, settings, as_json):
    from nilmbuild.explain.batch import captured_windows, quality_table
    from nilmbuild.explain.report import quality_text
    from nilmbuild.explain.wrapper import outputs_of
    from nilmbuild.infer import json_safe

    if device is not None and device not in loaded.devices:
        raise UserError(f"unknown device {device!r}; this checkpoint has {', '.join(loaded.devices)}")
    aggw, t0 = captured_windows(loaded, source, house, unit)
    devices = [device] if device else None
    methods = (method,) if method else METHODS
    rows = quality_table(loaded, aggw, t0, devices, methods, windows, settings, progress=True)
    if as_json:
        click.echo(json.dumps(json_safe({"settings": settings.__dict__, "rows": rows}), indent=1))
    else:
        click.echo(quality_text(rows, outputs_of(loaded)))
