"""`nilmbuild info`: the configuration and a parameter table per module."""

from __future__ import annotations

import json

import click

from nilmbuild.cli_options import checkpoint_option

from .config import NILMFormerConfig
from .describe import module_params, stage_groups, traced_names
from .nilmformer import NILMFormer, param_table


@click.command()
@checkpoint_option("Describe this checkpoint's model instead of a fresh one with the spec defaults.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object {params, config} instead of tables.")
def info(checkpoint: str | None, as_json: bool) -> None:
    """Print the model's architecture, configuration, parameters per module and the stages it has.

    The architecture is "spec" (nilmbuild's own model), "condinilm" or "nilmformer" (an imported upstream
    checkpoint, see `nilmbuild import`).

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
    arch = getattr(model.cfg, "arch", "spec")
    if arch != "spec":
        _upstream_info(model, as_json)
        return
    params, cfg = param_table(model), model.cfg.to_dict()
    if as_json:
        stages = stage_groups(traced_names(model))
        click.echo(json.dumps({"architecture": arch, "params": params, "config": cfg, "stages": stages}, indent=2))
        return
    click.echo("Architecture: spec (nilmbuild's NILMFormer, as ../spec describes it)")
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


def _upstream_info(model, as_json: bool) -> None:
    """`info` for an imported CondiNILM / original NILMFormer model."""
    cfg = model.cfg
    params, stages = module_params(model), stage_groups(traced_names(model))
    config = {k: v for k, v in cfg.to_dict().items() if k != "upstream"}
    if as_json:
        out = {"architecture": cfg.arch, "params": params, "config": config, "stages": stages}
        click.echo(json.dumps({**out, "upstream_config": cfg.upstream}, indent=2, default=str))
        return
    click.echo(f"Architecture: {cfg.arch}")
    for k, v in config.items():
        click.echo(f"  {k:<22} {v}")
    click.echo("\nParameters")
    for k, v in params.items():
        click.echo(f"  {k:<32} {v:>10,}")
    if cfg.arch == "condinilm":
        _gate_info(model)
    click.echo("\nStages (record names; {l} = encoder layer, x count)")
    for k, n in stages.items():
        click.echo(f"  {k}" + (f"  x{n}" if n > 1 else ""))


def _gate_info(model) -> None:
    """CondiNILM's external soft gate, per device, with the values its evaluation uses (clamped)."""
    s, f, b = (t.view(-1).tolist() for t in model.criterion.parameters_used())
    floors = model.criterion.gate_logits_floors.tolist()
    click.echo(f"\nSoft gate ({model.cfg.gate_source}): scale, floor, bias, logit floor per device")
    for i, d in enumerate(model.cfg.devices):
        click.echo(f"  {d:<18} {s[i]:>8.4f} {f[i]:>8.4f} {b[i]:>8.4f} {floors[i]:>8}")
