"""Each loss component on tiny hand-computed tensors (B=1, D=1, L=4)."""

import numpy as np
import pytest
import torch

from nilmbuild.train.losses import LossWeights, device_losses, long_off_mask, loss_components, weight_matrix


def t(*v):
    return torch.tensor(v, dtype=torch.float32).view(1, 1, -1)


@pytest.fixture
def comps():
    p = t(0.0, 0.5, 1.0, 0.2)  # prediction
    y = t(0.0, 1.0, 1.0, 0.0)  # target
    s = t(0.0, 1.0, 1.0, 0.0)  # ON states
    logit = t(0.0, 0.0, 0.0, 0.0)
    lo = t(1.0, 0.0, 0.0, 0.0)
    return loss_components(p, logit, y, s, None, lo, torch.tensor([2.0]))


def test_mae_on_off(comps):
    assert comps["mae_on"].item() == pytest.approx((0.5 + 0.0) / 2, abs=1e-5)
    assert comps["mae_off"].item() == pytest.approx((0.0 + 0.2) / 2, abs=1e-5)


def test_peak_grad_energy(comps):
    assert comps["peak"].item() == pytest.approx(0.0, abs=1e-6)  # max 1.0 vs 1.0
    # dp = [0.5, 0.5, -0.8], dy = [1, 0, -1] -> |.| = [0.5, 0.5, 0.2]
    assert comps["grad"].item() == pytest.approx(1.2 / 3, abs=1e-5)
    assert comps["energy"].item() == pytest.approx(abs(1.7 / 4 - 2.0 / 4), abs=1e-5)


def test_zero_long_off_gate(comps):
    assert comps["zero"].item() == pytest.approx(0.1, abs=1e-5)  # relu(p) over OFF: (0 + 0.2) / 2
    assert comps["long_off"].item() == pytest.approx(0.0, abs=1e-6)  # only sample 0, where p = 0
    # logit 0: ON samples -2 * log(0.5), OFF samples -log(0.5); mean over 4
    assert comps["gate_bce"].item() == pytest.approx((2 * 2 + 2) * np.log(2) / 4, abs=1e-5)


def test_anti_collapse_and_out_stats(comps):
    # ON energy: pred 1.5 vs target 2.0 -> 1 - 0.75
    assert comps["anti_collapse"].item() == pytest.approx(0.25, abs=1e-5)
    mp, my = 1.7 / 4, 0.5
    sp = np.sqrt(np.mean((np.array([0, 0.5, 1.0, 0.2]) - mp) ** 2))
    assert comps["out_stats"].item() == pytest.approx(abs(mp - my) + abs(sp - 0.5), abs=1e-4)


def test_mask_restricts_every_component():
    p, y = t(5.0, 0.5, 1.0, 5.0), t(0.0, 1.0, 1.0, 0.0)
    c = loss_components(p, t(0, 0, 0, 0), y, y, t(0.0, 1.0, 1.0, 0.0), None)
    assert c["mae_on"].item() == pytest.approx(0.25, abs=1e-5)
    assert c["mae_off"].item() == pytest.approx(0.0, abs=1e-5)  # no OFF sample inside the mask
    assert c["peak"].item() == pytest.approx(0.0, abs=1e-6)


def test_weighted_sum_per_device():
    p = torch.zeros(2, 3, 8)
    c = loss_components(p, p, p + 0.5, torch.ones(2, 3, 8))
    w = [
        LossWeights(alpha_on=1.0, alpha_off=0, w_peak=0, w_grad=0, w_energy=0, lambda_zero=0, lambda_off=0, w_gate=0)
    ] * 3
    d = device_losses(c, weight_matrix(w, anti_collapse=0.0, out_stats_alpha=0.0))
    assert d.shape == (3,) and torch.allclose(d, torch.full((3,), 0.5))


def test_long_off_mask():
    s = np.array([[[1, 0, 0, 0, 1, 0, 0, 1]]])
    m = long_off_mask(s, [2])
    assert m.tolist() == [[[0, 1, 1, 1, 0, 0, 0, 0]]]
