"""Post-processing as a user sees it: `nilmbuild disaggregate`'s CSV, on a checkpoint whose outputs are known.

The model's own output hardly matters here: each device's standard scaler has a tiny std, so its watts are the
scaler's mean to within 0.01 W wherever the gate is ON, and gate threshold 0 keeps every step ON (no short-
activation or long-OFF suppression). The kettle then predicts -1000 W and the fridge 1500 W at every step. Worked
out by hand: the kettle is clamped to 0 W, and the fridge alone is capped to the meter, min(1500 W, aggregate).
Capping before clamping would test the sum 1500 - 1000 = 500 W against the meter instead, leave the fridge at
1500 W wherever the meter reads 500-1500 W, and fail here (issue 36: the unit test was the only check).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.model import NILMFormer, NILMFormerConfig
from nilmbuild.model.checkpoint import save_checkpoint
from nilmbuild.model.config import DeviceSpec

PREP = {"window": 48, "stride": 24, "fractions": [0.5, 0.25, 0.25], "gap_windows": 1, "devices": ["kettle", "fridge"]}
MEAN = {"kettle": -1000.0, "fridge": 1500.0}


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    torch.manual_seed(0)
    devices = (DeviceSpec("kettle", "sparse", gate_threshold=0.0), DeviceSpec("fridge", "regular", gate_threshold=0.0))
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=1, devices=devices)
    scalers = {
        "aggregate": {"kind": "max", "max": 6000.0},
        "appliances": {d: {"kind": "standard", "mean": m, "std": 1e-3} for d, m in MEAN.items()},
    }
    path = tmp_path_factory.mktemp("ck") / "known.pt"
    prov = {"source": "synthetic", "days": 2, "seed": 3, "prep": PREP}
    save_checkpoint(path, NILMFormer(cfg), scalers=scalers, provenance=prov)
    return path


def test_disaggregate_clamps_negatives_before_capping_to_the_meter(ckpt, tmp_path):
    out = tmp_path / "pred.csv"
    r = CliRunner().invoke(main, ["disaggregate", "--checkpoint", str(ckpt), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["time", "aggregate", "kettle", "fridge"]
    vals = np.array([[float(v) for v in row[1:]] for row in rows[1:] if row[1]])  # valid rows
    agg, kettle, fridge = vals.T
    assert len(vals) > 1000
    in_between = (agg > 550) & (agg < 1450)  # where capping first would leave the fridge above the meter
    assert in_between.sum() > 50, "the synthetic days must have meter readings between 500 and 1500 W"
    np.testing.assert_allclose(kettle, 0.0, atol=0.05)
    np.testing.assert_allclose(fridge, np.minimum(1500.0, agg), atol=0.15)
