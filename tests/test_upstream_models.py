"""CondiNILM and original-NILMFormer architectures against reference fixtures written by the upstream code itself
(tests/fixtures/upstream/generate.py runs ../shared/reference/upstream): every stage within 1e-5 of its scale,
the final watts within max(0.05 W, 1e-4 x peak), through the public path (checkpoint -> load_model -> run_window)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import nilmbuild
from nilmbuild.errors import UserError
from nilmbuild.model import Trace
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.upstream import build_from_upstream, check_scalers, scalers_from_nilmscaler

FIX = Path(__file__).parent / "fixtures" / "upstream"
CONDINILM = ("condinilm_small", "condinilm_tuned", "condinilm_single")
NILMFORMER = ("nilmformer_small", "nilmformer_odd")
#: numpy types the original's log dict holds (metrics are numpy scalars): the weights-only unpickler allows these
NUMPY_GLOBALS = [np._core.multiarray.scalar, np._core.multiarray._reconstruct, np.ndarray, np.dtype]
NUMPY_GLOBALS += [type(np.dtype(t)) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_)]


def _condinilm(name: str):
    ckpt = torch.load(FIX / name / "last.ckpt", map_location="cpu", weights_only=True)["state_dict"]
    weights = {k[len("model.") :]: v for k, v in ckpt.items() if k.startswith("model.")}
    criterion = {k[len("criterion.") :]: v for k, v in ckpt.items() if k.startswith("criterion.")}
    config = json.loads((FIX / name / "experiment_config.json").read_text())
    fields = json.loads((FIX / name / "scaler.json").read_text())
    return build_from_upstream("condinilm", config, weights, criterion), config, fields


def _nilmformer(name: str):
    with torch.serialization.safe_globals(NUMPY_GLOBALS):
        log = torch.load(FIX / name / "NILMFormer_0.pt", map_location="cpu", weights_only=True)
    config = json.loads((FIX / name / "config.json").read_text())
    return build_from_upstream("nilmformer", config, log["best_model_state_dict"]), config, config["scaler"]


def _build(name: str):
    return _condinilm(name) if name.startswith("condinilm") else _nilmformer(name)


def _ref(name: str) -> dict:
    with np.load(FIX / name / "reference.npz") as z:
        return {k: z[k] for k in z.files}


def _ours(stage: str, model) -> str:
    """The nilmbuild trace name of a fixture stage (the fixture names adapters by index, the sparse CNN once)."""
    if stage.startswith("head.adapted."):
        return f"head.adapted.{model.cfg.devices[int(stage.rsplit('.', 1)[1])]}"
    if stage == "sparse.features":
        return f"sparse.{model.cfg.devices[model.cfg.sparse_indices[0]]}.features"
    return stage


@pytest.fixture(scope="module", params=CONDINILM + NILMFORMER)
def case(request, tmp_path_factory):
    name = request.param
    model, config, fields = _build(name)
    scalers = scalers_from_nilmscaler(fields)
    path = tmp_path_factory.mktemp(name) / "OUT.pt"
    save_checkpoint(path, model, scalers=scalers, provenance={"source": f"{name} fixture"})
    return name, model, path, _ref(name)


def test_every_stage_matches_the_upstream(case):
    name, model, _, ref = case
    stages = [k[len("stage.") :] for k in ref if k.startswith("stage.")]
    n = ref[f"stage.{stages[0]}"].shape[0]  # the fixtures keep the stages of their first window(s)
    trace = Trace()
    with torch.no_grad():
        model(torch.from_numpy(ref["model_input"][:n]), trace=trace)
    assert len(stages) >= 12
    for stage in stages:
        want, got = ref[f"stage.{stage}"], trace[_ours(stage, model)].numpy()
        assert got.shape == want.shape, stage
        scale = max(float(np.abs(want).max()), 1e-6)
        assert float(np.abs(got - want).max()) <= 1e-5 * scale, f"{name} {stage}"


def test_model_input_matches_the_upstream_dataset(case):
    """Scaling with the imported NILMscaler and the time features from timestamps, as the upstream builds them."""
    name, _, path, ref = case
    m = nilmbuild.load_model(path)
    from nilmbuild.pipeline import model_input

    for b, start in enumerate(ref["starts"]):
        x = model_input(m.loaded, m.timestamps(str(start)), ref["watts"][b])
        np.testing.assert_allclose(x, ref["model_input"][b], rtol=1e-6, atol=1e-6, err_msg=name)


def test_run_window_returns_the_upstream_evaluation_watts(case):
    name, model, path, ref = case
    m = nilmbuild.load_model(path)
    assert m.devices == list(model.cfg.devices) and m.architecture == model.cfg.arch
    for b, start in enumerate(ref["starts"]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a `Z` start time must not warn
            out = m.run_window(ref["watts"][b], str(start).replace(" ", "T") + "Z")
        got = np.stack([out[d] for d in m.devices])
        want = ref["output_w"][b]
        bound = max(0.05, 1e-4 * float(np.abs(want).max()))
        assert float(np.abs(got - want).max()) <= bound, name


def test_checkpoint_records_architecture_and_upstream_config(case):
    name, model, path, _ = case
    loaded = load_checkpoint(path)
    assert loaded.architecture == model.cfg.arch
    assert loaded.cfg.upstream["window_size"] == model.cfg.window
    assert loaded.cfg.upstream["model_kwargs"] == model.cfg.upstream["model_kwargs"]


def test_spec_sizes_are_not_assumed():
    sizes = {n: _build(n)[0].cfg for n in CONDINILM + NILMFORMER}
    assert {c.n_encoder_layers for c in sizes.values()} >= {1, 2, 3, 4}
    assert {c.n_head for c in sizes.values()} >= {2, 4, 6}
    assert {c.window for c in sizes.values()} >= {48, 64, 96, 100}


@pytest.mark.parametrize("name", CONDINILM)
def test_condinilm_without_criterion_uses_the_config_gate(name, tmp_path):
    """A checkpoint without criterion.*: the evaluation's fallback gate from gate_soft_scale and gate_floor."""
    ckpt = torch.load(FIX / name / "last.ckpt", map_location="cpu", weights_only=True)["state_dict"]
    weights = {k[len("model.") :]: v for k, v in ckpt.items() if k.startswith("model.")}
    config = json.loads((FIX / name / "experiment_config.json").read_text())
    model = build_from_upstream("condinilm", {**config, "gate_soft_scale": 1.7, "gate_floor": 0.04}, weights)
    assert model.cfg.gate_source == "config"
    fields = json.loads((FIX / name / "scaler.json").read_text())
    save_checkpoint(tmp_path / "OUT.pt", model, scalers=scalers_from_nilmscaler(fields))
    m, ref = nilmbuild.load_model(tmp_path / "OUT.pt"), _ref(name)
    for b, start in enumerate(ref["starts"]):
        got = np.stack(list(m.run_window(ref["watts"][b], str(start)).values()))
        want = ref["output_w_config_gate"][b]
        assert float(np.abs(got - want).max()) <= max(0.05, 1e-4 * float(np.abs(want).max()))


def test_condinilm_one_device_has_no_sparse_cnn_and_no_floor():
    cfg = _condinilm("condinilm_single")[0].cfg
    assert cfg.sparse_indices == () and cfg.gate_logits_floors == (float("-inf"),)


def test_condinilm_gate_logit_floor_comes_from_the_device_type():
    model = _condinilm("condinilm_tuned")[0]  # dishwasher, kettle, microwave, fridge
    assert model.cfg.gate_logits_floors == (float("-inf"), -3.0, -3.0, float("-inf"))
    assert model.cfg.sparse_indices == (1,)  # the kettle, and only the kettle, is the sparse CNN


def test_bad_inputs_are_one_line_user_errors():
    model, config, fields = _condinilm("condinilm_small")
    ckpt = torch.load(FIX / "condinilm_small" / "last.ckpt", weights_only=True)["state_dict"]
    weights = {k[6:]: v for k, v in ckpt.items() if k.startswith("model.")}
    missing = dict(weights)
    missing.pop("final_norm.weight")
    bad = [
        ("condinilm", config, missing, "final_norm.weight"),
        ("condinilm", {**config, "model_kwargs": {**config["model_kwargs"], "d_model": 64}}, weights, "size"),
        (
            "condinilm",
            {**config, "model_kwargs": {k: v for k, v in config["model_kwargs"].items() if k != "n_head"}},
            weights,
            "n_head",
        ),
        ("condinilm", {**config, "app": []}, weights, "app"),
        ("transformer", config, weights, "architecture"),
    ]
    original = json.loads((FIX / "nilmformer_small" / "config.json").read_text())
    xformers = {**original, "model_kwargs": {**original["model_kwargs"], "use_efficient_attention": True}}
    bad.append(("nilmformer", xformers, {}, "use_efficient_attention"))
    for arch, cfg, sd, word in bad:
        with pytest.raises(UserError, match=word) as e:
            build_from_upstream(arch, cfg, sd)
        assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="appliance_stat1"):
        scalers_from_nilmscaler({**fields, "appliance_stat1": fields["appliance_stat1"][:1]})
    with pytest.raises(UserError, match="washing_machine"):
        check_scalers(scalers_from_nilmscaler({**fields, "devices": ["kettle", "fridge", "oven"]}), config["app"])


def test_info_shows_architecture_params_and_stages(case, tmp_path):
    from click.testing import CliRunner

    from nilmbuild.cli import main

    name, model, path, _ = case
    r = CliRunner().invoke(main, ["info", "--checkpoint", str(path), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["architecture"] == model.cfg.arch
    assert info["params"]["total"] == sum(p.numel() for p in model.parameters())
    assert info["params"]["encoder_layers"] == sum(p.numel() for p in model.encoder_layers.parameters())
    stages = info["stages"]
    assert stages["encoder.{l}.out"] == model.cfg.n_encoder_layers and "stats_token" in stages
    assert ("film_enc.gamma" in stages) == (model.cfg.arch == "condinilm")  # the original has no FiLM
    assert ("gate.prob" in stages) == (model.cfg.arch == "condinilm")  # ... and no gate
    assert info["upstream_config"]["model_kwargs"] == model.cfg.upstream["model_kwargs"]


def test_nilmscaler_fields_become_affine_scalers_hand_computed():
    fields = {
        "power_scaling_type": "MinMax",
        "appliance_scaling_type": "SameAsPower",
        "power_stat1": 100.0,
        "power_stat2": 1100.0,
        "appliance_stat1": [100.0, 100.0],
        "appliance_stat2": [1100.0, 1100.0],
        "devices": ["kettle", "fridge"],
    }
    s = scalers_from_nilmscaler(fields)
    assert s["aggregate"] == {"kind": "affine", "offset": 100.0, "scale": 1000.0}  # (x - min) / (max - min)
    assert s["appliances"]["fridge"] == {"kind": "affine", "offset": 100.0, "scale": 1000.0}
    s = scalers_from_nilmscaler(
        {
            **fields,
            "power_scaling_type": "MaxScaling",
            "appliance_scaling_type": "MaxScaling",
            "power_stat1": 0.0,
            "appliance_stat1": [0.0, 0.0],
            "appliance_stat2": [3000.0, 250.0],
        }
    )
    assert s["aggregate"]["scale"] == 1100.0 and s["appliances"]["fridge"] == {
        "kind": "affine",
        "offset": 0.0,
        "scale": 250.0,
    }


def test_time_features_hand_computed():
    from nilmbuild.model.upstream import time_features

    # 2024-03-31 was a Sunday (dow 6); 22:47
    f = time_features(np.array(["2024-03-31T22:47"], dtype="datetime64[s]"), ["minute", "hour", "dow", "month"])
    want = [
        np.sin(2 * np.pi * 47 / 60),
        np.cos(2 * np.pi * 47 / 60),
        np.sin(2 * np.pi * 22 / 24),
        np.cos(2 * np.pi * 22 / 24),
        np.sin(2 * np.pi * 6 / 7),
        np.cos(2 * np.pi * 6 / 7),
        np.sin(2 * np.pi * 3 / 12),
        np.cos(2 * np.pi * 3 / 12),
    ]
    np.testing.assert_allclose(f[:, 0], want, atol=1e-7)
