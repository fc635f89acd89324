"""`nilmbuild capture` (fixed example batch -> blob) and `nilmbuild inspect` (what a blob holds)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from nilmbuild.cli_options import checkpoint_option, house_option, source_option, span_of
from nilmbuild.errors import UserError


def build_capture(
    checkpoint: str | None,
    source: str | None,
    batch: int,
    seed: int,
    split: str = "test",
    house: int | None = None,
    ablations: bool = True,
    span: tuple | None = None,
):
    """Load the checkpoint, build the example batch exactly as `nilmbuild site` does (the checkpoint's
    source, span, split settings and scalers unless overridden), and capture it."""
    import numpy as np

    from nilmbuild.data import example_batch
    from nilmbuild.model.checkpoint import load_checkpoint
    from nilmbuild.pipeline import data_settings, load_household_for, prepare_for

    from .capture import capture_batch

    loaded = load_checkpoint(checkpoint)
    hh = load_household_for(loaded, source, house, span=span)
    prepared = prepare_for(loaded, hh)
    x, y, t0 = example_batch(prepared, split=split, batch_size=batch, seed=seed)
    meta = {
        "data": {
            "source": source or data_settings(loaded.provenance)["source"],
            "split": split,
            "seed": seed,
            "batch_requested": batch,
            "dataset": (hh.meta or {}).get("dataset"),
            "house": (hh.meta or {}).get("house"),
            "scaled_with": "checkpoint scalers" if loaded.scalers else "scalers fitted on this data",
        }
    }
    if not loaded.scalers:
        meta["scalers"] = prepared.scalers
    return capture_batch(loaded, np.asarray(x, dtype=np.float32), y=y, t0=t0, ablations=ablations, meta=meta)


@click.command()
@checkpoint_option("Checkpoint to run (default: the shipped nilmbuild/checkpoints/default.pt).")
@source_option()
@house_option
@click.option("--split", default="test", show_default=True, type=click.Choice(["train", "val", "test"]))
@click.option("--batch", default=32, show_default=True, type=click.IntRange(1, 256), help="Example batch size B.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed that picks the example windows.")
@click.option("--samples", default=None, help="Keep only these batch indices in the blob, e.g. 0,3,7.")
@click.option(
    "--names",
    "name_patterns",
    multiple=True,
    help="Keep only records matching this name or glob (repeatable), e.g. 'encoder.0.attn.*'.",
)
@click.option("--no-ablations", is_flag=True, help="Skip the FiLM-off / mask-off / soft-gate runs.")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Blob to write (atomically).")
def capture(checkpoint, source, house, start, end, split, batch, seed, samples, name_patterns, no_ablations, out):
    """Capture every intermediate tensor of the fixed example batch into a msgpack blob.

    Runs the model (eval, hard gate, explicit attention) on a seeded example batch scaled with the
    checkpoint's own scalers, plus the ablation runs, and writes the blob described in docs/format.md.
    Same checkpoint + data + seed gives a byte-identical blob.

    \b
    Examples:
      nilmbuild capture --out build/capture.msgpack
      nilmbuild capture --checkpoint runs/ukdale.pt --source ukdale:data/ukdale --house 1 --out cap.msgpack
      nilmbuild capture --batch 8 --samples 0 --names 'encoder.*.attn.*' --out attn0.msgpack
      nilmbuild inspect cap.msgpack
    """
    from nilmbuild.model.checkpoint import atomic_write_bytes

    from .format import encode

    cap = build_capture(
        checkpoint, source, batch, seed, split=split, house=house, ablations=not no_ablations, span=span_of(start, end)
    )
    idx = None
    if samples:
        try:
            idx = [int(s) for s in samples.split(",") if s.strip()]
        except ValueError:
            raise UserError(f"--samples {samples!r}: give comma-separated batch indices, e.g. 0,3,7") from None
    try:
        blob = encode(cap, names=list(name_patterns) or None, samples=idx)
    except (KeyError, IndexError) as e:
        raise UserError(f"{e.args[0]}: check --names / --samples against `nilmbuild inspect`") from None
    atomic_write_bytes(out, lambda f: f.write(blob))
    click.echo(f"wrote {out}: {len(blob):,} bytes, {len(cap.records)} records, batch {cap.batch_size}")


def _fmt_num(v) -> str:
    return "nan" if v is None or v != v else f"{v:.4g}"


@click.command("inspect")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: meta, groups, records, totals.")
def inspect_cmd(file, as_json):
    """List a capture blob's records: name, shape, axes, encoding, bytes, stats, grouped, with totals.

    \b
    Examples:
      nilmbuild inspect build/capture.msgpack
      nilmbuild inspect build/capture.msgpack --json | python -m json.tool
    """
    from .format import decode
    from .sizes import record_group

    raw = Path(file).read_bytes()
    try:
        reader = decode(raw)
    except Exception as e:  # not msgpack, wrong format, other version
        raise UserError(
            f"{file} is not a readable nilmbuild capture blob ({e}): write one with `nilmbuild capture`"
        ) from None
    rows, groups = [], {}
    for n in reader.names():
        r = reader.record(n)
        nb = reader.nbytes(n)
        g = record_group(n)
        groups.setdefault(g, {"bytes": 0, "records": 0})
        groups[g]["bytes"] += nb
        groups[g]["records"] += 1
        rows.append(
            {
                "name": n,
                "group": g,
                "shape": r["shape"],
                "axes": r["axes"],
                "stage": r["stage"],
                "encoding": r["encoding"] + (f":{r['op']}" if r["encoding"] == "derived" else ""),
                "bytes": nb,
                "stats": r["stats"],
                "err": r.get("err"),
            }
        )
    total = {
        "records": len(rows),
        "data_bytes": sum(g["bytes"] for g in groups.values()),
        "blob_bytes": len(raw),
        "samples": reader.meta.get("samples"),
        "stages": sorted({r["stage"] for r in rows}, key=lambda s: (len(s.rstrip("abcdefgh")), s)),
    }
    if as_json:
        click.echo(
            json.dumps({"meta": reader.meta, "groups": groups, "records": rows, "total": total}, indent=1, default=str)
        )
        return
    w = max(len(r["name"]) for r in rows) if rows else 10
    click.echo(f"{file}: nilmbuild-capture v{reader.version}, samples {total['samples']}, {len(rows)} records")
    head = (
        f"{'name':<{w}}  {'shape':<18} {'axes':<34} {'stg':<4} {'encoding':<30} {'bytes':>9}  "
        f"{'min':>10} {'max':>10} {'mean':>10} {'std':>10} {'err':>8}"
    )
    for g in groups:
        click.echo(f"\n[{g}]  {groups[g]['records']} records, {groups[g]['bytes']:,} bytes")
        click.echo(head)
        for r in rows:
            if r["group"] != g:
                continue
            s = r["stats"]
            click.echo(
                f"{r['name']:<{w}}  {str(tuple(r['shape'])):<18} {','.join(r['axes']):<34} {r['stage']:<4} "
                f"{r['encoding']:<30} {r['bytes']:>9,}  {_fmt_num(s['min']):>10} {_fmt_num(s['max']):>10} "
                f"{_fmt_num(s['mean']):>10} {_fmt_num(s['std']):>10} {_fmt_num(r['err']):>8}"
            )
    click.echo(f"\nstages: {' '.join(total['stages'])}")
    click.echo("groups: " + ", ".join(f"{g} {v['bytes']:,}" for g, v in groups.items()))
    click.echo(f"total: {total['data_bytes']:,} data bytes, {total['blob_bytes']:,} blob bytes, {len(rows)} records")
