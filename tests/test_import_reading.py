"""nilmbuild import, reading and detection: upstream files are read weights-only (numpy allowed exactly as far as
the original NILMFormer's log needs), a pickle that would run code is refused before it runs, and each upstream's
layout is recognised with its prefixes stripped."""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest
import torch

from nilmbuild.errors import UserError
from nilmbuild.importer.detect import CONDINILM, NILMFORMER, detect
from nilmbuild.importer.reading import file_identity, read_torch_file
from tests.hostile import RunsCode
from tests.upstream_files import (
    as_saved_on_gpu,
    lightning_checkpoint,
    nilmformer_log,
    placeholder_weights,
    rewrite_pickle,
    write_torch,
)


def test_lightning_checkpoint_detected_with_prefixes_stripped(tmp_path):
    w = placeholder_weights()
    path = write_torch(tmp_path / "last.ckpt", lightning_checkpoint(w, wrapper="_orig_mod."))
    up = detect(read_torch_file(path), path.name)
    assert (up.format, up.architecture, up.weights_key) == (CONDINILM, "condinilm", "state_dict")
    assert sorted(up.state_dict) == sorted(w)  # `model.` and torch.compile's `_orig_mod.` gone
    assert torch.equal(up.state_dict["EmbedBlock.weight"], w["EmbedBlock.weight"])
    assert sorted(up.criterion) == ["device_weights", "gate_biases", "gate_floors", "gate_soft_scales"]
    assert torch.allclose(up.criterion["gate_floors"], torch.full((3,), 0.015))
    assert up.meta == {"epoch": 7, "global_step": 420, "pytorch-lightning_version": "2.4.0"}


def test_original_log_with_numpy_values_read_weights_only(tmp_path):
    w = placeholder_weights()
    path = write_torch(tmp_path / "NILMFormer_0.pt", nilmformer_log(w))
    with pytest.raises(Exception, match="Weights only load failed"):  # plain weights-only refuses this file
        torch.load(path, weights_only=True)
    payload = read_torch_file(path)
    assert payload["value_best_loss"] == np.float64(0.21)
    assert payload["test_metrics_yhat"].tolist() == [0, 1, 2, 3, 4, 5]
    up = detect(payload, path.name)
    assert (up.format, up.architecture, up.weights_key, up.criterion) == (
        NILMFORMER,
        "nilmformer",
        "best_model_state_dict",
        None,
    )
    assert sorted(up.state_dict) == sorted(w)  # DataParallel's `module.` gone
    assert up.meta["value_best_loss"] == 0.21 and up.meta["epoch_best_loss"] == 1
    assert (CONDINILM, NILMFORMER) == ("condinilm-lightning", "nilmformer-log")  # the names provenance records


def test_log_saved_before_training_ended_uses_model_state_dict(tmp_path):
    path = write_torch(tmp_path / "NILMFormer_0.pt", nilmformer_log(placeholder_weights(), best=False))
    up = detect(read_torch_file(path), path.name)
    assert up.weights_key == "model_state_dict" and "EmbedBlock.bias" in up.state_dict


def test_numpy1_module_names_are_read_too(tmp_path):
    """A log written under numpy < 2 names numpy.core.multiarray; the same bytes otherwise."""
    src = write_torch(tmp_path / "np2.pt", nilmformer_log(placeholder_weights()))
    old = rewrite_pickle(src, tmp_path / "np1.pt", b"numpy._core.multiarray", b"numpy.core.multiarray")
    assert read_torch_file(old)["value_best_loss"] == np.float64(0.21)


def test_gpu_tensors_map_to_cpu(tmp_path):
    """A checkpoint saved on a GPU names its storages' location "cuda:0"; it is read onto the CPU."""
    src = write_torch(tmp_path / "cpu.ckpt", lightning_checkpoint(placeholder_weights()))
    gpu = as_saved_on_gpu(src, tmp_path / "gpu.ckpt")
    with pytest.raises(RuntimeError, match="CUDA"):  # what a plain load does on this CPU-only machine
        torch.load(gpu, weights_only=True)
    up = detect(read_torch_file(gpu), gpu.name)
    assert all(v.device.type == "cpu" for v in up.state_dict.values())


@pytest.mark.parametrize("how", ["torch.save", "pickle.dump"])
def test_malicious_pickle_refused_before_it_runs(tmp_path, how):
    marker = tmp_path / "MARKER"
    path = tmp_path / "last.ckpt"
    payload = {"state_dict": {"model.x": torch.zeros(1)}, "epoch": RunsCode(marker)}
    if how == "torch.save":
        torch.save(payload, path)
    else:
        path.write_bytes(pickle.dumps(payload, protocol=2))
    with pytest.raises(UserError, match="refused to read it") as e:
        read_torch_file(path)
    assert "\n" not in str(e.value)
    assert not marker.exists()
    pickle.loads(pickle.dumps(RunsCode(tmp_path / "CONTROL")))  # the same object, freely unpickled, does run
    assert (tmp_path / "CONTROL").exists()


def test_non_torch_file_one_line(tmp_path):
    path = tmp_path / "experiment_config.json"
    path.write_text('{"app": ["kettle"]}')
    with pytest.raises(UserError, match="is not a PyTorch file") as e:
        read_torch_file(path)
    assert "\n" not in str(e.value) and str(tmp_path) not in str(e.value)


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ([1, 2], "holds a list"),
        ({"weights": {}}, "top-level keys are weights"),
        ({"state_dict": {"net.w": torch.zeros(1)}}, "no `model.\\*` keys"),
        ({"state_dict": {"model.w": "not a tensor"}}, "non-tensor entries"),
        ({"best_model_state_dict": {}}, "is empty"),
        ({"format": "nilmbuild-checkpoint"}, "already a nilmbuild checkpoint"),
    ],
)
def test_unknown_layouts_one_line(payload, match):
    with pytest.raises(UserError, match=match) as e:
        detect(payload, "x.ckpt")
    assert "\n" not in str(e.value)


def test_file_identity_is_name_and_sha256(tmp_path):
    path = tmp_path / "sub" / "last.ckpt"
    path.parent.mkdir()
    path.write_bytes(b"abc")
    ident = file_identity(path)
    assert ident == {"name": "last.ckpt", "sha256": hashlib.sha256(b"abc").hexdigest(), "bytes": 3}
    assert ident["sha256"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2 "abc"


@pytest.mark.parametrize(
    "dtype",
    [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32]
    + [np.uint64, np.bool_, np.longlong, np.ulonglong],
)
def test_every_numeric_numpy_dtype_of_a_log_is_read(tmp_path, dtype):
    """A log's metrics may be arrays and scalars of any numeric dtype: each reads back, weights-only."""
    path = write_torch(tmp_path / "log.pt", {"a": np.arange(3).astype(dtype), "s": np.arange(2).astype(dtype)[1]})
    got = read_torch_file(path)
    assert got["a"].dtype == np.dtype(dtype) and got["a"].tolist() == np.arange(3).astype(dtype).tolist()
    assert got["s"] == np.arange(2).astype(dtype)[1]


def test_an_object_array_is_refused(tmp_path):
    path = write_torch(tmp_path / "log.pt", {"a": np.array([{"x": 1}], dtype=object)})
    with pytest.raises(UserError, match="refused to read it"):
        read_torch_file(path)


def test_a_plain_pickle_of_a_newer_protocol_is_refused_without_torchs_warning(tmp_path):
    import warnings

    marker = tmp_path / "MARKER"
    path = tmp_path / "last.ckpt"
    path.write_bytes(pickle.dumps({"state_dict": {}, "epoch": RunsCode(marker)}, protocol=4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(UserError, match="last.ckpt"):
            read_torch_file(path)
    assert not [w for w in caught if "pickle protocol" in str(w.message)] and not marker.exists()


def test_bookkeeping_values_become_plain_numbers():
    """numpy and one-element tensor scalars in the log become int/float in the provenance (never their repr)."""
    payload = {
        "best_model_state_dict": {"w": torch.zeros(1)},
        "epoch_best_loss": np.int64(3),
        "value_best_loss": torch.tensor(0.5),
        "training_time": np.float32(25.5),
    }
    meta = detect(payload, "NILMFormer_0.pt").meta
    assert meta == {"epoch_best_loss": 3, "value_best_loss": 0.5, "training_time": 25.5}
    assert type(meta["epoch_best_loss"]) is int and type(meta["value_best_loss"]) is float


def test_other_bookkeeping_values_are_kept_as_short_text():
    payload = {"state_dict": {"model.w": torch.zeros(1)}, "epoch": None, "global_step": list(range(100))}
    meta = detect(payload, "last.ckpt").meta
    assert meta["epoch"] is None
    assert meta["global_step"] == str(list(range(100)))[:200] and len(meta["global_step"]) == 200
