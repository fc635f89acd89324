"""`nilmbuild import` on bad input: one line on stderr that says what to pass, exit code 2, and no OUT file."""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from tests.hostile import RunsCode
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


def _run(tmp_path, ckpt, config, scaler=None, out="out.pt"):
    args = ["import", str(ckpt), "--config", str(config), "--out", str(tmp_path / out)]
    if scaler is not None:
        args += ["--scaler", str(scaler)]
    return CliRunner().invoke(main, args)


def _files(tmp_path, ckpt=None, config=None, scaler=None):
    ckpt = write_torch(
        tmp_path / "last.ckpt", ckpt if ckpt is not None else lightning_checkpoint(placeholder_weights())
    )
    config = write_json(tmp_path / "experiment_config.json", config or condinilm_config())
    scaler = write_json(tmp_path / "scaler.json", scaler or scaler_fields())
    return ckpt, config, scaler


def _one_line_error(tmp_path, result, match: str):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0], result.output
    assert str(tmp_path) not in lines[0] or "does not exist" in lines[0]
    assert not (tmp_path / "out.pt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.pt.")]  # no temp file left either


def test_malicious_checkpoint(tmp_path):
    marker = tmp_path / "MARKER"
    bad = lightning_checkpoint(placeholder_weights())
    bad["loops"] = RunsCode(marker)
    _one_line_error(tmp_path, _run(tmp_path, *_files(tmp_path, ckpt=bad)), "refused to read it")
    assert not marker.exists()


def test_non_torch_file(tmp_path):
    ckpt, config, scaler = _files(tmp_path)
    _one_line_error(tmp_path, _run(tmp_path, config, config, scaler), "experiment_config.json is not a PyTorch file")


def test_unknown_layout(tmp_path):
    files = _files(tmp_path, ckpt={"weights": {"a": torch.zeros(1)}})
    _one_line_error(tmp_path, _run(tmp_path, *files), "unknown checkpoint layout")


def test_config_missing_key(tmp_path):
    cfg = condinilm_config()
    del cfg["app"]
    _one_line_error(tmp_path, _run(tmp_path, *_files(tmp_path, config=cfg)), "has no device list `app`")


def test_scaler_missing_for_a_device(tmp_path):
    scaler = scaler_fields(devices=["kettle", "fridge"])
    _one_line_error(tmp_path, _run(tmp_path, *_files(tmp_path, scaler=scaler)), "no scaler for device washing_machine")


def test_gate_tensors_that_do_not_fit_the_config(tmp_path):
    files = _files(tmp_path, ckpt=lightning_checkpoint(placeholder_weights(), n_devices=2))
    _one_line_error(
        tmp_path,
        _run(tmp_path, *files),
        "criterion.device_weights has 2 values but --config experiment_config.json `app` has 3",
    )


def test_original_log_with_several_devices(tmp_path):
    ckpt = write_torch(tmp_path / "NILMFormer_0.pt", nilmformer_log(placeholder_weights()))
    cfg = nilmformer_config(app=["kettle", "fridge"])
    cfg["scaler"].update(devices=["kettle", "fridge"], appliance_stat1=[0, 0], appliance_stat2=[7000, 7000])
    cfg["cutoff"] = 7000.0
    result = _run(tmp_path, ckpt, write_json(tmp_path / "resolved.json", cfg))
    _one_line_error(tmp_path, result, "one appliance per model")


def test_missing_checkpoint_file(tmp_path):
    _, config, scaler = _files(tmp_path)
    _one_line_error(tmp_path, _run(tmp_path, tmp_path / "nope.ckpt", config, scaler), "nope.ckpt does not exist")


@pytest.mark.parametrize("which", [0, 1, 2])
def test_out_may_not_be_an_input(tmp_path, which):
    files = _files(tmp_path)
    before = files[which].read_bytes()
    result = _run(tmp_path, *files, out=files[which].name)
    assert result.exit_code == 2 and "is one of the input files" in result.output
    assert files[which].read_bytes() == before


def test_out_that_nilmbuild_did_not_write_is_kept(tmp_path):
    files = _files(tmp_path)
    (tmp_path / "out.pt").write_text("my notes")
    result = _run(tmp_path, *files)
    assert result.exit_code == 2 and "exists and is not a nilmbuild checkpoint" in result.output
    assert (tmp_path / "out.pt").read_text() == "my notes"


def test_help_teaches():
    out = CliRunner().invoke(main, ["import", "--help"]).output
    for words in ("last.ckpt", "experiment_config.json", "NILMFormer_<seed>.pt", "docs/upstream-models.md", "Examples"):
        assert words in out
