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


def test_a_model_left_in_train_mode_still_predicts_in_eval_mode(model):
    """Dropout (0.2) is on in train mode: seq2subseq must switch it off, or every prediction changes."""
    x = np.random.default_rng(5).normal(size=(7, 100)).astype(np.float32)
    ref = loop_reference(model, x)  # the fixture's model is in eval mode
    model.train()
    try:
        res = seq2subseq(model, x, batch_size=2)
    finally:
        model.eval()
    np.testing.assert_allclose(res.power, ref["power"], atol=1e-6, rtol=0)


def test_default_geometry_by_hand_and_bad_arguments():
    g = geometry(1000)  # W = 480: centre 240, margin 120, ceil(1000 / 240) = 5 windows
    assert (g.window, g.centre, g.margin, g.n_windows, g.pad_left, g.pad_right) == (480, 240, 120, 5, 120, 320)
    for w in (0, 2, 6, 482):
        with pytest.raises(ValueError, match="multiple of 4"):
            geometry(10, w)
    with pytest.raises(ValueError, match="at least one sample"):
        geometry(0, 48)


def test_a_series_without_a_channel_axis_is_a_value_error(model):
    with pytest.raises(ValueError, match=r"\(channels, T\)"):
        seq2subseq(model, np.zeros(100, np.float32))


def test_the_smallest_window_and_an_inferred_time_step():
    g = geometry(5, 4)  # W = 4: centre 2, margin 1, 3 windows
    assert (g.centre, g.margin, g.n_windows, g.pad_right) == (2, 1, 3, 2)
    ts = np.datetime64("2024-03-01T23:50", "s") + np.arange(10) * np.timedelta64(60, "s")
    x = np.concatenate([np.arange(10, dtype=np.float32)[None], exogenous(ts)])
    q = pad_series(x, 3, 4, timestamps=ts)  # the step comes from the timestamps: 60 s
    ext = ts[0] + np.arange(-3, 14) * np.timedelta64(60, "s")
    np.testing.assert_allclose(q[1:], exogenous(ext), atol=1e-6)


class _UpstreamStub(torch.nn.Module):
    """What seq2subseq reads of an upstream model (model/upstream): `cfg.arch`, and an output with `power`,
    `power_ungated` and `gate` None (the original NILMFormer has no gate). Power = 2 x the input's power channel,
    ungated power = 3 x."""

    def __init__(self):
        super().__init__()
        from types import SimpleNamespace

        self.cfg = SimpleNamespace(arch="nilmformer", window=8, exo_variables=None)

    def forward(self, xb):
        from types import SimpleNamespace

        p = xb[:, :1]
        return SimpleNamespace(power=2 * p, power_ungated=3 * p, gate=None)


def test_an_upstream_model_without_a_gate_gets_gate_one():
    x = np.zeros((7, 20), np.float32)
    x[0] = np.arange(20)
    res = seq2subseq(_UpstreamStub(), x)
    np.testing.assert_allclose(res.power, 2 * x[:1])
    np.testing.assert_allclose(res.power_raw, 3 * x[:1])
    np.testing.assert_allclose(res.gate, np.ones((1, 20)))


class _WindowMeanStub(_UpstreamStub):
    """An upstream model with its own time features (hour only: 1 + 2 channels) whose power is the mean of its
    window's first time channel: padding shows in every window that has some."""

    def __init__(self):
        super().__init__()
        self.cfg.exo_variables = ["hour"]

    def forward(self, xb):
        from types import SimpleNamespace

        p = xb[:, 1:2].mean(dim=2, keepdim=True).expand(-1, 1, xb.shape[2])
        return SimpleNamespace(power=p, power_ungated=p, gate=None)


def test_an_upstream_models_padding_gets_its_own_time_features():
    from nilmbuild.model.upstream.inputs import time_features

    T, W, C = 10, 8, 4
    ts = np.datetime64("2024-01-01T00:00", "s") + np.arange(T) * np.timedelta64(3600, "s")
    x = np.concatenate([np.zeros((1, T), np.float32), time_features(ts, ["hour"])])
    res = seq2subseq(_WindowMeanStub(), x, timestamps=ts)
    ext = ts[0] + np.arange(-2, T + 4) * np.timedelta64(3600, "s")  # M = 2 before, n C + M - T = 4 after
    hour_sin = time_features(ext, ["hour"])[0]
    want = [hour_sin[(t // C) * C : (t // C) * C + W].mean() for t in range(T)]
    np.testing.assert_allclose(res.power[0], want, atol=1e-6)


def test_batch_size_zero_means_one_and_a_one_sample_series_with_timestamps(model):
    x = np.random.default_rng(9).normal(size=(7, 100)).astype(np.float32)
    for b in (0, 1):  # 0 counts as 1
        np.testing.assert_allclose(
            seq2subseq(model, x, batch_size=b).power, loop_reference(model, x)["power"], atol=1e-6
        )
    ts = np.array(["2024-03-01T23:59"], dtype="datetime64[s]")
    x1 = np.concatenate([np.ones((1, 1), np.float32), exogenous(ts)])
    q = pad_series(x1, 2, 3, timestamps=ts)  # one stamp: no step to read, 60 s is assumed
    ext = ts[0] + np.arange(-2, 4) * np.timedelta64(60, "s")
    np.testing.assert_allclose(q[1:], exogenous(ext), atol=1e-6)
    ts2 = ts[0] + np.array([0, 1800], dtype="timedelta64[s]")  # two stamps: the step is theirs, 30 min
    x2 = np.concatenate([np.ones((1, 2), np.float32), exogenous(ts2)])
    ext2 = ts[0] + np.arange(-2, 5) * np.timedelta64(1800, "s")
    np.testing.assert_allclose(pad_series(x2, 2, 3, timestamps=ts2)[1:], exogenous(ext2), atol=1e-6)
