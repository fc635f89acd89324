"""model/checkpoint.py: what a load hands back, field by field, and how each kind of bad file is refused (the
mutants of docs/testing.md that the round-trip and security tests left alive)."""

from __future__ import annotations

import hashlib
import os
import pickle

import pytest
import torch

from nilmbuild import __version__
from nilmbuild.errors import UserError
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint, update_extra
from tests.hostile import ExecsCode

SMALL = {"d_model": 16, "n_head": 2, "head_dim": 8, "window": 48, "n_encoder_layers": 1}


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(**SMALL))
    path = tmp_path / "new" / "folder" / "m.pt"  # folders that do not exist yet
    kw = {
        "scalers": {"aggregate": {"kind": "max", "max": 6000.0}},
        "train_log": {"epochs": [1, 2]},
        "provenance": {"source": "synthetic"},
        "extra": {"note": "x"},
    }
    save_checkpoint(path, model, **kw)
    return path, model, kw


def test_every_field_comes_back_and_the_model_is_ready_for_inference(saved):
    path, model, kw = saved
    got = load_checkpoint(path)
    assert (got.scalers, got.train_log, got.provenance, got.extra) == tuple(kw.values())
    assert got.nilmbuild_version == __version__ and got.path == str(path) and got.architecture == "spec"
    assert got.fingerprint == hashlib.sha256(path.read_bytes()).hexdigest()
    assert not got.model.training  # eval mode: dropout off, the hard gate
    assert got.cfg.to_dict() == model.cfg.to_dict()
    for k, v in model.state_dict().items():
        assert torch.equal(got.model.state_dict()[k], v), k
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    u = os.umask(0)
    os.umask(u)
    return u


def test_update_extra_keeps_the_weights_and_the_other_entries(saved):
    path, model, _ = saved
    update_extra(path, "calibration", {"kettle": 0.3})
    got = load_checkpoint(path)
    assert got.extra == {"note": "x", "calibration": {"kettle": 0.3}}
    for k, v in model.state_dict().items():
        assert torch.equal(got.model.state_dict()[k], v), k


def test_update_extra_never_unpickles_a_file_freely(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"format": "nilmbuild-checkpoint", "format_version": 1, "extra": ExecsCode(marker)}, path)
    with pytest.raises(UserError):
        update_extra(path, "k", 1)
    assert not marker.exists()


@pytest.mark.parametrize(
    "payload,match",
    [
        ({"format": "other"}, "is not a nilmbuild checkpoint"),
        ([1, 2], "is not a nilmbuild checkpoint"),
        ({"format": "nilmbuild-checkpoint"}, "format version None"),
        ({"format": "nilmbuild-checkpoint", "format_version": 1, "config": {}}, "do not match its config"),
        (
            {"format": "nilmbuild-checkpoint", "format_version": 1, "architecture": "toaster", "config": {}},
            "do not match its config",
        ),
    ],
)
def test_refusals_are_one_line(tmp_path, payload, match):
    path = tmp_path / "x.pt"
    torch.save(payload, path)
    with pytest.raises(UserError, match=match) as e:
        load_checkpoint(path)
    assert "\n" not in str(e.value)


def test_a_plain_pickle_is_refused_without_running(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "plain.pt"
    path.write_bytes(pickle.dumps({"format": "nilmbuild-checkpoint", "x": ExecsCode(marker)}))
    with pytest.raises(UserError, match="corrupt or truncated"):
        load_checkpoint(path)
    assert not marker.exists()


def test_an_unknown_architecture_is_refused_even_with_a_valid_upstream_config(tmp_path):
    from pathlib import Path

    from nilmbuild.importer.run import import_upstream

    fx = Path(__file__).resolve().parent / "fixtures" / "upstream" / "nilmformer_small"
    out = tmp_path / "imported.pt"
    import_upstream(fx / "NILMFormer_0.pt", fx / "config.json", None, out)
    assert load_checkpoint(out).architecture == "nilmformer"
    payload = torch.load(out, weights_only=True)
    payload["architecture"] = "toaster"
    torch.save(payload, out)
    with pytest.raises(UserError, match="do not match its config"):
        load_checkpoint(out)


def test_a_failed_write_raises_and_leaves_the_old_file_and_no_temp_file(tmp_path):
    from nilmbuild.model.checkpoint import atomic_write_bytes

    path = tmp_path / "m.pt"
    path.write_bytes(b"old")

    def fail(f):
        f.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(path, fail)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.pt"]


def test_update_extras_own_read_is_weights_only_too(tmp_path, monkeypatch):
    """update_extra checks the file with load_checkpoint, then reads it again to rewrite it. A file swapped in
    between (simulated: the check passes) must still not run code on that second read."""
    import nilmbuild.model.checkpoint as ck

    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    torch.save({"format": "nilmbuild-checkpoint", "format_version": 1, "extra": ExecsCode(marker)}, path)
    monkeypatch.setattr(ck, "load_checkpoint", lambda p: None)
    with pytest.raises(pickle.UnpicklingError):
        ck.update_extra(path, "k", 1)
    assert not marker.exists()


def test_a_file_without_architecture_is_a_spec_model_and_missing_weights_are_refused(saved, tmp_path):
    path, model, _ = saved
    payload = torch.load(path, weights_only=True)
    del payload["architecture"]  # files written before upstream models existed
    torch.save(payload, tmp_path / "old.pt")
    assert load_checkpoint(tmp_path / "old.pt").architecture == "spec"
    first = next(iter(payload["state_dict"]))
    del payload["state_dict"][first]
    torch.save(payload, tmp_path / "short.pt")
    with pytest.raises(UserError, match="do not match its config"):
        load_checkpoint(tmp_path / "short.pt")
