"""`nilmbuild disaggregate` and `nilmbuild evaluate`."""

from __future__ import annotations

import json
import sys

import click

from nilmbuild.cli_options import checkpoint_option, house_option, source_option, span_of, unit_option


def _progress(label: str, enabled: bool = True):
    """A click progress bar on stderr driven by seq2subseq's progress(done, total) callback."""
    state = {"bar": None, "done": 0}

    def cb(done: int, total: int) -> None:
        if not enabled:
            return
        if state["bar"] is None:
            state["bar"] = click.progressbar(length=total, label=label, file=sys.stderr)
            state["bar"].__enter__()
        state["bar"].update(done - state["done"])
        state["done"] = done
        if done >= total:
            state["bar"].__exit__(None, None, None)

    return cb


def _load(checkpoint):
    from nilmbuild.model.checkpoint import load_checkpoint

    return load_checkpoint(checkpoint)


@click.command("disaggregate")
@unit_option
@checkpoint_option()
@source_option()
@house_option
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default="predictions.csv",
    show_default=True,
    help="Output CSV: time, aggregate, one column per device, in watts.",
)
@click.option("--from", "date_from", default=None, metavar="DATE", help="First time to include (UTC), e.g. 2024-02-01.")
@click.option("--to", "date_to", default=None, metavar="DATE", help="End (exclusive, UTC).")
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True, help="Windows per model call.")
def disaggregate(checkpoint, source, house, start, end, out, date_from, date_to, batch_size, unit):
    """Split a household's aggregate into per-appliance power with a checkpoint.

    Resamples the source as the checkpoint was trained (1 min by default), runs NILMFormer by
    seq2subseq (480-sample windows, stride 240, centres stitched), post-processes (short activations
    and long OFF periods suppressed, negatives clamped) and writes watts. Samples inside long data
    gaps are left empty. Runs in chunks whose seams give the whole series' numbers, writing rows as they are
    finished: memory does not grow with the series (a nilmtk: store is also read range by range).

    \b
    Examples:
      nilmbuild disaggregate                                  # shipped checkpoint, simulator
      nilmbuild disaggregate --source csv:../shared/data/ukdale-house2-30s --out house2.csv
      nilmbuild disaggregate --from 2024-02-01 --to 2024-02-08
      nilmbuild disaggregate -c runs/ukdale-b1.pt -s nilmtk:ukdale.h5 --building 2 --out building2.csv
    """
    from nilmbuild.infer.stream import open_source, stream_rows, stream_setup
    from nilmbuild.model.checkpoint import atomic_write_bytes

    loaded = _load(checkpoint)
    rows = [0]
    span = span_of(start, end)
    with open_source(loaded, source, house, date_from, date_to, unit=unit, span=span) as src:  # nilmtk: by range
        cfg, pc = stream_setup(loaded, src)

        def write(f) -> None:
            for text in stream_rows(loaded, src, cfg, pc, batch_size=batch_size, progress=_progress("disaggregating")):
                f.write(text.encode())
                rows[0] += text.count("\n")

        atomic_write_bytes(out, write)
    click.echo(f"wrote {out}: {rows[0] - 1:,} rows at {cfg.resample_s} s, {', '.join(loaded.devices)} (W)", err=True)


@click.command("evaluate")
@unit_option
@checkpoint_option()
@source_option()
@house_option
@click.option("--split", type=click.Choice(["train", "val", "test"]), default="test", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True, help="Windows per model call.")
def evaluate(checkpoint, source, house, start, end, split, as_json, batch_size, unit):
    """Score a checkpoint on a split, next to two baselines: the mean and the all-OFF (zero) predictor.

    Splits the data with the checkpoint's recorded split settings, runs seq2subseq over the whole
    continuous split, post-processes, and reports per device MAE, RMSE (W), NDE (sum of squared
    errors / sum y^2), SAE, TECA, MR and precision/recall/F1 of the ON state (prediction > device
    threshold vs duration-filtered ground truth; f1_10w: both at 10 W, NILMTK). See docs/metrics.md.

    \b
    Examples:
      nilmbuild evaluate                      # shipped checkpoint on the simulator's test split
      nilmbuild evaluate --json > scores.json
      nilmbuild evaluate --checkpoint run.pt --source csv:../shared/data/ukdale-house2-30s
      nilmbuild evaluate -c runs/b1345.pt -s nilmtk:ukdale.h5 --building 2   # trained on --building 1,3,4,5
    """
    from nilmbuild.infer import evaluate as run_eval
    from nilmbuild.infer import format_table, json_safe
    from nilmbuild.pipeline import load_data_for

    loaded = _load(checkpoint)
    prepared = load_data_for(loaded, source, house, unit=unit, span=span_of(start, end))
    result = run_eval(loaded, prepared, split, batch_size=batch_size, progress=_progress("evaluating", not as_json))
    if as_json:
        keys = ("devices", "baselines", "baseline", "no_ground_truth", "aggregate_cap", "split", "samples", "span")
        click.echo(json.dumps(json_safe({k: result[k] for k in keys}), indent=2))
    else:
        click.echo(f"{split} split: {result['samples']:,} samples, {result['span'][0]} .. {result['span'][1]}")
        click.echo(format_table(result))
        click.echo("mean = each device's training-set mean power; zero = all OFF (0 W); '-' = undefined (0/0)")
        click.echo(f"the devices' sum was capped to the aggregate at {result['aggregate_cap']:.1%} of the samples")
        if result["no_ground_truth"]:
            click.echo(f"not scored (no ground truth in this data): {', '.join(result['no_ground_truth'])}")
