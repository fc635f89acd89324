"""Small files in the upstreams' own saved layouts, for the import tests (written by hand from reading
../shared/reference/upstream/: CondiNILM's Lightning checkpoint and experiment_config.json, the original
NILMFormer's SeqToSeqTrainer log dict and resolved config, and a UK-DALE house folder as CondiNILM reads it). The weights here are placeholders for the layout
tests; tests that need real weights use tests/fixtures/upstream/ (written by the upstream code itself)."""

from __future__ import annotations

import json
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

DEVICES = ["kettle", "fridge", "washing_machine"]


def condinilm_config(devices=DEVICES, **over) -> dict:
    """The fields of CondiNILM's experiment_config.json that the importer reads, plus a few it keeps as they are."""
    cfg = {
        "data_path": "data/",
        "result_path": "result/UKDALE_1min/128/multi/NILMFormer_0",
        "dataset": "UKDALE",
        "name_model": "NILMFormer",
        "sampling_rate": "1min",
        "window_size": 128,
        "list_exo_variables": ["minute", "hour", "dow", "month"],
        "power_scaling_type": "MaxScaling",
        "appliance_scaling_type": "MaxScaling",
        "app": list(devices),
        "cutoff": 3000.0,
        "threshold": 10,
        "loss_type": "multi_nilm",
        "output_ratio": 0.75,
        "model_kwargs": {"c_out": 1, "kernel_size": 3, "d_model": 128, "n_head": 4, "n_encoder_layers": 4},
    }
    cfg.update(over)
    return cfg


def scaler_fields(devices=DEVICES, stat2=(3000.0, 300.0, 2500.0)) -> dict:
    return {
        "power_scaling_type": "MaxScaling",
        "appliance_scaling_type": "MaxScaling",
        "power_stat1": 0.0,
        "power_stat2": 8000.0,
        "appliance_stat1": [0.0] * len(devices),
        "appliance_stat2": list(stat2)[: len(devices)],
        "devices": list(devices),
    }


def lightning_checkpoint(model_sd: dict, n_devices: int = 3, wrapper: str = "") -> dict:
    """What CondiNILM's Lightning trainer saves: state_dict = model.* + criterion.*, plus Lightning's bookkeeping."""
    sd = OrderedDict((f"model.{wrapper}{k}", v) for k, v in model_sd.items())
    sd["criterion.device_weights"] = torch.ones(n_devices)
    sd["criterion.gate_soft_scales"] = torch.full((n_devices,), 2.0)
    sd["criterion.gate_floors"] = torch.full((n_devices,), 0.015)
    sd["criterion.gate_biases"] = torch.zeros(n_devices)
    return {
        "epoch": 7,
        "global_step": 420,
        "pytorch-lightning_version": "2.4.0",
        "state_dict": sd,
        "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 8, "completed": 7}}}},
        "callbacks": {"ModelCheckpoint{'monitor': 'val_F1', 'mode': 'max'}": {"best_model_score": torch.tensor(0.7)}},
        "optimizer_states": [{"state": {}, "param_groups": [{"lr": 3e-4, "betas": (0.9, 0.999), "params": [0]}]}],
        "lr_schedulers": [{"base_lrs": [3e-4], "last_epoch": 7}],
    }


def nilmformer_log(model_sd: dict, data_parallel: bool = True, best: bool = True) -> dict:
    """What the original NILMFormer's SeqToSeqTrainer saves at the end of training (numpy metrics included)."""
    sd = OrderedDict((("module." if data_parallel else "") + k, v) for k, v in model_sd.items())
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=1e-4).state_dict()
    log = {
        "model_state_dict": sd,
        "optimizer_state_dict": opt,
        "loss_train_history": [np.float64(0.3), np.float64(0.2)],
        "loss_valid_history": [np.float64(0.25), np.float64(0.21)],
        "value_best_loss": np.float64(0.21),
        "epoch_best_loss": 1,
        "time_best_loss": 12.5,
        "training_time": 25.1,
        "test_metrics_timestamp": {"MAE": np.float64(12.0), "F1_SCORE": np.float32(0.8)},
        "test_metrics_win": {"MAE": np.float64(10.0)},
        "test_metrics_yhat": np.arange(6, dtype=np.float32),
        "test_metrics_time": 1.5,
    }
    if best:
        log["best_model_state_dict"] = sd
    return log


def nilmformer_config(app="kettle", **over) -> dict:
    """The original NILMFormer's resolved experiment config (expes.yaml + models.yaml's NILMFormer + the
    appliance's entry + the command line) with the scaler block the docs ask for."""
    cfg = {
        "data_path": "data/",
        "result_path": "result/UKDALE_Kettle_1min/128/NILMFormer_0",
        "dataset": "UKDALE",
        "name_model": "NILMFormer",
        "sampling_rate": "1min",
        "window_size": 128,
        "list_exo_variables": ["minute", "hour", "dow", "month"],
        "power_scaling_type": "MaxScaling",
        "appliance_scaling_type": "SameAsPower",
        "app": app,
        "appliance": "Kettle",
        "seed": 0,
        "model_kwargs": {"c_out": 1, "kernel_size": 3, "d_model": 96, "n_head": 8, "n_encoder_layers": 3},
        "scaler": {
            "power_scaling_type": "MaxScaling",
            "appliance_scaling_type": "SameAsPower",
            "power_stat1": 0.0,
            "power_stat2": 7000.0,
            "appliance_stat1": [0.0],
            "appliance_stat2": [7000.0],
        },
    }
    cfg.update(over)
    return cfg


def placeholder_weights() -> dict:
    return {"EmbedBlock.weight": torch.randn(4, 1, 3), "EmbedBlock.bias": torch.zeros(4)}


def rewrite_pickle(src: Path, dst: Path, old: bytes, new: bytes) -> Path:
    """A copy of a torch.save'd file with `old` replaced by `new` in its pickle (which must contain `old`)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("data.pkl"):
                assert old in data
                data = data.replace(old, new)
            zout.writestr(info, data)
    return dst


def as_saved_on_gpu(src: Path, dst: Path) -> Path:
    """A copy of a torch.save'd file whose storages say "cuda:0", as torch.save writes them on a CUDA machine
    (the location string in the pickle is the only difference)."""
    return rewrite_pickle(src, dst, b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def write_torch(path: Path, obj) -> Path:
    torch.save(obj, path)
    return path


def write_ukdale_house(root: Path, house: int, channels: dict) -> Path:
    """root/house_N in UK-DALE's raw layout: channel_K.dat = (unix seconds, watts) and labels.dat 'K label', for
    channels {label: (seconds, watts)} in the given order (K from 1); -> root."""
    hdir = root / f"house_{house}"
    hdir.mkdir(parents=True)
    for k, (t, w) in enumerate(channels.values(), start=1):
        np.savetxt(hdir / f"channel_{k}.dat", np.column_stack([t, w]), fmt=["%d", "%.2f"])
    (hdir / "labels.dat").write_text("".join(f"{k} {label}\n" for k, label in enumerate(channels, start=1)))
    return root
