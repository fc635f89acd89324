"""Gate calibration (train/trainer.py: calibrate_gates, apply_thresholds; device_types.gate_threshold_for)
on a stub model whose gate outputs are known, so every chosen threshold can be worked out by hand.

Three devices, 3 windows of 4 steps each, scalers "max" with max = 1000 W (scaled 0.1 = 100 W):
  kettle    ON windows have gate 0.62, false-positive windows 0.58: only a threshold in [0.58, 0.62)
            keeps the ON steps and drops the false ones (F1 1, MAE 0) -> grid threshold 0.60, unique.
  fridge    truth a constant 100 W and a 100 W train mean, so the mean baseline's MAE is 0 and no
            threshold can match it: the fallback picks the lowest MAE, which is at 0.60 (worked out below).
  microwave never ON in the validation windows: keeps its starting threshold.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.config import DeviceSpec, NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer
from nilmbuild.train.device_types import device_specs, gate_threshold_for
from nilmbuild.train.trainer import THRESHOLD_GRID, apply_thresholds, calibrate_gates

DEVS = ("kettle", "fridge", "microwave")
START = {"kettle": 0.75, "fridge": 0.5, "microwave": 0.7}
SCALE_W = 1000.0
L = 4

# per device: (gate, open-gate power W, truth W, ON state) for each of the 3 windows (constant inside a window)
CASE = {
    "kettle":    [(0.62, 2000, 2000, 1), (0.58, 2000, 0, 0), (0.05, 2000, 0, 0)],
    "fridge":    [(0.12, 100, 100, 1), (0.58, 400, 100, 1), (0.62, 100, 100, 1)],
    "microwave": [(0.90, 800, 0, 0), (0.30, 800, 0, 0), (0.05, 800, 0, 0)],
}


class StubModel(torch.nn.Module):
    """Looks like NILMFormer to calibrate_gates: cfg, a gate_thresholds buffer, forward -> .power/.gate.
    x[:, 0, 0] holds the window index; power is the open-gate power where gate > threshold, else 0."""

    def __init__(self):
        super().__init__()
        self.cfg = NILMFormerConfig(devices=tuple(DeviceSpec(d, "regular", START[d]) for d in DEVS))
        self.register_buffer("gate_thresholds", torch.tensor([START[d] for d in DEVS]))
        self.gate = torch.tensor([[[c[w][0]] * L for w in range(3)] for c in CASE.values()]).permute(1, 0, 2)
        self.open = torch.tensor([[[c[w][1] / SCALE_W] * L for w in range(3)] for c in CASE.values()]).permute(1, 0, 2)
        self.calls = []

    def forward(self, x):
        i = x[:, 0, 0].long()
        self.calls.append((self.gate_thresholds.clone(), self.training))
        g = self.gate[i]
        return SimpleNamespace(gate=g, power=torch.where(g > self.gate_thresholds[None, :, None], self.open[i], 0.0))


def val_data():
    y = torch.tensor([[[c[w][2] / SCALE_W] * L for w in range(3)] for c in CASE.values()]).permute(1, 0, 2)
    s = torch.tensor([[[float(c[w][3])] * L for w in range(3)] for c in CASE.values()]).permute(1, 0, 2)
    return {"x": torch.arange(3, dtype=torch.float32)[:, None, None].expand(3, 1, L).contiguous(), "y": y, "s": s}


def prepared():
    """What calibrate_gates reads: scalers, device order, train-split means (the baseline), W thresholds."""
    train_w = np.array([[0.0, 60.0], [100.0, 100.0], [0.0, 0.0]], dtype=np.float32)   # means 30 / 100 / 0 W
    return SimpleNamespace(
        devices=list(DEVS), thresholds_w={"kettle": 500.0, "fridge": 50.0, "microwave": 200.0},
        scalers={"appliances": {d: {"kind": "max", "max": SCALE_W} for d in DEVS}},
        train=SimpleNamespace(appliances_w=train_w, valid=np.array([True, True])))


def mae_at(dev, t):
    """The MAE (W) calibrate_gates should score for `dev` at threshold t, from the table above."""
    return float(np.mean([abs((p if g > t else 0.0) - y) for g, p, y, _ in CASE[dev]]))


@pytest.fixture(scope="module")
def calibrated():
    model = StubModel()
    return model, calibrate_gates(model, val_data(), prepared(), batch_size=2)


def test_kettle_picks_the_unique_threshold_that_separates_on_from_false_positives(calibrated):
    _, res = calibrated
    k = res["kettle"]
    assert k["threshold"] == 0.60
    assert k["f1"] == 1.0 and k["mae_w"] == 0.0
    assert k["baseline_mae_w"] == pytest.approx((2000 - 30 + 30 + 30) / 3)   # |y - 30 W| over the 3 windows
    assert k["default"] == START["kettle"]


def test_fallback_when_nothing_beats_the_baseline_is_the_lowest_mae(calibrated):
    _, res = calibrated
    f = res["fridge"]
    assert f["baseline_mae_w"] == pytest.approx(0.0, abs=1e-4)   # constant truth = train mean
    maes = {t: mae_at("fridge", t) for t in THRESHOLD_GRID}
    assert min(maes.values()) > 0                           # so no threshold is "not above the baseline"
    assert maes[0.60] == pytest.approx(200 / 3) and sorted(maes.values())[1] == pytest.approx(100)
    assert f["threshold"] == 0.60 and f["mae_w"] == pytest.approx(200 / 3, rel=1e-6)
    assert f["f1"] == pytest.approx(0.5)                    # ON predicted in 1 of 3 ON windows: 2/(2+2)


def test_device_never_on_keeps_its_threshold_and_model_is_restored(calibrated):
    model, res = calibrated
    m = res["microwave"]
    assert (m["f1"], m["mae_w"], m["baseline_mae_w"]) == (None, None, None)
    assert m["threshold"] == m["default"] == pytest.approx(START["microwave"])     # (read from a float32 buffer)
    # one eval-mode pass with the gate fully open (2 batches of 2 windows), then the model is put back as it was
    assert len(model.calls) == 2
    assert all(bool((thr == -1.0).all()) and not training for thr, training in model.calls)
    assert model.gate_thresholds.tolist() == pytest.approx([START[d] for d in DEVS])
    assert [d.gate_threshold for d in model.cfg.devices] == [START[d] for d in DEVS]
    assert model.training


def test_apply_thresholds_then_save_and_reload(tmp_path):
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, n_encoder_layers=1, window=32, film_hidden_dim=8,
                           devices=tuple(DeviceSpec(d, "regular", START[d]) for d in DEVS))
    torch.manual_seed(0)
    model = NILMFormer(cfg).eval()
    x = torch.rand(4, 7, 32)
    with torch.no_grad():
        gate = model(x).gate
    # thresholds at each device's median gate, so about half the steps sit on either side of the cut
    chosen = {d: round(float(gate[:, i].median()), 4) for i, d in enumerate(DEVS[:2])}   # microwave: not given
    apply_thresholds(model, chosen)
    want = [chosen["kettle"], chosen["fridge"], START["microwave"]]
    assert [d.gate_threshold for d in model.cfg.devices] == want
    assert model.gate_thresholds.tolist() == pytest.approx(want)
    save_checkpoint(tmp_path / "c.pt", model)
    back = load_checkpoint(tmp_path / "c.pt")
    assert [d.gate_threshold for d in back.cfg.devices] == want
    assert back.model.gate_thresholds.tolist() == pytest.approx(want)
    # the reloaded model's hard gate really cuts there: power = power_raw where gate > threshold, else 0
    with torch.no_grad():
        out = back.model(x, gate_mode="hard", use_film=False)
    open_ = out.gate > torch.tensor(want)[None, :, None]
    assert torch.equal(out.power, torch.where(open_, out.power_raw, torch.zeros(())))
    for i in range(2):
        assert 0.3 < float(open_[:, i].float().mean()) < 0.7, DEVS[i]


@pytest.mark.parametrize("w, want", [(1.0, 0.5), (3.0, 0.75), (9.0, 0.9), (2.0, 0.667), (19.0, 0.95)])
def test_gate_threshold_for_pos_weight(w, want):
    assert gate_threshold_for(w) == want


def test_device_specs_start_from_the_pos_weight_threshold():
    specs = device_specs({"kettle": {"head": "sparse", "weights": {"pos_weight": 3.0}},
                          "fridge": {"head": "regular", "weights": {}}})
    assert specs == (DeviceSpec("kettle", "sparse", 0.75), DeviceSpec("fridge", "regular", 0.5))
