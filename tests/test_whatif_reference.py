"""Every what-if control moved at once equals the model changed by hand (issue 36).

The reference never goes through nilmbuild.model.whatif: the encoder FiLM's (gamma, beta) are rewritten by a forward
hook as gamma * gs + go and beta * bs + bo with a different value per layer and per control (so a control that reads
another's value shows), the thresholds are written into the model's own buffer, and the diagonal mask, soft gate and
FiLM off are the forward pass's own switches.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.whatif import WhatIf

LAYERS = 3
# per layer: gamma scale, gamma offset, beta scale, beta offset: four different values in every row
AFFINE = np.array([[1.7, 0.31, 0.45, -0.27], [0.6, -0.12, 2.2, 0.19], [2.4, 0.05, 1.3, -0.4]], np.float32)
THRESHOLDS = [0.15, 0.32, 0.62, 0.8, 0.99]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(3)
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=LAYERS)
    return NILMFormer(cfg).eval()


@pytest.fixture(scope="module")
def x():
    return torch.from_numpy(np.random.default_rng(5).normal(size=(2, 7, 48)).astype(np.float32))


def by_hand(model, x, affine=None, thresholds=None, **forward_kw):
    """The model's forward pass with the FiLM affine applied by a hook and the thresholds written in its buffer."""
    a = torch.from_numpy(AFFINE if affine is None else affine)

    def hook(_module, _inputs, out):
        gamma, beta = out  # (B, layers, d_model)
        return gamma * a[:, 0:1] + a[:, 1:2], beta * a[:, 2:3] + a[:, 3:4]

    handle = model.encoder_film.register_forward_hook(hook)
    own = model.gate_thresholds.clone()
    try:
        if thresholds is not None:
            model.gate_thresholds.copy_(torch.tensor(thresholds))
        with torch.no_grad():
            return model(x, **forward_kw)
    finally:
        handle.remove()
        model.gate_thresholds.copy_(own)


def what_if(model, x, **changes):
    wi = WhatIf.defaults(model.cfg).replace(**changes)
    with torch.no_grad():
        return model(x, gate_mode="hard", what_if=wi)


def same(a, b):
    for k in ("power", "gate", "power_raw"):
        np.testing.assert_allclose(getattr(a, k).numpy(), getattr(b, k).numpy(), rtol=0, atol=1e-5, err_msg=k)


def test_affine_thresholds_and_mask_together(model, x):
    got = what_if(model, x, film_enc_affine=AFFINE, thresholds=THRESHOLDS, mask_diagonal=0.0)
    same(got, by_hand(model, x, thresholds=THRESHOLDS, gate_mode="hard", mask_diagonal=False))
    with torch.no_grad():
        base = model(x, gate_mode="hard")
    assert (got.power - base.power).abs().max() > 1e-3  # the controls did move the answer


def test_affine_with_the_soft_gate(model, x):
    got = what_if(model, x, film_enc_affine=AFFINE, thresholds=THRESHOLDS, soft_gate=1.0, mask_diagonal=0.0)
    same(got, by_hand(model, x, gate_mode="soft", mask_diagonal=False))


def test_each_offset_is_its_own(model, x):
    """Only the beta offset moved, then only the gamma offset: each equals its own hand-made change."""
    for col in (1, 3):
        aff = np.tile(np.array([1.0, 0.0, 1.0, 0.0], np.float32), (LAYERS, 1))
        aff[:, col] = [0.3, -0.2, 0.25]
        got = what_if(model, x, film_enc_affine=aff)
        same(got, by_hand(model, x, affine=aff, gate_mode="hard"))
        with torch.no_grad():
            assert (got.power_raw - model(x, gate_mode="hard").power_raw).abs().max() > 1e-4


def test_film_off_overrides_every_affine(model, x):
    got = what_if(model, x, film_enc_affine=AFFINE, film_on=0.0, thresholds=THRESHOLDS)
    with torch.no_grad():
        own = model.gate_thresholds.clone()
        model.gate_thresholds.copy_(torch.tensor(THRESHOLDS))
        try:
            want = model(x, gate_mode="hard", use_film=False)
        finally:
            model.gate_thresholds.copy_(own)
    same(got, want)


@pytest.mark.parametrize("use_film, mask", [(False, False), (True, False), (False, True)])
def test_defaults_are_the_configured_model(use_film, mask, x):
    """WhatIf.defaults of a model configured without FiLM or without the diagonal mask: FiLM off / mask off, hard
    gate, and the same output as the model run without a what-if."""
    torch.manual_seed(4)
    cfg = NILMFormerConfig(
        d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=2, use_film=use_film, mask_diagonal=mask
    )
    m = NILMFormer(cfg).eval()
    d = WhatIf.defaults(cfg)
    assert [float(d.film_on), float(d.mask_diagonal), float(d.soft_gate)] == [float(use_film), float(mask), 0.0]
    with torch.no_grad():
        same(m(x, gate_mode="hard", what_if=d), m(x, gate_mode="hard"))


def test_a_flag_of_one_half_is_off(model, x):
    """A flag is on above 0.5 only: mask_diagonal 0.5 is the unmasked model, soft_gate 0.5 the hard gate."""
    identity = np.tile(np.array([1.0, 0.0, 1.0, 0.0], np.float32), (LAYERS, 1))
    same(
        what_if(model, x, mask_diagonal=0.5), by_hand(model, x, affine=identity, gate_mode="hard", mask_diagonal=False)
    )
    same(what_if(model, x, soft_gate=0.5), by_hand(model, x, affine=identity, gate_mode="hard"))
    assert model.cfg.mask_diagonal  # so that 0.5 read as on would differ
    with torch.no_grad():
        assert (model(x, gate_mode="soft").power - model(x, gate_mode="hard").power).abs().max() > 1e-4
