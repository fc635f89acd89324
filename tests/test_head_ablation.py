"""Head ablation (which heads serve which device): reproducible, and a cell re-run independently."""

import copy

import numpy as np
import pytest
import torch

from nilmbuild.capture.head_ablation import HEAD_ABLATION_SAMPLES, head_ablation, varied_samples
from nilmbuild.data.preprocess import scaler_from_dict
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer

TINY = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 2, "window": 32, "film_hidden_dim": 8}


@torch.no_grad()
def watts_without_head(model, x, layer, head, scalers, devices):
    """Independent: the head's E columns of Wo set to zero (same as its context being zero), plain forward."""
    m = copy.deepcopy(model).eval()
    E = m.layers[layer].attn.head_dim
    m.layers[layer].attn.wo.weight[:, head * E : (head + 1) * E] = 0.0
    p = m(torch.as_tensor(x), gate_mode="hard").power.numpy()
    return np.stack(
        [np.clip(scaler_from_dict(scalers["appliances"][d]).inverse(p[:, i]), 0, None) for i, d in enumerate(devices)],
        axis=1,
    )


@torch.no_grad()
def plain_watts(model, x, scalers, devices):
    p = model.eval()(torch.as_tensor(x), gate_mode="hard").power.numpy()
    return np.stack(
        [np.clip(scaler_from_dict(scalers["appliances"][d]).inverse(p[:, i]), 0, None) for i, d in enumerate(devices)],
        axis=1,
    )


def test_reproducible_and_a_cell_by_hand_on_a_tiny_model():
    torch.manual_seed(0)
    model = NILMFormer(NILMFormerConfig(**TINY)).eval()
    devs = model.cfg.device_names
    scalers = {"appliances": {d: {"kind": "max", "max": 1000.0 + 100 * i} for i, d in enumerate(devs)}}
    x = torch.randn(5, 7, 32).numpy()
    a, b = head_ablation(model, x, scalers, [1, 3]), head_ablation(model, x, scalers, [1, 3])
    assert np.array_equal(a["delta_w"], b["delta_w"]) and np.array_equal(a["sample"], b["sample"])
    assert a["delta_w"].shape == (2, 2, len(devs)) and a["delta_w"].max() > 0
    ref = np.abs(
        watts_without_head(model, x[[1, 3]], 1, 0, scalers, devs) - plain_watts(model, x[[1, 3]], scalers, devs)
    )
    per = ref.mean(axis=2)  # (S, D)
    assert np.allclose(a["delta_w"][1, 0], per.mean(axis=0), rtol=1e-4, atol=1e-3)
    assert list(a["sample"][1, 0]) == [[1, 3][k] for k in per.argmax(axis=0)]


def test_varied_samples_are_the_busiest_windows_in_batch_order():
    x = np.zeros((4, 7, 10), np.float32)
    x[2, 0, ::2] = 1.0
    x[0, 0, :3] = 0.5
    assert varied_samples(x, 2) == [0, 2] and varied_samples(x, 9) == [0, 1, 2, 3]


def test_shipped_capture_holds_the_matrix_and_its_biggest_cell_reruns(site_context):
    cap = site_context.capture
    loaded = site_context.loaded
    cfg = loaded.cfg
    r = cap.records["ablation.heads.delta_w"]
    assert r.shape == (cfg.n_encoder_layers, cfg.n_head, len(cfg.device_names))
    meta = cap.meta["head_ablation"]
    assert meta["samples"] == varied_samples(site_context.x, HEAD_ABLATION_SAMPLES)
    l, h, d = np.unravel_index(int(np.argmax(r.tensor)), r.shape)
    xs = np.asarray(site_context.x)[meta["samples"]]
    diff = np.abs(
        watts_without_head(loaded.model, xs, l, h, loaded.scalers, cfg.device_names)
        - plain_watts(loaded.model, xs, loaded.scalers, cfg.device_names)
    )[:, d].mean(axis=1)  # (S,)
    assert r.tensor[l, h, d] == pytest.approx(diff.mean(), rel=1e-3, abs=1e-2)
    assert cap.records["ablation.heads.sample"].tensor[l, h, d] == meta["samples"][int(diff.argmax())]
