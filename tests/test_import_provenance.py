"""What an imported checkpoint records about where it came from: names and sha256 of the inputs (never a local
path), the format, the architecture, the whole config, what was derived, and nothing a weights-only reader refuses."""

from __future__ import annotations

import hashlib
import io
import json

import torch

from nilmbuild.importer.detect import detect
from nilmbuild.importer.provenance import import_provenance
from nilmbuild.importer.reading import read_torch_file
from nilmbuild.importer.upstream_config import read_config
from tests.upstream_files import (
    condinilm_config,
    lightning_checkpoint,
    nilmformer_config,
    nilmformer_log,
    placeholder_weights,
    scaler_fields,
    write_json,
    write_torch,
)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_condinilm_provenance(tmp_path):
    (tmp_path / "run dir").mkdir()
    ckpt = write_torch(tmp_path / "run dir" / "best_f1_epoch=041.ckpt", lightning_checkpoint(placeholder_weights()))
    config = write_json(tmp_path / "experiment_config.json", condinilm_config())
    scaler = write_json(tmp_path / "scaler.json", scaler_fields())
    up, cfg = detect(read_torch_file(ckpt), ckpt.name), read_config(config)
    prov = import_provenance(up, cfg, checkpoint=ckpt, config=config, scaler=scaler, scaler_from="scaler.json")
    u = prov["upstream"]
    assert (u["format"], u["architecture"], u["weights_key"]) == ("condinilm-lightning", "condinilm", "state_dict")
    assert u["files"]["checkpoint"] == {
        "name": "best_f1_epoch=041.ckpt",
        "sha256": _sha(ckpt),
        "bytes": ckpt.stat().st_size,
    }
    assert u["files"]["config"]["sha256"] == _sha(config) and u["files"]["scaler"]["sha256"] == _sha(scaler)
    assert u["config"] == condinilm_config() and u["devices"] == ["kettle", "fridge", "washing_machine"]
    assert u["criterion"] == ["device_weights", "gate_biases", "gate_floors", "gate_soft_scales"]
    assert u["derived"] == {"step_s": 60, "window": 128} and prov["prep"] == {
        "resample_s": 60,
        "window": 128,
        "devices": ["kettle", "fridge", "washing_machine"],
    }
    assert prov["command"] == (
        "nilmbuild import best_f1_epoch=041.ckpt --config experiment_config.json --scaler scaler.json"
    )
    assert str(tmp_path) not in json.dumps(prov)  # names, never local paths


def test_original_provenance_is_weights_only_readable(tmp_path):
    ckpt = write_torch(tmp_path / "NILMFormer_0.pt", nilmformer_log(placeholder_weights()))
    config = write_json(tmp_path / "NILMFormer_0_config.json", nilmformer_config(sampling_rate="10s"))
    up, cfg = detect(read_torch_file(ckpt), ckpt.name), read_config(config)
    prov = import_provenance(up, cfg, checkpoint=ckpt, config=config, scaler=None, scaler_from="x.json:scaler")
    assert prov["upstream"]["files"]["scaler"] == {"from": "x.json:scaler"}
    assert prov["upstream"]["meta"] == {"epoch_best_loss": 1, "value_best_loss": 0.21, "training_time": 25.1}
    assert prov["prep"]["resample_s"] == 10
    buf = io.BytesIO()
    torch.save({"provenance": prov}, buf)
    buf.seek(0)
    assert torch.load(buf, weights_only=True)["provenance"] == prov  # plain values only: no numpy left in it
    assert str(tmp_path) not in json.dumps(prov)
