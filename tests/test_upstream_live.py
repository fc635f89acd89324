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
    unmasked = copy.deepcopy(loaded.model)
    unmasked.cfg = dataclasses.replace(unmasked.cfg, mask_diagonal=False)
    want = _watts(loaded, unmasked, x)
    got = _graph(loaded, session, x, mask_diagonal=0.0)["watts"]
    assert np.abs(got - want).max() <= ATOL_W
    assert np.abs(want - _watts(loaded, loaded.model, x)).max() > ATOL_W  # the switch changes the answer


@pytest.mark.parametrize("case", ["condinilm_small"], indirect=True)  # the original has no FiLM, no film_on input
def test_film_off_is_the_model_with_identity_film(case):
    loaded, session, x = case
    identity = copy.deepcopy(loaded.model)
    with torch.no_grad():
        for gen in (identity.encoder_film.gen, identity.decoder_film.gen):
            gen.fc2.weight.zero_()
            gen.fc2.bias.zero_()
    want = _watts(loaded, identity, x)
    got = _graph(loaded, session, x, film_on=0.0)["watts"]
    assert np.abs(got - want).max() <= ATOL_W
    assert np.abs(want - _watts(loaded, loaded.model, x)).max() > ATOL_W
