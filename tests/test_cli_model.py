"""`nilmbuild info` and checkpoint loading errors, through the real CLI."""

import json

import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.errors import UserError
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint


def test_info_json_has_the_spec_numbers():
    r = CliRunner().invoke(main, ["info", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    p = d["params"]
    assert p["encoder_layer"] == 111_456 and p["input_projection"] == 864 and p["pos_encoding"] == 3_840
    assert set(p["heads"]) == {"kettle", "microwave", "fridge", "dishwasher", "washing_machine"}
    assert p["total"] == sum(
        v
        for k, v in p.items()
        if k in ("embedding", "pos_encoding", "input_projection", "encoder_layers", "encoder_film", "decoder_film")
    ) + sum(p["heads"].values())
    assert d["config"]["d_model"] == 96 and d["config"]["n_head"] == 8


def test_help_teaches_with_examples():
    r = CliRunner().invoke(main, ["--help"])
    assert r.exit_code == 0 and "nilmbuild site" in r.output
    names = main.list_commands(None)
    assert "site" in names and "train" in names and "explain" in names and "import" in names and len(names) == 13
    for cmd in names:
        r = CliRunner().invoke(main, [cmd, "--help"])
        assert r.exit_code == 0, cmd
        assert "Example" in r.output or "example" in r.output, f"`nilmbuild {cmd} --help` shows no example"


@pytest.fixture
def ckpt(tmp_path):
    torch.manual_seed(0)
    m = NILMFormer(NILMFormerConfig())
    path = tmp_path / "m.pt"
    save_checkpoint(path, m, scalers={"aggregate": {"kind": "max", "max": 6000.0}}, provenance={"source": "test"})
    return path, m


def test_checkpoint_round_trip(ckpt):
    path, m = ckpt
    loaded = load_checkpoint(path)
    for k, v in m.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[k], v)
    assert loaded.scalers["aggregate"]["max"] == 6000.0 and loaded.devices[0] == "kettle"


def test_truncated_checkpoint_is_one_line_error(ckpt, tmp_path):
    path, _ = ckpt
    bad = tmp_path / "bad.pt"
    bad.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(UserError, match="corrupt or truncated"):
        load_checkpoint(bad)
    r = CliRunner().invoke(main, ["info", "--checkpoint", str(bad)])
    assert r.exit_code == 2 and "corrupt or truncated" in r.output and "Traceback" not in r.output


def test_other_version_and_mismatched_config(ckpt, tmp_path):
    path, m = ckpt
    payload = torch.load(path, weights_only=True)
    payload["format_version"] = 99
    torch.save(payload, tmp_path / "v99.pt")
    with pytest.raises(UserError, match="format version 99"):
        load_checkpoint(tmp_path / "v99.pt")
    payload["format_version"] = 1
    payload["config"]["d_model"] = 48
    payload["config"]["head_dim"] = 6
    torch.save(payload, tmp_path / "mismatch.pt")
    with pytest.raises(UserError, match="do not match its config"):
        load_checkpoint(tmp_path / "mismatch.pt")
    with pytest.raises(UserError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.pt")


def test_saved_files_get_normal_permissions(tmp_path):
    import os

    from nilmbuild.model.checkpoint import atomic_write_bytes

    umask = os.umask(0o022)
    try:
        atomic_write_bytes(tmp_path / "x.bin", lambda f: f.write(b"abc"))
    finally:
        os.umask(umask)
    assert (tmp_path / "x.bin").read_bytes() == b"abc"
    assert (tmp_path / "x.bin").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]  # no temp file left behind
