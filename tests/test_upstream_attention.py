"""Attention weights of the upstream architectures (issue 31 item 4, the Attention page): the upstream encoder layers
share the spec's attention module, so a trace that keeps `encoder.{l}.attn.weights` takes its explicit path and
returns the (B, H, L + 1, L + 1) weights over the time steps and the stats token. That path must not change the
model's output (compared with the fused SDPA path of an untraced run), its weights must be the softmax the upstream
code computes (a float64 numpy computation from the layer's LayerNorm-1 output and wq, wk, written here), and the
capture must hand a reader the same weights."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from nilmbuild.model import Trace
from nilmbuild.model.names import attn, encoder

ROOT = Path(__file__).parent
CASES = ("condinilm_small", "condinilm_tuned", "condinilm_single", "nilmformer_small", "nilmformer_odd")


def _model(name: str):
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _build, _ref

    model, _, _ = _build(name)
    return model.eval(), _ref(name)


def _numpy_weights(ln1: np.ndarray, wq: np.ndarray, wk: np.ndarray, n_head: int, masked: bool) -> np.ndarray:
    """softmax(q k^T / sqrt(E)) per head in float64, the diagonal masked to exactly 0 (both upstreams' rule)."""
    B, T, _ = ln1.shape
    q = (ln1 @ wq.T).reshape(B, T, n_head, -1).transpose(0, 2, 1, 3)  # (B, H, T, E)
    k = (ln1 @ wk.T).reshape(B, T, n_head, -1).transpose(0, 2, 1, 3)
    s = np.einsum("bhte,bhse->bhts", q, k) / np.sqrt(q.shape[-1])
    if masked:
        s[:, :, np.arange(T), np.arange(T)] = -np.inf
    s -= s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    return w / w.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("name", CASES)
def test_explicit_path_returns_weights_over_the_stats_token_and_keeps_the_output(name):
    model, ref = _model(name)
    cfg = model.cfg
    x = torch.from_numpy(ref["model_input"])
    with torch.no_grad():
        fast = model(x).power.numpy()  # no trace: the fused SDPA path
        keep = {attn(l, "weights") for l in range(cfg.n_encoder_layers)} | {
            encoder(l, "ln1") for l in range(cfg.n_encoder_layers)
        }
        trace = Trace(keep=lambda n: n in keep)
        explicit = model(x, trace=trace).power.numpy()
    np.testing.assert_allclose(explicit, fast, rtol=0, atol=1e-5 * max(1.0, float(np.abs(fast).max())))
    T = cfg.window + 1  # the time steps and the stats token
    for l, layer in enumerate(model.encoder_layers):
        w = trace[attn(l, "weights")].numpy()
        assert w.shape == (x.shape[0], cfg.n_head, T, T)
        want = _numpy_weights(
            trace[encoder(l, "ln1")].numpy().astype(np.float64),
            layer.attn.wq.weight.detach().numpy().astype(np.float64),
            layer.attn.wk.weight.detach().numpy().astype(np.float64),
            cfg.n_head,
            cfg.mask_diagonal,
        )
        np.testing.assert_allclose(w, want, rtol=0, atol=2e-6, err_msg=f"{name} layer {l}")
        assert float(np.abs(np.diagonal(w, axis1=2, axis2=3)).max()) == 0.0  # a token never attends to itself


def test_ln1_the_weights_come_from_matches_the_upstream():
    """The LayerNorm-1 output the numpy weights above start from is the upstream's own (reference fixture)."""
    model, ref = _model("condinilm_small")
    n = ref["stage.encoder.0.ln1"].shape[0]
    trace = Trace(keep=lambda s: s == encoder(0, "ln1"))
    with torch.no_grad():
        model(torch.from_numpy(ref["model_input"][:n]), trace=trace)
    want = ref["stage.encoder.0.ln1"]
    np.testing.assert_allclose(trace[encoder(0, "ln1")].numpy(), want, rtol=0, atol=1e-5 * float(np.abs(want).max()))


def test_capture_hands_a_reader_the_weights():
    """The capture of an upstream model keeps every layer's q, k, lse and derived weights; what a reader rebuilds
    is the traced softmax within the capture's attention bound."""
    from nilmbuild.capture.capture import ATTN_WEIGHTS_TOL, capture_batch
    from nilmbuild.capture.format import decode, encode

    model, ref = _model("nilmformer_small")
    x = torch.from_numpy(ref["model_input"])
    cap = capture_batch(model, x)
    reader = decode(encode(cap, names=[attn(l, "weights") for l in range(model.cfg.n_encoder_layers)]))
    with torch.no_grad():
        trace = Trace(keep=lambda n: n.endswith(".attn.weights"))
        model(x, trace=trace)
    for l in range(model.cfg.n_encoder_layers):
        got = reader.get(attn(l, "weights"))
        assert got.shape == (x.shape[0], model.cfg.n_head, model.cfg.window + 1, model.cfg.window + 1)
        assert float(np.abs(got - trace[attn(l, "weights")].numpy()).max()) <= ATTN_WEIGHTS_TOL
