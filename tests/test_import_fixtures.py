"""`nilmbuild import` on checkpoints the upstream code wrote itself (tests/fixtures/upstream/, made by its
generate.py from ../shared/reference/upstream/): the imported model's run_window equals the upstream evaluation's
watts, the devices are the config's `app`, the file records where it came from, and files edited the ways users'
files go wrong fail with one line and write nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.importer.reading import read_torch_file
from nilmbuild.model.checkpoint import load_checkpoint
from tests.upstream_files import as_saved_on_gpu

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "reference.npz").is_file()) if FIXTURES.is_dir() else []


def _files(name: str) -> tuple[Path, Path, Path | None]:
    d = FIXTURES / name
    if (d / "last.ckpt").is_file():
        return d / "last.ckpt", d / "experiment_config.json", d / "scaler.json"
    return d / "NILMFormer_0.pt", d / "config.json", None


def _import(tmp_path, ckpt, config, scaler=None, out="out.pt"):
    args = ["import", str(ckpt), "--config", str(config), "--out", str(tmp_path / out)]
    if scaler is not None:
        args += ["--scaler", str(scaler)]
    return CliRunner().invoke(main, args)


def _assert_matches_upstream(model, ref, key="output_w"):
    for i in range(ref["watts"].shape[0]):
        out = model.run_window(ref["watts"][i], str(ref["starts"][i]))
        for j, d in enumerate(model.devices):
            want = ref[key][i, j]
            tol = max(0.05, 1e-4 * float(np.abs(want).max()))
            np.testing.assert_allclose(out[d], want, rtol=0, atol=tol, err_msg=f"window {i} device {d}")


def test_fixtures_cover_both_upstreams():
    assert any(c.startswith("condinilm") for c in CASES) and any(c.startswith("nilmformer") for c in CASES), CASES


@pytest.mark.parametrize("name", CASES)
def test_import_reproduces_the_upstream_evaluation(tmp_path, name):
    ckpt, config, scaler = _files(name)
    result = _import(tmp_path, ckpt, config, scaler)
    assert result.exit_code == 0, result.output
    model = nilmbuild.load_model(tmp_path / "out.pt")
    app = json.loads(config.read_text())["app"]
    assert model.devices == ([app] if isinstance(app, str) else app)
    _assert_matches_upstream(model, np.load(FIXTURES / name / "reference.npz"))
    prov = load_checkpoint(tmp_path / "out.pt").provenance["upstream"]
    assert prov["files"]["checkpoint"] == {
        "name": ckpt.name,
        "sha256": hashlib.sha256(ckpt.read_bytes()).hexdigest(),
        "bytes": ckpt.stat().st_size,
    }
    assert prov["architecture"] == name.split("_")[0] and prov["config"] == json.loads(config.read_text())
    assert torch.load(tmp_path / "out.pt", weights_only=True)["architecture"] == prov["architecture"]
    assert _import(tmp_path, ckpt, config, scaler).exit_code == 0  # a nilmbuild checkpoint may be replaced


def _condinilm_case() -> str:
    """A CondiNILM fixture with several devices (the import's device-order cases need them)."""
    return next(c for c in CASES if c.startswith("condinilm") and len(json.loads(_files(c)[1].read_text())["app"]) > 2)


def _nilmformer_case() -> str:
    return next(c for c in CASES if c.startswith("nilmformer"))


def test_data_parallel_log_with_cuda_storages(tmp_path):
    """The original trained under DataParallel on a GPU: `module.` keys, storages tagged cuda:0."""
    name = _nilmformer_case()
    ckpt, config, _ = _files(name)
    log = read_torch_file(ckpt)
    log["best_model_state_dict"] = {f"module.{k}": v for k, v in log["best_model_state_dict"].items()}
    torch.save(log, tmp_path / "cpu.pt")
    wrapped = as_saved_on_gpu(tmp_path / "cpu.pt", tmp_path / "NILMFormer_0.pt")
    result = _import(tmp_path, wrapped, config)
    assert result.exit_code == 0, result.output
    _assert_matches_upstream(nilmbuild.load_model(tmp_path / "out.pt"), np.load(FIXTURES / name / "reference.npz"))


@pytest.mark.parametrize("name", [c for c in CASES if c.startswith("condinilm")])
def test_checkpoint_without_gate_parameters_uses_the_config_gate(tmp_path, name):
    """A CondiNILM run whose loss has no per-device gate: no criterion.* in the checkpoint, and its evaluation
    falls back to the config's gate_soft_scale / gate_floor (the fixture's output_w_config_gate: 1.7 and 0.04)."""
    ckpt, config, scaler = _files(name)
    payload = read_torch_file(ckpt)
    payload["state_dict"] = {k: v for k, v in payload["state_dict"].items() if not k.startswith("criterion.")}
    torch.save(payload, tmp_path / "last.ckpt")
    cfg = {**json.loads(config.read_text()), "gate_soft_scale": 1.7, "gate_floor": 0.04}
    (tmp_path / "experiment_config.json").write_text(json.dumps(cfg))
    result = _import(tmp_path, tmp_path / "last.ckpt", tmp_path / "experiment_config.json", scaler)
    assert result.exit_code == 0, result.output
    assert load_checkpoint(tmp_path / "out.pt").provenance["upstream"]["criterion"] is None
    ref = np.load(FIXTURES / name / "reference.npz")
    _assert_matches_upstream(nilmbuild.load_model(tmp_path / "out.pt"), ref, "output_w_config_gate")


def _one_line_error(tmp_path, result, match: str):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0], result.output
    assert not (tmp_path / "out.pt").exists()


def test_missing_weight(tmp_path):
    ckpt, config, scaler = _files(_condinilm_case())
    payload = read_torch_file(ckpt)
    key = next(k for k in payload["state_dict"] if k.startswith("model.") and k.endswith(".weight"))
    del payload["state_dict"][key]
    torch.save(payload, tmp_path / "last.ckpt")
    _one_line_error(tmp_path, _import(tmp_path, tmp_path / "last.ckpt", config, scaler), "weights do not fit")


def test_shape_that_does_not_fit_the_config(tmp_path):
    ckpt, config, scaler = _files(_condinilm_case())
    cfg = json.loads(config.read_text())
    cfg["model_kwargs"]["d_model"] = 2 * cfg["model_kwargs"]["d_model"]
    (tmp_path / "experiment_config.json").write_text(json.dumps(cfg))
    _one_line_error(tmp_path, _import(tmp_path, ckpt, tmp_path / "experiment_config.json", scaler), "do not fit")


def test_head_count_that_cannot_be_inferred(tmp_path):
    ckpt, config, scaler = _files(_condinilm_case())
    cfg = json.loads(config.read_text())
    del cfg["model_kwargs"]["n_head"]
    (tmp_path / "experiment_config.json").write_text(json.dumps(cfg))
    _one_line_error(tmp_path, _import(tmp_path, ckpt, tmp_path / "experiment_config.json", scaler), "n_head")


def test_script_bearing_device_name_is_refused_and_nothing_written(tmp_path):
    """A device name is the user's string; one that is none of nilmbuild's devices could not be explained by any
    page, so the import refuses it in one line (tests/test_import_device_names.py: the spellings it maps)."""
    name = _condinilm_case()
    ckpt, config, scaler = _files(name)
    evil = '<script>document.title="pwned"</script>'
    cfg, fields = json.loads(config.read_text()), json.loads(scaler.read_text())
    old = cfg["app"][-1]
    cfg["app"] = [evil if d == old else d for d in cfg["app"]]
    fields["devices"] = [evil if d == old else d for d in fields["devices"]]
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    (tmp_path / "s.json").write_text(json.dumps(fields))
    result = _import(tmp_path, ckpt, tmp_path / "c.json", tmp_path / "s.json")
    assert result.exit_code != 0 and "cannot explain" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "out.pt").exists()


def test_full_lightning_checkpoint_of_a_real_fit(tmp_path):
    """A checkpoint from CondiNILM's own Trainer.fit (tests/fixtures/upstream_import/generate.py) holds optimizer
    and scheduler states, loops and callback states too: all of it is read weights-only with no extra names, and
    the gate parameters the fit learned are the imported model's."""
    d = Path(__file__).resolve().parent / "fixtures" / "upstream_import" / "condinilm_fit"
    ckpt = d / "last.ckpt"
    assert torch.serialization.get_unsafe_globals_in_checkpoint(ckpt) == []
    payload = torch.load(ckpt, weights_only=True)
    assert {"optimizer_states", "lr_schedulers", "loops", "callbacks"} <= set(payload)
    result = _import(tmp_path, ckpt, d / "experiment_config.json", d / "scaler.json")
    assert result.exit_code == 0, result.output
    loaded = load_checkpoint(tmp_path / "out.pt")
    assert loaded.devices == ["kettle", "fridge"]
    sd = loaded.model.state_dict()
    for key in ("gate_soft_scales", "gate_floors", "gate_biases"):
        assert torch.equal(sd[f"criterion.{key}"], payload["state_dict"][f"criterion.{key}"])
    assert loaded.provenance["upstream"]["meta"]["pytorch-lightning_version"] == payload["pytorch-lightning_version"]
    out = nilmbuild.load_model(tmp_path / "out.pt").run_window(np.full(16, 500.0, np.float32), "2024-01-01T00:00Z")
    assert all(v.shape == (16,) and np.isfinite(v).all() and (v >= 0).all() for v in out.values())
