"""NILMFormer against the spec's arithmetic and hand-computed cases (not snapshots of our own output)."""

import math
import re

import pytest
import torch

from nilmbuild.model import NILMFormer, NILMFormerConfig, Trace, param_table
from nilmbuild.model.attention import DiagonallyMaskedSelfAttention
from nilmbuild.model.embedding import DilatedBlock
from nilmbuild.model.film import band_edges, condition_features, film
from nilmbuild.model.heads import smoothstep

B, L = 32, 480


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return NILMFormer(NILMFormerConfig()).eval()


@pytest.fixture(scope="module")
def traced(model):
    torch.manual_seed(1)
    x = torch.rand(B, 7, L)
    t = Trace()
    with torch.no_grad():
        out = model(x, trace=t)
    return x, out, t


def test_param_counts_match_spec_arithmetic(model):
    p = param_table(model)
    assert p["attention"] == 4 * 96 * 96 == 36_864
    assert p["ffn"] == (96 * 384 + 384) + (384 * 96 + 96) == 74_208
    assert p["encoder_layer"] == 2 * 192 + 36_864 + 74_208 == 111_456
    assert p["input_projection"] == 8 * 96 + 96 == 864
    assert p["pos_encoding"] == 8 * 480 == 3_840
    # 4 ResUnits: conv (8*7*3 + 8) + BN 16 + 1x1 residual 56, then 3 x (8*8*3 + 8 + 16)
    assert p["embedding"] == (168 + 8 + 16 + 56) + 3 * (192 + 8 + 16) == 896
    # Embedding(5, 32) + fc1 45->32 + fc2 32->576 (576 = 3 layers x 2 x 96)
    assert p["encoder_film"] == 5 * 32 + (45 * 32 + 32) + (32 * 576 + 576) == 20_640
    assert p["decoder_film"] == 5 * 32 + (45 * 32 + 32) + (32 * 2 + 2) == 1_698
    sparse = (96 * 64 * 3 + 64) + 128 + (64 * 64 * 3 + 64) + 128 + (64 * 2 + 2)
    regular = (96 * 128 * 3 + 128) + (128 * 128 * 3 + 128) + 2 * (128 + 1) + 1
    assert p["heads"] == {
        "kettle": sparse,
        "microwave": sparse,
        "fridge": regular,
        "dishwasher": regular,
        "washing_machine": regular,
    }
    assert 0.4e6 < p["total"] < 0.8e6  # the spec's "~0.55M" order


def test_shapes_at_every_stage(traced):
    _, out, t = traced
    expect = {
        "input": (B, 7, L),
        "instance_norm": (B, 7, L),
        "embed.res0.out": (B, 8, L),
        "embed.res3.out": (B, 8, L),
        "pos_encoding": (8, L),
        "projection": (B, 96, L),
        "cond.elec": (B, 5),
        "cond.bands": (B, 8),
        "cond.vector": (B, 13),
        "film_enc.input": (B, 5, 45),
        "film_enc.hidden": (B, 5, 32),
        "film_enc.gamma": (B, 5, 3, 96),
        "film_enc.beta_mean": (B, 3, 96),
        "encoder.0.ln1": (B, L, 96),
        "encoder.2.attn.q": (B, 8, L, 12),
        "encoder.1.attn.weights": (B, 8, L, L),
        "encoder.0.attn.merged": (B, L, 96),
        "encoder.0.ffn.hidden": (B, L, 384),
        "encoder.2.out": (B, L, 96),
        "film_dec.gamma": (B, 5),
        "heads.kettle.features": (B, 64, L),
        "heads.fridge.features": (B, 128, L),
        "heads.fridge.cls_prob": (B, L),
        "output.power": (B, 5, L),
        "output.gate": (B, 5, L),
    }
    for name, shape in expect.items():
        assert tuple(t[name].shape) == shape, name
    assert out.power.shape == out.gate.shape == (B, 5, L)
    majors = {re.match(r"\d+", r.stage).group() for r in t.records.values()}
    assert majors == {str(s) for s in range(13)}  # every stage 0-12 of forward-pass.md is traced


def test_instance_norm_is_per_sample_per_channel(traced):
    x, _, t = traced
    n = t["instance_norm"]
    x64 = x.double()
    expected = ((x64 - x64.mean(-1, keepdim=True)) / (x64.std(-1, keepdim=True) + 1e-5)).float()
    torch.testing.assert_close(n, expected)
    assert n.mean(-1).abs().max() < 1e-5


def test_instance_norm_of_a_constant_channel_is_exactly_zero():
    """float32 gives (c - mean) / (std + 1e-5) = rounding noise / ~1e-5 (up to 0.05, runtime-dependent)."""
    from nilmbuild.model.trace import Trace

    torch.manual_seed(0)
    m = NILMFormer(NILMFormerConfig()).eval()
    x = torch.rand(2, 7, m.cfg.window)
    x[:, 3] = 0.47115951776504517  # a day-of-year channel inside one day (float32 mean/std not exact)
    t = Trace()
    with torch.no_grad():
        m(x, trace=t)
    assert torch.all(t["instance_norm"][:, 3] == 0)


def test_attention_diagonal_zero_rows_sum_to_one(traced):
    _, _, t = traced
    for l in range(3):
        w = t[f"encoder.{l}.attn.weights"]
        assert torch.all(w.diagonal(dim1=-2, dim2=-1) == 0.0)
        assert (w.sum(-1) - 1).abs().max() < 1e-3
        assert torch.all(t[f"encoder.{l}.attn.masked_scores"].diagonal(dim1=-2, dim2=-1) == -1e4)


def test_attention_hand_computed():
    """Two positions, one head of size 1: with the diagonal masked each query puts all weight on the other key."""
    attn = DiagonallyMaskedSelfAttention(d_model=1, n_head=1, head_dim=1, dropout=0.0).eval()
    for lin in (attn.wq, attn.wk, attn.wv, attn.wo):
        lin.weight.data.fill_(1.0)
    x = torch.tensor([[[2.0], [5.0]]])  # (1, 2, 1)
    t = Trace()
    y = attn(x, mask_diagonal=True, trace=t, name="a")
    torch.testing.assert_close(t["a.weights"][0, 0], torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    torch.testing.assert_close(y, torch.tensor([[[5.0], [2.0]]]))  # each position reads the other's value
    # unmasked: softmax of q.k = [[4, 10], [10, 25]] rows
    t2 = Trace()
    attn(x, mask_diagonal=False, trace=t2, name="a")
    row0 = torch.softmax(torch.tensor([4.0, 10.0]), 0)
    torch.testing.assert_close(t2["a.weights"][0, 0, 0], row0)
    assert t2["a.weights"][0, 0, 0, 0] > 0


def test_explicit_equals_fast_path(model):
    torch.manual_seed(2)
    x = torch.randn(4, L, 96)
    attn = model.layers[0].attn
    for mask in (True, False):
        with torch.no_grad():
            slow = attn(x, mask_diagonal=mask, explicit=True)
            fast = attn(x, mask_diagonal=mask, explicit=False)
        assert (slow - fast).abs().max() < 1e-5


def test_mask_off_diagonal_not_zero(model):
    x = torch.rand(2, 7, L)
    t = Trace()
    with torch.no_grad():
        model(x, trace=t, mask_diagonal=False)
    assert torch.all(t["encoder.0.attn.weights"].diagonal(dim1=-2, dim2=-1) > 0)
    assert "encoder.0.attn.masked_scores" not in t


def test_film_identity_and_formula():
    x = torch.randn(3, 5, 4)
    zero = torch.zeros(3, 1, 4)
    torch.testing.assert_close(film(x, zero, zero), x)
    torch.testing.assert_close(
        film(torch.tensor([0.3]), torch.tensor([0.2]), torch.tensor([0.05])), torch.tensor([0.41])
    )
    assert film(torch.tensor([float("nan")]), zero[0, 0, :1], zero[0, 0, :1]).item() == 0.0


def test_film_off_equals_zero_film(model):
    """use_film=False must equal a model whose FiLM generators output gamma = beta = 0."""
    x = torch.rand(2, 7, L)
    with torch.no_grad():
        off = model(x, use_film=False).power
        m2 = NILMFormer(model.cfg).eval()
        m2.load_state_dict(model.state_dict())
        for gen in (m2.encoder_film.gen, m2.decoder_film.gen):
            gen.fc2.weight.zero_(), gen.fc2.bias.zero_()
        zero = m2(x).power
    torch.testing.assert_close(off, zero)


def test_smoothstep_and_gates(model):
    p = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
    torch.testing.assert_close(smoothstep(p), torch.tensor([0.0, 0.15625, 0.5, 0.84375, 1.0]))
    x = torch.rand(2, 7, L)
    t = Trace()
    with torch.no_grad():
        model(x, trace=t, gate_mode="hard")
    for dev in model.cfg.devices:
        pr = t[f"heads.{dev.name}.gate_prob"]
        torch.testing.assert_close(t[f"heads.{dev.name}.soft_gate"], pr * pr * (3 - 2 * pr))
        assert torch.equal(t[f"heads.{dev.name}.hard_gate"], (pr > dev.gate_threshold).float())
        torch.testing.assert_close(
            t[f"heads.{dev.name}.power_hard"], t[f"heads.{dev.name}.hard_gate"] * t[f"heads.{dev.name}.power_raw"]
        )
    cls = t["heads.fridge.cls_prob"]
    assert cls.min() >= 0 and cls.max() <= 2
    torch.testing.assert_close(cls / 2, t["heads.fridge.gate_prob"])


def test_eval_is_deterministic_and_train_mode_is_soft(model):
    x = torch.rand(2, 7, L)
    with torch.no_grad():
        a, b = model(x).power, model(x).power
    assert torch.equal(a, b)
    torch.manual_seed(0)
    m = NILMFormer(NILMFormerConfig())
    m.train()
    t = Trace()
    m(x, trace=t)
    assert "soft-gated" in t.records["heads.fridge.power"].doc


def test_condition_features_hand_computed():
    x = torch.tensor([[[0.0, 1.0, 0.0, 1.0]]])  # mean .5, std .5, rms sqrt(.5), peak 1
    c = condition_features(x, True, True, 2)
    rms = math.sqrt(0.5 + 1e-6)
    torch.testing.assert_close(c[0, :5], torch.tensor([0.5, 0.5, rms, 1.0, 1.0 / (rms + 1e-6)]))
    # centred [-.5, .5, -.5, .5]: rFFT bins 0, 1, 2 have |X| = 0, 0, 2 -> bands [0:2] = 0, [2:3] = 2 (edges round(i*3/2) = 0, 2, 3)
    assert band_edges(3, 2) == [0, 2, 3]
    torch.testing.assert_close(c[0, 5:], torch.tensor([0.0, 2.0]))
    assert band_edges(241, 8) == [0, 30, 60, 90, 120, 151, 181, 211, 241]


def test_receptive_field():
    assert DilatedBlock.receptive_fields(3, (1, 2, 4, 8)) == [3, 7, 15, 31]


def test_spec_notes_doc_is_rendered_from_source():
    from pathlib import Path

    from nilmbuild.model.spec_notes import render_markdown

    doc = Path(__file__).resolve().parents[1] / "docs" / "spec-notes.md"
    assert doc.read_text() == render_markdown(), "run: python -m nilmbuild.model.spec_notes > docs/spec-notes.md"


def test_record_names_come_from_model_names_and_derivations_name_real_records(model, traced):
    """The names capture and the views import (model.names) are the names the model traces, and every
    derivation the model declares at trace.put names records that exist (a traced tensor or a weight)."""
    from nilmbuild.capture.format import deps_of
    from nilmbuild.model import names

    _, _, t = traced
    traced_names = set(t.names())
    for l in range(model.cfg.n_encoder_layers):
        assert {names.encoder(l, s) for s in names.ENCODER_STEPS} <= traced_names
        assert {names.attn(l, p) for p in names.ATTN_PARTS} <= traced_names
    for d in model.cfg.device_names:
        assert {names.head(d, p) for p in names.HEAD_PARTS} <= traced_names
    weights = {f"weights.{k}" for k in ("input_projection.weight", "input_projection.bias")}
    for l in range(model.cfg.n_encoder_layers):
        weights |= {f"weights.encoder.{l}.attn.{w}" for w in ("wv", "wo")}
        weights |= {
            f"weights.encoder.{l}.{n}.{p}" for n in ("norm1", "norm2", "ffn.layer1") for p in ("weight", "bias")
        }
    derived = {n: r.derive for n, r in t.records.items() if r.derive}
    assert len(derived) >= 10 * model.cfg.n_encoder_layers
    for n, d in derived.items():
        for dep in deps_of({"encoding": "derived", **d}):
            assert dep in traced_names or dep in weights, (n, dep)
    assert t.records[names.encoder(1, "resid1")].derive == {"op": "add", "a": "encoder.1.in", "b": "encoder.1.attn.out"}


def test_diagonal_mask_is_the_identity_and_obeys_its_flag():
    from nilmbuild.model.attention import diagonal_mask

    assert torch.equal(diagonal_mask(5, torch.device("cpu")), torch.eye(5, dtype=torch.bool))
    assert not diagonal_mask(5, torch.device("cpu"), torch.tensor(False)).any()


def test_rfft_magnitude_traced_for_onnx_equals_torch():
    """While traced (the ONNX export), film.rfft_magnitude goes through its DFT symbolic's autograd Function,
    whose values must be torch's |rFFT|."""
    from nilmbuild.model.film import rfft_magnitude

    x = torch.randn(2, 480, generator=torch.Generator().manual_seed(0))
    traced = torch.jit.trace(rfft_magnitude, (x,), check_trace=False)
    assert "_OnnxRfftMagnitude" in str(traced.graph)
    assert torch.equal(traced(x), torch.fft.rfft(x, dim=-1).abs())
