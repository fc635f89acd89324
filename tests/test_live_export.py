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
from nilmbuild.live.export import INPUTS, onnx_bytes, outputs, torch_reference, what_if_defaults

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


def run_graph(model, session, x, head, **what_if):
    feeds = {"x": x, "head": np.array(head, np.int64), **what_if_defaults(model.loaded.cfg)}
    feeds.update({k: np.asarray(v, np.float32) for k, v in what_if.items()})
    return dict(zip(outputs(model.loaded.cfg), session.run(None, feeds)))


def check(model, session, x, head, feeds=None, thresholds=None, **forward_kw):
    """The graph (with the what-if inputs `feeds`) against the PyTorch model run with `forward_kw`."""
    got = run_graph(model, session, x, head, **(feeds or {}))
    ref = torch_reference(model.loaded, x, head, **forward_kw)
    thr = (model.loaded.model.gate_thresholds.numpy() if thresholds is None else np.asarray(thresholds))[:, None]
    near = np.abs(ref["gate_prob"] - thr) < 1e-4
    for name in outputs(model.loaded.cfg):
        assert got[name].shape == ref[name].shape, name
        err = np.abs(got[name] - ref[name])
        if name == "watts":
            err = np.where(near, 0, err)
        bound = ATOL.get(name, 1e-4 * max(1.0, float(np.abs(ref[name]).max())))
        assert err.max() <= bound, (name, float(err.max()))
    return near.sum()


def test_graph_names_match_the_trace(model, session):
    n = model.loaded.cfg.n_encoder_layers
    assert [o.name for o in session.get_outputs()] == list(outputs(model.loaded.cfg))
    assert [o.name for o in session.get_outputs()].count("encoder_0_out") == 1 and f"encoder_{n - 1}_out" in [
        o.name for o in session.get_outputs()
    ]
    assert [i.name for i in session.get_inputs()] == list(INPUTS)


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


# ---- what-ifs (issue 11 item 4): each graph input changes the output as the PyTorch model's own switch does


def test_what_if_defaults_are_the_unchanged_pytorch_model(model, windows):
    """The model with WhatIf.defaults is bit for bit the model without a what-if (the captured forward pass)."""
    import torch

    from nilmbuild.model.whatif import WhatIf

    x = torch.from_numpy(windows[:4].astype(np.float32))
    m = model.loaded.model.eval()
    with torch.no_grad():
        a, b = m(x, gate_mode="hard"), m(x, gate_mode="hard", what_if=WhatIf.defaults(model.loaded.cfg))
    assert torch.equal(a.power, b.power) and torch.equal(a.gate, b.gate)


@pytest.mark.parametrize(
    "what_if,forward_kw",
    [
        ({"film_on": 0.0}, {"use_film": False}),
        ({"mask_diagonal": 0.0}, {"mask_diagonal": False}),
        ({"soft_gate": 1.0}, {"gate_mode": "soft"}),
    ],
    ids=["film_off", "mask_off", "soft_gate"],
)
def test_what_if_input_equals_the_pytorch_switch(model, session, windows, what_if, forward_kw):
    x = windows[5:6].astype(np.float32)
    base = run_graph(model, session, x, 0)["watts"]
    assert check(model, session, x, 0, what_if, **forward_kw) <= 2
    assert np.abs(run_graph(model, session, x, 0, **what_if)["watts"] - base).max() > 1.0  # and it changes the watts


def test_threshold_one_closes_the_gate(model, session, windows):
    """Hand check: threshold 1.0 closes every gate (p <= 1), so the output FiLM sees 0 and the watts are
    beta_dec * a + b for every step (a, b: the appliance scaler), whatever the signal."""
    from nilmbuild.data.preprocess import scaler_affine

    x = windows[5:6].astype(np.float32)
    D = len(model.devices)
    got = run_graph(model, session, x, 0, thresholds=np.ones(D))
    for d, name in enumerate(model.devices):
        a, b = scaler_affine(model.loaded.scalers["appliances"][name])
        assert np.allclose(got["watts"][d], got["film_dec_beta"][d] * a + b, atol=1e-3)
    assert np.abs(got["watts"] - run_graph(model, session, x, 0)["watts"]).max() > 10.0


def test_threshold_moves_only_its_device(model, session, windows):
    x = windows[5:6].astype(np.float32)
    thr = what_if_defaults(model.loaded.cfg)["thresholds"].copy()
    thr[0] = 0.05
    base, got = run_graph(model, session, x, 0)["watts"], run_graph(model, session, x, 0, thresholds=thr)["watts"]
    assert np.array_equal(got[1:], base[1:])
    gate = run_graph(model, session, x, 0)["gate_prob"][0]
    opened = (gate > 0.05) & (gate <= model.loaded.cfg.devices[0].gate_threshold)
    assert np.array_equal(got[0] != base[0], opened)  # exactly the steps whose gate the new threshold opens


def test_film_affine_is_the_film_pages_slider(model, session, windows):
    """Layer 1's FiLM with gamma' = 2 gamma + 0.1 and beta' = 0.5 beta - 0.2 (the FiLM page's sliders): the
    graph equals the PyTorch model with the same WhatIf, and that model's encoder.1.film equals
    (1 + gamma') * ffn.out + beta' computed here from its own trace."""
    import torch

    from nilmbuild.model.trace import Trace
    from nilmbuild.model.whatif import WhatIf

    cfg = model.loaded.cfg
    affine = what_if_defaults(cfg)["film_enc_affine"].copy()
    affine[1] = [2.0, 0.1, 0.5, -0.2]
    x = windows[5:6].astype(np.float32)
    assert (
        check(
            model,
            session,
            x,
            0,
            {"film_enc_affine": affine},
            what_if=WhatIf.defaults(cfg).replace(film_enc_affine=affine),
        )
        <= 2
    )
    trace = Trace()
    with torch.no_grad():
        model.loaded.model.eval()(
            torch.from_numpy(x),
            gate_mode="hard",
            trace=trace,
            what_if=WhatIf.defaults(cfg).replace(film_enc_affine=affine),
        )
    g = trace["film_enc.gamma_mean"][0, 1].numpy() * 2.0 + 0.1
    b = trace["film_enc.beta_mean"][0, 1].numpy() * 0.5 - 0.2
    ffn = trace["encoder.1.ffn.out"][0].numpy()
    assert np.allclose(trace["encoder.1.film"][0].numpy(), (1 + g) * ffn + b, atol=1e-5)
    base = run_graph(model, session, x, 0)["watts"]
    assert np.abs(run_graph(model, session, x, 0, film_enc_affine=affine)["watts"] - base).max() > 1.0


@pytest.mark.parametrize("layers", [1, 4])
def test_the_graphs_stages_follow_the_models_layers(layers):
    """No layer count is assumed: a 1- or 4-layer model's live graph has one encoder output per layer, each equal to
    the PyTorch trace of that layer's output (run here as the module the exporter traces, without exporting)."""
    import torch

    from nilmbuild.live.export import LiveModel, stages
    from nilmbuild.model.checkpoint import Loaded
    from nilmbuild.model.config import NILMFormerConfig
    from nilmbuild.model.nilmformer import NILMFormer
    from nilmbuild.model.trace import Trace

    torch.manual_seed(0)
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=layers)
    model = NILMFormer(cfg).eval()
    loaded = Loaded(
        model=model, cfg=cfg, scalers={"appliances": {d: {"kind": "max", "max": 1000.0} for d in cfg.device_names}}
    )
    enc = [k for k in outputs(cfg) if k.startswith("encoder_")]
    assert enc == [f"encoder_{l}_out" for l in range(layers)]
    x = torch.randn(1, cfg.c_in + cfg.n_exo, cfg.window)
    defaults = what_if_defaults(cfg)
    with torch.no_grad():
        got = LiveModel(loaded)(x, torch.tensor(1), *(torch.from_numpy(defaults[k]) for k in INPUTS[2:]))
        trace = Trace()
        model(x, gate_mode="hard", trace=trace)
    assert len(got) == len(outputs(cfg))
    named = dict(zip(outputs(cfg), got))
    assert named["attention"].shape == (layers, cfg.window, cfg.window)
    for graph_name, record in stages(cfg).items():
        torch.testing.assert_close(named[graph_name], trace[record][0], rtol=1e-5, atol=1e-6)


def test_the_graph_carries_no_stack_traces(model):
    """No per-node stack traces or doc strings in the graph the page loads (older exporters wrote ~1.2 MB of them;
    torch 2.13's writes none, so a torch upgrade that brings them back fails here)."""
    import onnx

    proto = onnx.load_model_from_string(onnx_bytes(model.loaded))
    nodes = [n for g in (proto.graph, *proto.functions) for n in g.node]
    assert nodes and not [n.name for n in nodes if n.doc_string or len(n.metadata_props)]
    assert not proto.graph.doc_string


def fetched_outputs() -> set[str]:
    """The output names the pages ask the live model for: the string arrays passed to a `.run(` call, and
    page_playground.js's FETCH list."""
    import re
    from pathlib import Path

    names = set()
    for path in (Path(__file__).parents[1] / "static" / "js").glob("*.js"):
        for line in path.read_text().splitlines():
            if ".run(" in line or "FETCH =" in line:
                for arr in re.findall(r'\[((?:\s*"\w+"\s*,?)+)\]', line):
                    names |= set(re.findall(r'"(\w+)"', arr))
    return names


def test_the_outputs_the_pages_fetch_are_in_every_graph(model):
    """A page fetches watts, attention and (for a model with a gate) gate_prob by name: each graph has them."""
    from nilmbuild.model.upstream import UpstreamConfig

    fetched = fetched_outputs()
    assert fetched == {"watts", "gate_prob", "attention"}
    upstream = {a: UpstreamConfig(arch=a, devices=("kettle",), window=32) for a in ("condinilm", "nilmformer")}
    for cfg, gated in ((model.loaded.cfg, True), (upstream["condinilm"], True), (upstream["nilmformer"], False)):
        want = fetched if gated else fetched - {"gate_prob"}
        assert want <= set(outputs(cfg)), cfg


def test_exporting_prints_no_warning(model):
    """The exporter's TracerWarnings for the static sizes stay out of `nilmbuild site`'s output."""
    import warnings

    from nilmbuild.live.export import export_onnx

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        export_onnx(model.loaded)
    assert [str(w.message)[:80] for w in seen] == []


def test_the_cached_graph_follows_the_model_code_and_the_exporters(model, monkeypatch, tmp_path):
    """The on-disk cache key of the exported graph changes with a byte of model/ or of live/export.py, and with the
    installed torch or onnx version (a stale graph would answer for older code); the same code gives the same key."""
    import shutil
    from pathlib import Path

    from nilmbuild import provenance
    from nilmbuild.live import export

    base = export.cache_key(model.loaded)
    pkg = tmp_path / "nilmbuild"
    shutil.copytree(provenance.PACKAGE_ROOT / "model", pkg / "model", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(provenance, "PACKAGE_ROOT", pkg)
    assert export.cache_key(model.loaded) == base
    whatif = pkg / "model" / "whatif.py"
    whatif.write_text(whatif.read_text() + "\n")
    assert export.cache_key(model.loaded) != base
    monkeypatch.undo()

    mine = tmp_path / "export.py"
    mine.write_bytes(Path(export.__file__).read_bytes() + b"\n")
    monkeypatch.setattr(export, "__file__", str(mine))
    assert export.cache_key(model.loaded) != base
    monkeypatch.undo()

    real = provenance.package_version
    for name in ("torch", "onnx"):
        monkeypatch.setattr(provenance, "package_version", lambda n, p=name: "0.0" if n == p else real(n))
        assert export.cache_key(model.loaded) != base, name
