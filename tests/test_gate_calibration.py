"""Gate calibration (train/calibrate.py: calibrate_gates, apply_thresholds; device_types.gate_threshold_for)
on a stub model whose gate outputs are known, so every chosen threshold can be worked out by hand.

The calibration runs the model over the continuous validation series by seq2subseq, once with every gate
open and once closed, and scores each grid threshold after post-processing, as `nilmbuild evaluate` does.
The stub's outputs depend only on the current step (it reads the step index from the aggregate), so the
stitched series is known exactly. Three devices, 3 segments of 4 minutes (constant inside a segment),
max scalers (1000 W), no duration rules (1 step), an aggregate of 5000+ W (the cap never binds):
  kettle    ON segment gate 0.62, false-positive segment 0.58: only a threshold in [0.58, 0.62) keeps the
            ON steps and drops the false ones (F1 1, MAE 0) -> grid threshold 0.60, unique.
  fridge    truth a constant 100 W and a 100 W train mean, so the mean baseline's MAE is 0 and no
            threshold can match it: the fallback picks the lowest MAE, which is at 0.60 (worked out below).
  microwave never ON in the validation series: keeps its starting threshold.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.config import DeviceSpec, NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer
from nilmbuild.train.calibrate import THRESHOLD_GRID, apply_thresholds, calibrate_gates
from nilmbuild.train.device_types import device_specs, gate_threshold_for

DEVS = ("kettle", "fridge", "microwave")
START = {"kettle": 0.75, "fridge": 0.5, "microwave": 0.7}
SCALE_W, AGG_MAX, AGG0 = 1000.0, 10000.0, 5000.0
SEG = 4
T = 3 * SEG

# per device: (gate, open-gate power W, truth W, ON state) for each of the 3 segments
CASE = {
    "kettle": [(0.62, 2000, 2000, 1), (0.58, 2000, 0, 0), (0.05, 2000, 0, 0)],
    "fridge": [(0.12, 100, 100, 1), (0.58, 400, 100, 1), (0.62, 100, 100, 1)],
    "microwave": [(0.90, 800, 0, 0), (0.30, 800, 0, 0), (0.05, 800, 0, 0)],
}


def per_step(k: int, scale: float = 1.0) -> np.ndarray:
    """(D, T): field k of CASE, repeated over each segment's steps."""
    return np.array([[c[t // SEG][k] / scale for t in range(T)] for c in CASE.values()], dtype=np.float32)


class StubModel(torch.nn.Module):
    """Looks like NILMFormer to seq2subseq: cfg (window 8), a gate_thresholds buffer, forward -> power /
    gate / power_raw. The aggregate is AGG0 + t watts, so the stub reads the step t from its input;
    power is the open-gate power where gate > threshold, else 0 (no output FiLM offset)."""

    def __init__(self):
        super().__init__()
        self.cfg = NILMFormerConfig(window=8, devices=tuple(DeviceSpec(d, "regular", START[d]) for d in DEVS))
        self.register_buffer("gate_thresholds", torch.tensor([START[d] for d in DEVS]))
        self.gate, self.open = torch.from_numpy(per_step(0)), torch.from_numpy(per_step(1, SCALE_W))
        self.calls = []

    def forward(self, x, gate_mode="hard"):
        t = (x[:, 0] * AGG_MAX - AGG0).round().long().clamp(0, T - 1)  # (B, W)
        self.calls.append((self.gate_thresholds.clone(), self.training))
        g, p = self.gate[:, t].permute(1, 0, 2), self.open[:, t].permute(1, 0, 2)  # (B, D, W)
        return SimpleNamespace(gate=g, power_raw=p, power=torch.where(g > self.gate_thresholds[None, :, None], p, 0.0))


def prepared():
    """What calibrate_gates reads: scalers, devices, durations, the continuous val series, train means."""
    ts = np.datetime64("2024-03-01T00:00") + np.arange(T) * np.timedelta64(60, "s")
    train_w = np.array([[0.0, 60.0], [100.0, 100.0], [0.0, 0.0]], dtype=np.float32)  # means 30 / 100 / 0 W
    val = SimpleNamespace(
        timestamps=ts,
        aggregate_w=(AGG0 + np.arange(T)).astype(np.float32),
        appliances_w=per_step(2),
        states=per_step(3).astype(np.uint8),
        valid=np.ones(T, bool),
    )
    return SimpleNamespace(
        devices=list(DEVS),
        thresholds_w={"kettle": 500.0, "fridge": 50.0, "microwave": 200.0},
        resample_s=60,
        scalers={
            "aggregate": {"kind": "max", "max": AGG_MAX},
            "appliances": {d: {"kind": "max", "max": SCALE_W} for d in DEVS},
        },
        min_on_steps={d: 1 for d in DEVS},
        min_off_steps={d: 1 for d in DEVS},
        val=val,
        train=SimpleNamespace(appliances_w=train_w, valid=np.array([True, True])),
    )


def mae_at(dev, t):
    """The MAE (W) calibrate_gates should score for `dev` at threshold t, from the table above."""
    return float(np.mean([abs((p if g > t else 0.0) - y) for g, p, y, _ in CASE[dev]]))


@pytest.fixture(scope="module")
def calibrated():
    model = StubModel()
    return model, calibrate_gates(model, prepared(), batch_size=2)


def test_kettle_picks_the_unique_threshold_that_separates_on_from_false_positives(calibrated):
    _, res = calibrated
    k = res["kettle"]
    assert k["threshold"] == 0.60
    assert k["f1"] == 1.0 and k["mae_w"] == 0.0
    # the better baseline: all-OFF (mean |y| = 2000 / 3) beats the train mean (|y - 30 W| -> 2030 / 3)
    assert k["baseline_mae_w"] == pytest.approx(2000 / 3)
    assert k["default"] == START["kettle"]


def test_fallback_when_nothing_beats_the_baseline_is_the_lowest_mae(calibrated):
    _, res = calibrated
    f = res["fridge"]
    assert f["baseline_mae_w"] == pytest.approx(0.0, abs=1e-4)  # constant truth = train mean
    maes = {t: mae_at("fridge", t) for t in THRESHOLD_GRID}
    assert min(maes.values()) > 0  # so no threshold is "not above the baseline"
    assert maes[0.60] == pytest.approx(200 / 3) and sorted(maes.values())[1] == pytest.approx(100)
    assert f["threshold"] == 0.60 and f["mae_w"] == pytest.approx(200 / 3, rel=1e-6)
    assert f["f1"] == pytest.approx(0.5)  # ON predicted in 1 of 3 ON segments: 2/(2+2)


def test_device_never_on_keeps_its_threshold_and_model_is_restored(calibrated):
    model, res = calibrated
    m = res["microwave"]
    assert (m["f1"], m["mae_w"], m["baseline_mae_w"]) == (None, None, None)
    assert m["threshold"] == m["default"] == pytest.approx(START["microwave"])  # (read from a float32 buffer)
    # eval-mode passes with every gate open (-1) and every gate closed (2), then the model is put back
    assert model.calls and all(not training for _, training in model.calls)
    assert {float(thr[0]) for thr, _ in model.calls} == {-1.0, 2.0}
    assert all(bool((thr == thr[0]).all()) for thr, _ in model.calls)
    assert model.gate_thresholds.tolist() == pytest.approx([START[d] for d in DEVS])
    assert [d.gate_threshold for d in model.cfg.devices] == [START[d] for d in DEVS]
    assert model.training


def test_apply_thresholds_then_save_and_reload(tmp_path):
    cfg = NILMFormerConfig(
        d_model=16,
        n_head=2,
        head_dim=8,
        n_encoder_layers=1,
        window=32,
        film_hidden_dim=8,
        devices=tuple(DeviceSpec(d, "regular", START[d]) for d in DEVS),
    )
    torch.manual_seed(0)
    model = NILMFormer(cfg).eval()
    x = torch.rand(4, 7, 32)
    with torch.no_grad():
        gate = model(x).gate
    # thresholds at each device's median gate, so about half the steps sit on either side of the cut
    chosen = {d: round(float(gate[:, i].median()), 4) for i, d in enumerate(DEVS[:2])}  # microwave: not given
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
    specs = device_specs(
        {"kettle": {"head": "sparse", "weights": {"pos_weight": 3.0}}, "fridge": {"head": "regular", "weights": {}}}
    )
    assert specs == (DeviceSpec("kettle", "sparse", 0.75), DeviceSpec("fridge", "regular", 0.5))
