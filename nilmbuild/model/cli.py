"""`nilmbuild info`: the configuration and a parameter table per module."""

from __future__ import annotations

import json

import click

from nilmbuild.cli_options import checkpoint_option

from .config import NILMFormerConfig
from .nilmformer import NILMFormer, param_table


@click.command()
@checkpoint_option("Describe this checkpoint's model instead of a fresh one with the spec defaults.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object {params, config} instead of tables.")
def info(checkpoint: str | None, as_json: bool) -> None:
    """Print the NILMFormer configuration and its parameters per module.

    \b
    Examples:
      nilmbuild info
      nilmbuild info --json | python -m json.tool
      nilmbuild info --checkpoint runs/ukdale.pt
    """
    if checkpoint:
        from .checkpoint import load_checkpoint

        model = load_checkpoint(checkpoint).model
    else:
        model = NILMFormer(NILMFormerConfig())
    params, cfg = param_table(model), model.cfg.to_dict()
    if as_json:
        click.echo(json.dumps({"params": params, "config": cfg}, indent=2))
        return
    click.echo("NILMFormer configuration")
    for k, v in cfg.items():
        if k != "devices":
            click.echo(f"  {k:<20} {v}")
    click.echo("  devices")
    for d in model.cfg.devices:
        click.echo(f"    {d.name:<18} head={d.head:<8} gate_threshold={d.gate_threshold}")
    click.echo("\nParameters")
    rows = [(k, v) for k, v in params.items() if k not in ("heads", "total")]
    rows += [(f"head: {k}", v) for k, v in params["heads"].items()]
    for k, v in rows:
        click.echo(f"  {k:<24} {v:>10,}")
    click.echo(f"  {'total':<24} {params['total']:>10,}")
    click.echo("\n  encoder_layer = 2 LayerNorms (192 each) + attention 4 x 96 x 96 (36,864) + FFN (74,208)")
