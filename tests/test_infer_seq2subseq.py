"""Seq2subseq: batched stitching equals a plain window-by-window loop; any length T works."""

import numpy as np
import pytest
import torch

from nilmbuild.data.preprocess import exogenous
from nilmbuild.infer import geometry, pad_series, seq2subseq
from nilmbuild.model import NILMFormer, NILMFormerConfig

W = 48


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return NILMFormer(NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=W, n_encoder_layers=1)).eval()


def loop_reference(model, x):
    """One window at a time, written independently of seq2subseq."""
    T = x.shape[1]
    C, M = W // 2, W // 4
    n = -(-T // C)
    xp = np.concatenate([np.repeat(x[:, :1], M, 1), x, np.repeat(x[:, -1:], n * C + M - T, 1)], axis=1)
    parts = {"power": [], "gate": [], "power_raw": []}
    with torch.no_grad():
        for k in range(n):
            out = model(torch.from_numpy(xp[None, :, k * C : k * C + W].copy()), gate_mode="hard")
            for key in parts:
                parts[key].append(getattr(out, key)[0, :, M : M + C].numpy())
    return {k: np.concatenate(v, axis=1)[:, :T] for k, v in parts.items()}


@pytest.mark.parametrize(
    "T,batch_size", [(1, 1), (7, 64), (W - 1, 3), (W, 1), (100, 3), (5 * W // 2 + 3, 4), (4 * W, 64)]
)
def test_matches_plain_loop(model, T, batch_size):
    x = np.random.default_rng(T).normal(size=(7, T)).astype(np.float32)
    res = seq2subseq(model, x, batch_size=batch_size)
    ref = loop_reference(model, x)
    for key in ("power", "gate", "power_raw"):
        got = getattr(res, key)
        assert got.shape == (5, T)
        np.testing.assert_allclose(got, ref[key], atol=1e-6, rtol=0)


def test_geometry_and_seams(model):
    T = 100  # not a multiple of the stride (24)
    g = geometry(T, W)
    assert (g.centre, g.margin, g.n_windows, g.pad_left) == (24, 12, 5, 12)
    assert g.pad_right == 5 * 24 + 12 - T and g.pad_right >= g.margin
    res = seq2subseq(model, np.zeros((7, T), np.float32))
    assert res.window_starts.tolist() == [-12, 12, 36, 60, 84]
    assert res.seams.tolist() == [24, 48, 72, 96]
    assert res.centres.tolist() == [[0, 24], [24, 48], [48, 72], [72, 96], [96, 100]]


def test_short_series_single_window(model):
    res = seq2subseq(model, np.ones((7, 5), np.float32))
    assert res.power.shape == (5, 5) and res.geometry.n_windows == 1 and res.seams.size == 0


def test_progress_and_model_mode_restored(model):
    calls = []
    model.train()
    seq2subseq(model, np.zeros((7, 200), np.float32), batch_size=4, progress=lambda d, t: calls.append((d, t)))
    assert model.training
    model.eval()
    assert calls == [(4, 9), (8, 9), (9, 9)]


def test_pad_edge_and_time_features():
    ts = np.datetime64("2024-03-01T23:50", "s") + np.arange(10) * np.timedelta64(60, "s")
    x = np.concatenate([np.arange(10, dtype=np.float32)[None], exogenous(ts)])
    p = pad_series(x, 3, 4)  # edge replicate everywhere
    assert p.shape == (7, 17)
    assert p[0, :3].tolist() == [0, 0, 0] and p[0, -4:].tolist() == [9, 9, 9, 9]
    np.testing.assert_array_equal(p[:, 3:13], x)
    q = pad_series(x, 3, 4, timestamps=ts, step_s=60)  # time features continue past the ends
    ext = ts[0] + np.arange(-3, 14) * np.timedelta64(60, "s")
    np.testing.assert_allclose(q[1:], exogenous(ext), atol=1e-6)
    np.testing.assert_array_equal(q[0], p[0])
