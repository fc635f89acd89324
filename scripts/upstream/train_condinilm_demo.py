"""Train a small CondiNILM model with CondiNILM's own training code, on a few weeks of UK-DALE house 2.

This is the recipe of docs/upstream-models.md ("Train a CondiNILM model and explain it"). It runs
CondiNILM's `scripts/run_experiment.py` unchanged (imported from the read-only reference checkout, never
copied), after three preparations that only touch WORK:

1. the monthly 30 s CSVs of `ukdale-house2-30s` are written as UK-DALE's own `house_2/labels.dat` +
   `channel_N.dat` files (unix seconds, watts), the layout CondiNILM's `UKDALE_DataBuilder` reads;
2. CondiNILM's `configs/` are copied to WORK and edited for a short CPU run (small model, few epochs,
   no worker processes);
3. the `NILMscaler` that CondiNILM fits (and keeps only in its pickled data cache) is written as
   `scaler.json` with the fields `nilmbuild import --scaler` takes, by wrapping CondiNILM's
   `launch_models_training` just before it trains.

Run it with a Python that has CondiNILM's dependencies (pytorch-lightning, omegaconf, ...), not nilmbuild's:

    OMP_NUM_THREADS=1 nice -n 19 /work/venv-upstream/bin/python scripts/upstream/train_condinilm_demo.py \\
        --upstream ../shared/reference/upstream/condinilm \\
        --data ../shared/data/ukdale-house2-30s --work /work/upstream-kettle

It prints where CondiNILM wrote `last.ckpt` and `experiment_config.json`. Before training it checks that the
kettle's sparse CNN does not start dead (see kettle_amplitude_alive) and stops, asking for another --init-seed,
if it does.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

# UK-DALE's own appliance names (labels.dat) for the CSV columns of ukdale-house2-30s.
UKDALE_LABELS = {
    "Kettle": "kettle",
    "Dishwasher": "dish_washer",
    "WashingMachine": "washing_machine",
    "Microwave": "microwave",
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--upstream", type=Path, required=True, help="CondiNILM checkout (read only)")
    p.add_argument("--data", type=Path, required=True, help="folder of UKDALE_House2_YYYY-MM.csv.gz")
    p.add_argument("--work", type=Path, required=True, help="where data, configs and results go")
    p.add_argument("--start", default="2013-06-01", help="first day of the data used")
    p.add_argument("--weeks", type=int, default=4, help="weeks of data used")
    p.add_argument("--devices", default="Kettle,Microwave,Dishwasher", help="CondiNILM appliance names")
    p.add_argument("--d-model", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--window", type=int, default=128)
    p.add_argument("--epochs", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate (CondiNILM's tuned 3e-4 is for batch 2048)")
    p.add_argument(
        "--init-seed",
        type=int,
        default=1,  # with the defaults here, seed 0 starts the kettle's CNN dead; 1 starts it alive at 70 % of ON steps
        help="torch seed of the model's initial weights (CondiNILM seeds only after building the model)",
    )
    return p.parse_args()


def read_house(data: Path) -> pd.DataFrame:
    """All CSV rows of ukdale-house2-30s, indexed by time."""
    frames = [pd.read_csv(f, parse_dates=["Time"]) for f in sorted(data.glob("UKDALE_House2_*.csv.gz"))]
    return pd.concat(frames).set_index("Time").sort_index()


def weeks_from(df: pd.DataFrame, start: pd.Timestamp, weeks: int) -> pd.DataFrame:
    return df[(df.index >= start) & (df.index < start + pd.Timedelta(weeks=weeks))]


def write_channel(path: Path, times: np.ndarray, watts: pd.Series) -> None:
    np.savetxt(path, np.column_stack([times, watts.to_numpy(float)]), fmt=["%d", "%.2f"], delimiter=" ")


# CondiNILM refuses a test house that is also a training house, so house 2's week after the training
# weeks is written as the held-out "house 20".
TEST_HOUSE = 20

# Names src/helpers/training.py uses but never imports (defined in src/helpers/experiment.py).
MISSING_IN_TRAINING = (
    "get_model_instance",
    "_get_num_workers",
    "_set_default_thread_env",
    "_dataloader_worker_init",
    "_coerce_appliance_names",
)


def write_ukdale_house(df: pd.DataFrame, root: Path, index: int) -> None:
    """UK-DALE's house layout: labels.dat plus one `unix_seconds watts` file per channel."""
    house = root / "UKDALE" / f"house_{index}"
    house.mkdir(parents=True, exist_ok=True)
    times = np.asarray((df.index - pd.Timestamp("1970-01-01")) // pd.Timedelta(seconds=1))
    labels = ["1 aggregate"]
    write_channel(house / "channel_1.dat", times, df["Aggregate"])
    for i, (column, label) in enumerate(UKDALE_LABELS.items(), start=2):
        labels.append(f"{i} {label}")
        write_channel(house / f"channel_{i}.dat", times, df[column].fillna(0.0))
    (house / "labels.dat").write_text("\n".join(labels) + "\n")


def write_configs(args: argparse.Namespace) -> None:
    """CondiNILM's configs, copied and edited for a short single-thread CPU run."""
    configs = args.work / "configs"
    if configs.exists():
        shutil.rmtree(configs)
    shutil.copytree(args.upstream / "configs", configs)
    expes = yaml.safe_load((configs / "expes.yaml").read_text())
    expes.update(
        data_path=str(args.work / "data"),
        result_path=str(args.work / "result"),
        device="cpu",
        num_workers=0,
        check_val_every_n_epoch=1,
        train_num_crops=1,
        p_es=args.epochs,
        n_warmup_epochs=1,
        # CondiNILM's output-stats path (on by default, std max 0.2) changes its output with the training epoch;
        # nilmbuild imports runs without it
        output_stats_mean_max=0.0,
        output_stats_std_max=0.0,
    )
    expes.pop("prefetch_factor", None)
    (configs / "expes.yaml").write_text(yaml.safe_dump(expes, sort_keys=False))
    models = yaml.safe_load((configs / "models.yaml").read_text())
    kwargs = models["NILMFormer"]["model_kwargs"]
    kwargs.update(d_model=args.d_model, n_encoder_layers=args.layers, n_head=args.heads)
    if getattr(args, "lr", None) is not None:  # (the fixture generators, which train nothing, leave it)
        models["NILMFormer"]["model_training_param"]["lr"] = args.lr
        # dataset_params.yaml's training block overrides models.yaml's lr and expes.yaml's patience for UK-DALE
        params = yaml.safe_load((configs / "dataset_params.yaml").read_text())
        params["UKDALE"]["training"].update(learning_rate=args.lr, early_stopping_patience=args.epochs)
        (configs / "dataset_params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (configs / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))


def scaler_fields(scaler, devices) -> dict:
    """NILMscaler's fitted fields, as `nilmbuild import --scaler` reads them."""

    def floats(v):
        return [float(x) for x in np.ravel(v)]

    return {
        "power_scaling_type": scaler.power_scaling_type,
        "appliance_scaling_type": scaler.appliance_scaling_type,
        "power_stat1": floats(scaler.power_stat1)[0],
        "power_stat2": floats(scaler.power_stat2)[0],
        "appliance_stat1": floats(scaler.appliance_stat1),
        "appliance_stat2": floats(scaler.appliance_stat2),
        "devices": [str(d) for d in devices],
    }


def condinilm_entry(work: Path, upstream: Path):
    """CondiNILM's scripts/run_experiment.py module, runnable from WORK (which holds its configs/): the three
    shims of the module doc, nothing of CondiNILM changed."""
    os.chdir(work)  # CondiNILM reads configs/ and writes data_cache/ relative to the working directory
    if str(upstream) not in sys.path:
        sys.path.insert(0, str(upstream))
    import scripts.run_experiment as rx  # CondiNILM's own entry point

    # CondiNILM's training.py calls helpers that live in experiment.py without importing them.
    import src.helpers.experiment as experiment
    import src.helpers.training as training

    for name in MISSING_IN_TRAINING:
        if not hasattr(training, name):
            setattr(training, name, getattr(experiment, name))
    # pandas 3 hands out read-only arrays, which NILMscaler.transform scales in place: give it a copy.
    if not getattr(rx.NILMscaler.transform, "copies_its_input", False):
        transform = rx.NILMscaler.transform

        def transform_a_copy(self, data):
            return transform(self, np.array(data, copy=True))

        transform_a_copy.copies_its_input = True
        rx.NILMscaler.transform = transform_a_copy
    rx.args = argparse.Namespace(hpo_override=None)  # run_experiment.main reads its CLI namespace
    return rx


def main_kwargs(args: argparse.Namespace) -> dict:
    """The arguments of CondiNILM's run_experiment.main for this run."""
    return dict(
        dataset="UKDALE",
        sampling_rate="1min",
        window_size=str(args.window),
        appliance=args.devices,
        name_model="NILMFormer",
        resume=False,
        no_final_eval=False,
        epochs=args.epochs,
        batch_size=args.batch_size,
        ind_house_train_val=[2],
        ind_house_test=[TEST_HOUSE],
        experiment_tag="demo",
    )


def kettle_amplitude_alive(model, tuple_data, devices: list[str]) -> float | None:
    """The share of the training data's kettle-ON steps at which the kettle's sparse CNN gives a non-zero amplitude.

    CondiNILM's kettle CNN (SimpleDeviceHead) starts with zero biases and ends in `ReLU(power) * scale`, so the
    sign of its output depends only on the input's shape: for about a third of random initial weights it is
    negative at every kettle step, the ReLU passes no gradient, and the kettle never learns (the 8-epoch run
    of the first recipe: amplitude > 0 at 0.002 % of training steps, kettle F1 0.0). None when the run has no
    kettle CNN (CondiNILM builds it for a kettle among two or more devices).
    """
    import torch

    if len(devices) < 2 or "kettle" not in devices:
        return None
    train = torch.as_tensor(np.asarray(tuple_data[0], dtype=np.float32))
    on = train[:, 1 + devices.index("kettle"), 1, :] > 0
    with torch.no_grad():
        amp, _ = model.sparse_cnn.forward_device(train[:, :1, 0, :], 0, use_hard_gate=False, return_ungated=True)
    return float((amp[:, 0][on] > 0).float().mean())


def check_kettle_then(train_fn, args: argparse.Namespace):
    """CondiNILM's nilm_model_training, after checking that the kettle CNN's initial amplitude is alive."""

    def checked(model, tuple_data, scaler, expes_config):
        alive = kettle_amplitude_alive(model, tuple_data, [str(d).lower() for d in expes_config.app])
        if alive is not None:
            print(f"kettle CNN amplitude > 0 at {alive:.1%} of kettle-ON training steps (init seed {args.init_seed})")
            if alive < 0.5:
                raise SystemExit("the kettle's CNN starts dead (ReLU output 0): pass another --init-seed")
        return train_fn(model, tuple_data, scaler, expes_config)

    return checked


def check_cache(args: argparse.Namespace) -> None:
    """CondiNILM's data cache is keyed by devices, houses, rate and window but not by the weeks: refuse a WORK
    whose cache may hold other weeks than the ones written now."""
    span = {"start": args.start, "weeks": args.weeks}
    marker = args.work / "span.json"
    cached = any((args.work / "data_cache").glob("*.pt"))
    if cached and (not marker.is_file() or json.loads(marker.read_text()) != span):
        raise SystemExit(f"{args.work / 'data_cache'} may hold other weeks than {span}: use a fresh --work")
    marker.write_text(json.dumps(span))


def run_condinilm(args: argparse.Namespace) -> None:
    """CondiNILM's run_experiment.main, with its scaler written to WORK/scaler.json before training and the
    kettle CNN's initial output checked."""
    import torch

    torch.set_num_threads(1)
    rx = condinilm_entry(args.work, args.upstream.resolve())
    import src.helpers.training as training  # importable once condinilm_entry has put CondiNILM on sys.path

    training.nilm_model_training = check_kettle_then(training.nilm_model_training, args)
    launch = rx.launch_models_training

    def launch_and_record_scaler(tuple_data, scaler, expes_config):
        fields = scaler_fields(scaler, list(expes_config.app))
        (args.work / "scaler.json").write_text(json.dumps(fields, indent=2))
        return launch(tuple_data, scaler, expes_config)

    rx.launch_models_training = launch_and_record_scaler
    # CondiNILM seeds torch (seed 42, locked) only once the model is built, so its initial weights come from
    # torch's default generator: seed that, so that a run is repeatable.
    torch.manual_seed(args.init_seed)
    rx.main(**main_kwargs(args))


def main() -> None:
    args = parse_args()
    args.upstream = args.upstream.resolve()
    args.data = args.data.resolve()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    check_cache(args)
    df, start = read_house(args.data), pd.Timestamp(args.start)
    write_ukdale_house(weeks_from(df, start, args.weeks), args.work / "data", 2)
    held_out = start + pd.Timedelta(weeks=args.weeks)
    write_ukdale_house(weeks_from(df, held_out, 1), args.work / "data", TEST_HOUSE)
    write_configs(args)
    run_condinilm(args)
    for name in ("last.ckpt", "experiment_config.json"):
        for found in sorted((args.work / "result").rglob(name)):
            print(found)
    print(args.work / "scaler.json")


if __name__ == "__main__":
    main()
