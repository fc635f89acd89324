"""A device name outside DEVICE_NAMES is a one-line error that names the allowed devices, wherever it comes in:
`prepare()`'s PrepConfig, `nilmbuild train --devices`, or a checkpoint whose devices the data side has no labels
for (an imported model whose config's `app` says "Kettle")."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.data import DEVICE_NAMES, PrepConfig, load_source, prepare
from nilmbuild.errors import UserError
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import save_checkpoint
from nilmbuild.model.config import DeviceSpec


def _one_line_naming_the_devices(text: str, bad: str) -> None:
    line = text.strip()
    assert "\n" not in line and "Traceback" not in line, text
    assert bad in line and all(d in line for d in DEVICE_NAMES), line


def test_prepare_refuses_an_unknown_device_in_one_line():
    hh = load_source("synthetic", days=1, seed=0)
    with pytest.raises(UserError) as e:
        prepare(hh, PrepConfig(window=48, stride=24, devices=("kettle", "toaster")))
    _one_line_naming_the_devices(str(e.value), "'toaster'")


def test_train_devices_flag(tmp_path):
    r = CliRunner().invoke(
        main, ["train", "--days", "2", "--devices", "kettle,toaster", "--out", str(tmp_path / "m.pt")]
    )
    assert r.exit_code == 2, r.output
    _one_line_naming_the_devices(r.output.replace("Error: ", ""), "toaster")


def test_a_checkpoint_whose_devices_the_data_side_does_not_know(tmp_path):
    """Such a checkpoint (here a spec model with a "Kettle" head) gives one line from every command that prepares
    its data, not a KeyError traceback."""
    torch.manual_seed(0)
    cfg = NILMFormerConfig(
        d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=1, devices=(DeviceSpec("Kettle"),)
    )
    path = tmp_path / "odd.pt"
    prov = {"source": "synthetic", "days": 2, "seed": 0, "prep": {"window": 48, "stride": 24, "devices": ["Kettle"]}}
    scalers = {"aggregate": {"kind": "max", "max": 6000.0}, "appliances": {"Kettle": {"kind": "max", "max": 3000.0}}}
    save_checkpoint(path, NILMFormer(cfg), scalers=scalers, provenance=prov)
    for args in (["evaluate"], ["capture", "--out", str(tmp_path / "cap.msgpack")]):
        r = CliRunner().invoke(main, [*args, "--checkpoint", str(path)])
        assert r.exit_code == 2, (args, r.output)
        _one_line_naming_the_devices(r.output.replace("Error: ", ""), "'Kettle'")
