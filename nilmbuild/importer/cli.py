"""`nilmbuild import`: turn a CondiNILM or original NILMFormer checkpoint into a nilmbuild checkpoint."""

from __future__ import annotations

import click

IMPORT_HELP = """Import a model trained with CondiNILM or the original NILMFormer, so nilmbuild can explain it.

\b
UPSTREAM_CKPT is detected by itself:
  CondiNILM            last.ckpt, ckpt_epoch=NNN.ckpt or best_f1_epoch=NNN.ckpt
                       (checkpoint/<dataset>_<rate>/<window>/<appliance>/NILMFormer_<seed>/)
  original NILMFormer  the trainer's log result/<dataset>_<appliance>_<rate>/<window>/NILMFormer_<seed>.pt

\b
--config is the run's configuration:
  CondiNILM            the experiment_config.json it wrote next to its results
  original NILMFormer  the resolved experiment config (configs/*.yaml + command line) as JSON or YAML,
                       with a `scaler` block of the NILMscaler's fields
--scaler is a JSON of the NILMscaler's fields (power_scaling_type, appliance_scaling_type, power_stat1,
power_stat2, appliance_stat1, appliance_stat2, devices); CondiNILM keeps its scaler only in a pickled cache,
which nilmbuild never opens. docs/upstream-models.md shows the few lines that write both files.

\b
--source ukdale:PATH refits CondiNILM's scaler instead, as its run_experiment.py fits it: PATH is the UK-DALE
folder it trained on (house_N/labels.dat + channel_N.dat, or its data_path holding UKDALE/). Everything else
comes from experiment_config.json: the houses (ind_house_train_val), sampling_rate, window_size, overlap, seed
and the scaling types. UK-DALE runs only; give --scaler or --source, not both.

\b
Files are read with PyTorch's weights-only loader: nothing in them is ever run. OUT is written only when
everything fits, and records each input's file name and sha256, the format, the architecture and the whole
config. The device order is the config's `app`; its names become nilmbuild's (WashingMachine ->
washing_machine, Dishwasher -> dishwasher), the upstream's kept in the provenance.

\b
Examples:
  nilmbuild import last.ckpt --config experiment_config.json --scaler scaler.json --out condinilm.pt
  nilmbuild import last.ckpt --config experiment_config.json --source ukdale:data/UKDALE --out condinilm.pt
  nilmbuild import result/UKDALE_Kettle_1min/128/NILMFormer_0.pt --config resolved.yaml --out kettle.pt
  nilmbuild site -c condinilm.pt
"""


@click.command(help=IMPORT_HELP)
@click.argument("upstream_ckpt", type=click.Path(dir_okay=False))
@click.option("--config", "config", required=True, type=click.Path(dir_okay=False), help="The run's config.")
@click.option(
    "--scaler",
    type=click.Path(dir_okay=False),
    default=None,
    help="JSON of the NILMscaler's fields (default: the config's `scaler` block).",
)
@click.option(
    "--source",
    "-s",
    default=None,
    metavar="ukdale:PATH",
    help="Refit CondiNILM's scaler from the UK-DALE folder it trained on (instead of --scaler).",
)
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="The nilmbuild checkpoint to write.")
def import_cmd(upstream_ckpt: str, config: str, scaler: str | None, source: str | None, out: str) -> None:
    from .run import import_upstream

    got = import_upstream(upstream_ckpt, config, scaler, out, source=source)
    click.echo(f"{got.format} -> architecture {got.architecture}")
    shown = [d if d == u else f"{d} (upstream {u})" for d, u in zip(got.devices, got.upstream_devices, strict=True)]
    click.echo(f"  devices  {', '.join(shown)}")
    click.echo(f"  window   {got.window} steps of {got.step_s} s")
    click.echo(f"wrote {got.out}; explain it with: nilmbuild site -c {got.out}")
