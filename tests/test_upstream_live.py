"""The live graph of an upstream model (nilmbuild/live/export.py) takes its what-ifs as inputs: the diagonal mask
(both upstreams) and FiLM on/off (CondiNILM with FiLM). At their defaults the graph is the captured model; each switch
equals an independent PyTorch version of the same weights: a copy configured without the diagonal mask, and a copy
whose FiLM generators' last layer is zeroed (gamma = beta = 0.5 tanh(0) = 0, FiLM the identity). onnxruntime (CPU)
runs the graph, as onnxruntime-web does in the page."""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ort = pytest.importorskip("onnxruntime")
ROOT = Path(__file__).parent
ATOL_W = 0.05  # watts (the upstream fixtures' bound is max(0.05 W, 1e-4 x peak))


@pytest.fixture(scope="module", params=["condinilm_small", "nilmformer_small"])
def case(request, tmp_path_factory):
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _build, _ref

    from nilmbuild.live.export import export_onnx
    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build(request.param)
    path = tmp_path_factory.mktemp(request.param) / "m.pt"
    save_checkpoint(path, model, scalers=scalers_from_nilmscaler(fields), provenance={"source": "fixture"})
    loaded = load_checkpoint(path)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    session = ort.InferenceSession(export_onnx(loaded), opts, providers=["CPUExecutionProvider"])
    return loaded, session, _ref(request.param)["model_input"][:1].astype(np.float32)


def _graph(loaded, session, x, **what_if):
    from nilmbuild.live.export import outputs, what_if_defaults

    feeds = {"x": x, "head": np.array(0, np.int64), **what_if_defaults(loaded.cfg)}
    feeds.update({k: np.asarray(v, np.float32) for k, v in what_if.items()})
    return dict(zip(outputs(loaded.cfg), session.run(None, feeds)))


def _watts(loaded, model, x) -> np.ndarray:
    """The model's output in watts as the live graph gives it (the appliance scalers; CondiNILM clamped at 0)."""
    from nilmbuild.infer.postprocess import denormalise

    with torch.no_grad():
        p = model.eval()(torch.from_numpy(x)).power[0].numpy()
    apps = loaded.scalers["appliances"]
    w = np.stack([denormalise(p[i], apps[d]) for i, d in enumerate(loaded.devices)])
    return np.maximum(w, 0) if loaded.cfg.arch == "condinilm" else w


def _unmasked(model):
    """A copy of the model configured without the diagonal mask."""
    unmasked = copy.deepcopy(model)
    unmasked.cfg = dataclasses.replace(unmasked.cfg, mask_diagonal=False)
    return unmasked


def _identity_film(model):
    """A copy of a CondiNILM whose FiLM generators' last layer is zeroed: gamma = beta = 0, FiLM the identity."""
    identity = copy.deepcopy(model)
    with torch.no_grad():
        for gen in (identity.encoder_film.gen, identity.decoder_film.gen):
            gen.fc2.weight.zero_()
            gen.fc2.bias.zero_()
    return identity


def test_inputs_are_the_models_switches(case):
    from nilmbuild.live.export import inputs

    loaded, session, _ = case
    want = ["x", "head", "mask_diagonal"] + (["film_on"] if loaded.cfg.arch == "condinilm" else [])
    assert list(inputs(loaded.cfg)) == want == [i.name for i in session.get_inputs()]


def test_defaults_are_the_model(case):
    loaded, session, x = case
    got = _graph(loaded, session, x)["watts"]
    assert np.abs(got - _watts(loaded, loaded.model, x)).max() <= ATOL_W


def test_mask_off_is_the_model_configured_without_the_mask(case):
    loaded, session, x = case
    unmasked = _unmasked(loaded.model)
    want = _watts(loaded, unmasked, x)
    got = _graph(loaded, session, x, mask_diagonal=0.0)["watts"]
    assert np.abs(got - want).max() <= ATOL_W
    assert np.abs(want - _watts(loaded, loaded.model, x)).max() > ATOL_W  # the switch changes the answer


@pytest.mark.parametrize("case", ["condinilm_small"], indirect=True)  # the original has no FiLM, no film_on input
def test_film_off_is_the_model_with_identity_film(case):
    loaded, session, x = case
    identity = _identity_film(loaded.model)
    want = _watts(loaded, identity, x)
    got = _graph(loaded, session, x, film_on=0.0)["watts"]
    assert np.abs(got - want).max() <= ATOL_W
    assert np.abs(want - _watts(loaded, loaded.model, x)).max() > ATOL_W


def _reference_stages(name: str, ref: dict) -> dict[str, np.ndarray]:
    """Graph output -> the upstream code's own value of that stage on the first window (tests/fixtures/upstream/
    generate.py's hooks): every encoder layer the fixture recorded, and CondiNILM's FiLM (the encoder FiLM's
    per-device (gamma, beta) averaged over the devices, as the live graph gives them)."""
    want = {"instance_norm": ref["stage.instance_norm"][0], "final_norm": ref["stage.final_norm"][0]}
    layers = sorted(int(k.split(".")[2]) for k in ref if k.startswith("stage.encoder.") and k.endswith(".out"))
    want |= {f"encoder_{n}_out": ref[f"stage.encoder.{n}.out"][0] for n in layers}
    if name.startswith("condinilm"):
        want["cond_vector"] = ref["stage.cond.vector"][0]
        want["film_enc_gamma"] = ref["stage.film_enc.gamma"][0].mean(axis=0)  # (devices, layers, d) -> (layers, d)
        want["film_enc_beta"] = ref["stage.film_enc.beta"][0].mean(axis=0)
        want["film_dec_gamma"] = ref["stage.film_dec.gamma"][0]
        want["film_dec_beta"] = ref["stage.film_dec.beta"][0]
    return want


def test_stages_are_the_upstream_codes_own_values(case, request):
    """Each stage the live page shows is the upstream's value of it, for every encoder layer the upstream ran."""
    loaded, session, x = case
    name = request.node.callspec.params["case"]
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _ref

    got = _graph(loaded, session, x)
    for stage, want in _reference_stages(name, _ref(name)).items():
        assert stage in got, f"the live graph has no {stage}"
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got[stage].reshape(want.shape), want, atol=2e-4 * scale, err_msg=stage)


def test_a_condinilm_without_film_has_no_film_stages(case):
    from nilmbuild.live.export import inputs, stages

    loaded, _, _ = case
    plain = dataclasses.replace(loaded.cfg, use_film=False)
    assert not [s for s in stages(plain) if "film" in s or s == "cond_vector"]
    assert "film_on" not in inputs(plain)


def test_torch_reference_takes_the_upstream_switches(case):
    """export.torch_reference (the Playground's build-time first runs, and the live graph's reference) with the
    mask off, or CondiNILM's FiLM off, is the PyTorch model changed by hand; CondiNILM's watts are clamped at 0 as
    its evaluation clamps them."""
    from nilmbuild.live.export import torch_reference

    loaded, _, x = case
    unmasked = _unmasked(loaded.model)
    got = torch_reference(loaded, x, 0, mask_diagonal=False)["watts"]
    assert np.abs(got - _watts(loaded, unmasked, x)).max() <= ATOL_W
    assert np.abs(got - _watts(loaded, loaded.model, x)).max() > ATOL_W
    if loaded.cfg.arch != "condinilm":
        return
    identity = _identity_film(loaded.model)
    got = torch_reference(loaded, x, 0, use_film=False)["watts"]
    np.testing.assert_allclose(got, _watts(loaded, identity, x), atol=ATOL_W)
    lower, by_hand = _lowered(loaded, x)
    np.testing.assert_allclose(torch_reference(lower, x, 0)["watts"], np.maximum(by_hand, 0.0), atol=ATOL_W)


def _lowered(loaded, x):
    """The checkpoint with appliance scalers 100 W lower (a standard or min-max scaler's offset), so that some of
    its watts are below 0, and those watts unclamped, by hand: (loaded, (D, W) watts)."""
    apps = {d: {**s, "offset": float(s["offset"]) - 100.0} for d, s in loaded.scalers["appliances"].items()}
    lower = dataclasses.replace(loaded, scalers={**loaded.scalers, "appliances": apps})
    with torch.no_grad():
        raw = loaded.model.eval()(torch.from_numpy(x)).power[0].numpy()
    by_hand = np.stack([raw[i] * apps[d]["scale"] + apps[d]["offset"] for i, d in enumerate(loaded.devices)])
    assert by_hand.min() < -ATOL_W < ATOL_W < by_hand.max()
    return lower, by_hand


@pytest.mark.parametrize("case", ["condinilm_small"], indirect=True)
def test_the_graph_clamps_condinilms_watts_at_0(case):
    from nilmbuild.live.export import export_onnx

    loaded, _, x = case
    lower, by_hand = _lowered(loaded, x)
    session = ort.InferenceSession(export_onnx(lower), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(_graph(lower, session, x)["watts"], np.maximum(by_hand, 0.0), atol=ATOL_W)
