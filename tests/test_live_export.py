"""The ONNX export of the live model (nilmbuild/live/export.py) equals the PyTorch model.

onnxruntime (CPU, the same kernels onnxruntime-web compiles to wasm) runs the exported graph on captured
example windows and on a random signal; every output is compared with a Trace of the PyTorch forward pass.
Bounds: stage tensors within 1e-4 x max(1, their largest magnitude) (they reach ~30; measured 2e-5 relative), attention within 1e-4 (measured 3e-5), gate
probabilities within 1e-4; watts within 0.25 W (measured 0.05 W at 3 kW) except at steps whose gate
probability sits within 1e-4 of the device's hard-gate threshold, where the hard gate may flip.
"""

import numpy as np
import pytest

import nilmbuild
from nilmbuild.live.export import OUTPUTS, onnx_bytes, torch_reference

ort = pytest.importorskip("onnxruntime")
ATOL = {"attention": 1e-4, "gate_prob": 1e-4, "watts": 0.25}


@pytest.fixture(scope="module")
def model():
    return nilmbuild.load_model()


@pytest.fixture(scope="module")
def session(model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(onnx_bytes(model.loaded), opts, providers=["CPUExecutionProvider"])


@pytest.fixture(scope="module")
def windows(model):
    """The site's example batch (what make_context captures), without capturing it."""
    from nilmbuild.data.preprocess import example_batch
    from nilmbuild.pipeline import load_household_for, prepare_for

    prepared = prepare_for(model.loaded, load_household_for(model.loaded))
    return example_batch(prepared, split="test", batch_size=32, seed=0)[0]


def reference(model, x, head):
    return torch_reference(model.loaded, x, head)


def check(model, session, x, head):
    got = dict(zip(OUTPUTS, session.run(None, {"x": x, "head": np.array(head, np.int64)})))
    ref = reference(model, x, head)
    thr = model.loaded.model.gate_thresholds.numpy()[:, None]
    near = np.abs(ref["gate_prob"] - thr) < 1e-4
    for name in OUTPUTS:
        assert got[name].shape == ref[name].shape, name
        err = np.abs(got[name] - ref[name])
        if name == "watts":
            err = np.where(near, 0, err)
        bound = ATOL.get(name, 1e-4 * max(1.0, float(np.abs(ref[name]).max())))
        assert err.max() <= bound, (name, float(err.max()))
    return near.sum()


def test_graph_names_match_the_trace(session):
    assert [o.name for o in session.get_outputs()] == list(OUTPUTS)
    assert [i.name for i in session.get_inputs()] == ["x", "head"]


@pytest.mark.parametrize("sample,head", [(0, 0), (5, 3), (17, 7)])
def test_onnx_equals_torch_on_captured_windows(model, session, windows, sample, head):
    x = windows[sample : sample + 1].astype(np.float32)
    assert check(model, session, x, head) <= 2


def test_onnx_equals_torch_on_a_random_signal(model, session):
    from nilmbuild.pipeline import model_input

    rng = np.random.default_rng(20261123)
    agg = 150 + 2500 * (rng.random(model.window) > 0.95) + 80 * rng.random(model.window)
    x = model_input(model.loaded, model.timestamps("2024-03-03T17:41"), agg.astype(np.float32))[None]
    assert check(model, session, x, 5) <= 2
