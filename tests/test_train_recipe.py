"""The training recipe around the model: crops with sliced positions, learned task weights, random window
offsets, the learning-rate schedule, and every combination of the condition-feature switches."""

import itertools

import numpy as np
import pytest
import torch

from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer
from nilmbuild.train.crops import sample_crops, take_crops
from nilmbuild.train.losses import uncertainty_weighted
from nilmbuild.train.trainer import TrainConfig, load_prepared, lr_factor
from nilmbuild.train.windows import TrainSeries

SMALL = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 1, "window": 32, "film_hidden_dim": 8}


def test_take_crops_picks_the_right_steps():
    t = torch.arange(2 * 3 * 10, dtype=torch.float32).view(2, 3, 10)
    rows, starts = torch.tensor([1, 0, 1]), torch.tensor([0, 4, 6])
    c = take_crops(t, rows, starts, 4)
    assert c.shape == (3, 3, 4)
    assert torch.equal(c[0], t[1, :, 0:4]) and torch.equal(c[1], t[0, :, 4:8]) and torch.equal(c[2], t[1, :, 6:10])


def test_event_biased_crops_contain_an_on_step_and_stay_inside():
    states = torch.zeros(4, 2, 100)
    states[:, 1, 70:73] = 1.0  # one short event per window
    g = torch.Generator().manual_seed(0)
    rows, starts = sample_crops(states, g, crop_len=20, p_event=1.0)
    k = rows.numel() // 4
    assert 2 <= k <= 4 and torch.equal(rows, torch.arange(4).repeat_interleave(k))
    assert (starts >= 0).all() and (starts + 20 <= 100).all()
    assert all(s <= 72 and s + 20 > 70 for s in starts.tolist())  # every crop covers part of the event


def test_crop_sees_the_positional_encoding_at_its_positions():
    torch.manual_seed(0)
    net = NILMFormer(NILMFormerConfig(**SMALL))
    pe = net.positional(torch.tensor([0, 5, 16]), 16)  # (3, 8, 16)
    full = net.pos_encoding[0]
    for b, s in enumerate([0, 5, 16]):
        assert torch.equal(pe[b], full[:, s : s + 16])
    assert net.positional(None, 32) is net.pos_encoding
    with pytest.raises(ValueError):
        net.positional(torch.tensor([20]), 16)  # reaches past position 31
    out = net(torch.randn(3, 7, 16), pos_start=torch.tensor([0, 5, 16]))
    assert out.power.shape == (3, 5, 16)
    # the positional slice changes the answer: the same crop at two positions gives two outputs
    net.eval()
    x = torch.randn(1, 7, 16).repeat(2, 1, 1)
    o = net(x, pos_start=torch.tensor([0, 16]), gate_mode="soft").power_raw
    assert not torch.allclose(o[0], o[1])


def test_uncertainty_weights_move_towards_inverse_loss():
    """Two tasks with losses 4 and 0.25: minimising exp(-s) L + s drives the weights exp(-s) to 1/4 and 4."""
    losses = torch.tensor([4.0, 0.25])
    s = torch.zeros(2, requires_grad=True)
    opt = torch.optim.SGD([s], lr=0.1)
    for _ in range(400):
        opt.zero_grad()
        uncertainty_weighted(losses, s).sum().backward()
        opt.step()
    w = torch.exp(-s).detach()
    assert w[0] == pytest.approx(0.25, rel=1e-3) and w[1] == pytest.approx(4.0, rel=1e-3)


def test_lr_schedule_warms_up_then_decays_to_the_floor():
    f = [lr_factor(i, 100, 0.1, 0.05) for i in range(100)]
    assert f[0] == pytest.approx(0.1) and f[9] == pytest.approx(1.0)  # linear warm-up over 10 steps
    assert f[10] == pytest.approx(1.0) and all(a >= b for a, b in zip(f[10:], f[11:]))
    assert f[99] == pytest.approx(0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * 89 / 90)))
    assert lr_factor(55, 100, 0.1, 0.05) == pytest.approx(0.05 + 0.95 * 0.5)  # half way through the decay


def test_random_windows_are_valid_reproducible_and_fresh():
    prep = load_prepared(TrainConfig(days=3, model=SMALL), 32)
    ts = TrainSeries(prep, [8] * len(prep.devices), 32)
    a, b, c = ts.draw(16, 1), ts.draw(16, 1), ts.draw(16, 2)
    assert all(torch.equal(a[k], b[k]) for k in a) and not torch.equal(a["x"], c["x"])
    assert a["x"].shape == (16, 7, 32) and a["lo"].shape == a["y"].shape == (16, len(prep.devices), 32)
    # every drawn window is a slice of the continuous train block
    x = ts.x
    for w in a["x"][:4].numpy():
        hits = [s for s in ts.starts if np.array_equal(x[:, s : s + 32], w)]
        assert hits


def test_on_share_draws_windows_where_each_device_is_on():
    """Balanced sampling: with on_share 1 every window holds an ON step of some device, and the rarest device is
    ON in about 1/D of them (the fridge, ON in nearly every window, no longer drowns it); 0 is the uniform draw,
    bit for bit (the same random numbers)."""
    prep = load_prepared(TrainConfig(days=3, model=SMALL), 32)
    ts = TrainSeries(prep, [8] * len(prep.devices), 32)
    assert len(ts.active) == len(prep.devices)  # each simulated device is ON somewhere in 3 days
    for d, starts in enumerate(ts.active):  # exactly the starts whose window holds an ON step of device d
        assert {int(s) for s in starts} == {int(s) for s in ts.starts if ts.s[d, s : s + 32].max() > 0}
    rare = int(np.argmin([len(a) for a in ts.active]))
    on = lambda w, d: int((w["s"][:, d].amax(dim=1) > 0).sum())  # noqa: E731  windows where device d is ON
    uniform, every = ts.draw(200, 3), ts.draw(200, 3, 1.0)
    assert all(int((every["s"][i] > 0).sum()) > 0 for i in range(200))
    assert on(every, rare) >= 200 // len(prep.devices) // 2 > on(uniform, rare)
    assert all(torch.equal(uniform[k], ts.draw(200, 3, 0.0)[k]) for k in uniform)


def test_on_share_needs_random_windows():
    from click.testing import CliRunner

    from nilmbuild.cli import main

    r = CliRunner().invoke(main, ["train", "--days", "3", "--on-share", "0.5", "--fixed-grid"])
    assert r.exit_code != 0 and "--on-share draws random windows" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("elec,freq,film,mask", list(itertools.product([False, True], repeat=4)))
def test_every_switch_combination_builds_runs_and_trains(elec, freq, film, mask):
    cfg = NILMFormerConfig(**SMALL, use_elec_features=elec, use_freq_features=freq, use_film=film, mask_diagonal=mask)
    net = NILMFormer(cfg)
    out = net(torch.randn(2, 7, 32))
    out.power.sum().backward()
    assert cfg.n_cond == 5 * elec + 8 * freq and torch.isfinite(out.power).all()


@pytest.mark.parametrize("kind", ["max", "minmax", "standard", "mean"])
def test_scaler_option_scales_the_aggregate_and_keeps_targets_max_scaled(kind):
    prep = load_prepared(TrainConfig(days=2, scaler=kind, model=SMALL), 32)
    assert prep.scalers["aggregate"]["kind"] == kind
    assert {s["kind"] for s in prep.scalers["appliances"].values()} == {"max"}
    assert prep.train.y[:, :, 0].min() >= 0.0  # targets stay >= 0 for the heads
