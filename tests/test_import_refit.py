"""`nilmbuild import --source ukdale:PATH`: CondiNILM's scaler refitted from the data, as its run_experiment.py fits it.

- against CondiNILM itself: tests/fixtures/upstream/refit_*/ hold the scaler CondiNILM's own pipeline fitted
  (generate_refit.py) on a few days of ../shared/data written in UK-DALE's layout; the same files are written
  here and refitted (realdata: skipped without ../shared/data, failed in CI);
- by hand: a house whose every window is the same hour, so every statistic is written out below whatever the
  split, through the CLI with a CondiNILM checkpoint;
- bad input: one line that says what to pass, and no OUT.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.importer.scaler_refit import refit_scaler
from nilmbuild.importer.upstream_config import read_config
from tests.upstream_files import (
    condinilm_config,
    lightning_checkpoint,
    nilmformer_config,
    nilmformer_log,
    placeholder_weights,
    write_json,
    write_torch,
    write_ukdale_house,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream"
REFIT = sorted(p.name for p in FIXTURES.glob("refit_*") if p.is_dir())
T0 = 1370044800  # 2013-06-01 00:00 UTC


def test_refit_fixtures_exist():
    assert len(REFIT) >= 6, "run tests/fixtures/upstream/generate_refit.py"


@pytest.mark.realdata
@pytest.mark.parametrize("name", REFIT)
def test_refit_equals_condinilms_own_fit(tmp_path, name):
    from tests.fixtures.upstream.refit_data import write_slice

    fixture = FIXTURES / name
    root = write_slice(json.loads((fixture / "data.json").read_text()), tmp_path)
    got = refit_scaler(f"ukdale:{root}", read_config(fixture / "experiment_config.json"))
    want = json.loads((fixture / "scaler.json").read_text())
    for key in ("power_scaling_type", "appliance_scaling_type", "devices"):
        assert got[key] == want[key]
    for key in ("power_stat1", "power_stat2", "appliance_stat1", "appliance_stat2"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-12, atol=1e-9, err_msg=key)


# ---- by hand --------------------------------------------------------------------------------------------------

HOUR = 64  # minutes: the window of tests/fixtures/upstream/condinilm_small


def _hour_pattern(minute: np.ndarray) -> dict[str, np.ndarray]:
    """Watts per channel at each 10-s sample, from its minute within the 64-minute block."""
    m = minute % HOUR
    return {
        "aggregate": np.select([m == 3, m == 5], [7000.0, 3.0], 300.0),  # 7000 is clipped to 6000; 3 W reads 0
        "kettle": np.where(m == 3, 2500.0, 0.0),
        "fridge": np.where(m < 5, 80.0, 3.0),
        "washer_dryer": np.where(m == 1, 1200.0, 4.0),  # CondiNILM's alias of washing_machine
    }


def write_house(root: Path, blocks: int = 4, washer_runs: bool = True) -> Path:
    t = T0 + 10 * np.arange(blocks * HOUR * 6)
    watts = _hour_pattern((t - T0) // 60)
    if not washer_runs:
        watts["washer_dryer"] = np.full(t.size, 4.0)
    return write_ukdale_house(root, 1, {label: (t, w) for label, w in watts.items()})


def _condinilm_files(tmp_path: Path, **over) -> tuple[Path, Path]:
    ckpt = shutil.copy(FIXTURES / "condinilm_small" / "last.ckpt", tmp_path / "last.ckpt")
    cfg = json.loads((FIXTURES / "condinilm_small" / "experiment_config.json").read_text())
    cfg.update(
        dataset="UKDALE",
        ind_house_train_val=[1],
        ind_house_test=[9],
        overlap=0.0,
        seed=0,
        power_scaling_type="StandardScaling",
        appliance_scaling_type="MaxScaling",
        cutoff=2500.0,
    )
    cfg.update(over)
    return Path(ckpt), write_json(tmp_path / "experiment_config.json", cfg)


def _import(tmp_path, ckpt, config, *extra):
    args = ["import", str(ckpt), "--config", str(config), "--out", str(tmp_path / "out.pt"), *extra]
    return CliRunner().invoke(main, args)


def test_cli_refits_the_scaler_by_hand(tmp_path):
    ckpt, config = _condinilm_files(tmp_path)
    data = write_house(tmp_path / "ukdale")
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{data}")
    assert result.exit_code == 0, result.output
    payload = torch.load(tmp_path / "out.pt", weights_only=True)
    fields = payload["scalers"]["nilmscaler"]
    mean = (62 * 300 + 6000 + 0) / 64  # each hour: 62 minutes of 300 W, one of 6000 (clipped), one of 0 (< 5 W)
    std = math.sqrt((62 * (300 - mean) ** 2 + (6000 - mean) ** 2 + (0 - mean) ** 2) / 64)
    assert fields["power_stat1"] == pytest.approx(mean, rel=1e-12)
    assert fields["power_stat2"] == pytest.approx(std, rel=1e-12)
    assert fields["appliance_stat1"] == [0.0, 0.0, 0.0]
    assert fields["appliance_stat2"] == [2500.0, 80.0, 1200.0]  # kettle, fridge (3 W reads 0), washer_dryer
    prov = payload["provenance"]
    assert prov["upstream"]["files"]["scaler"] == {"from": "refit from ukdale:ukdale"}
    assert prov["command"].endswith("--source ukdale:ukdale") and str(tmp_path) not in prov["command"]


def test_refit_reads_condinilms_data_path_too(tmp_path):
    """PATH may be CondiNILM's data_path, which holds UKDALE/house_N."""
    _, config = _condinilm_files(tmp_path)
    data = write_house(tmp_path / "data" / "UKDALE")
    fields = refit_scaler(f"ukdale:{data.parent}", read_config(config))
    assert fields["appliance_stat2"] == [2500.0, 80.0, 1200.0]


def _one_line(tmp_path, result, match):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and match in lines[0], result.output
    assert not (tmp_path / "out.pt").exists()


def test_a_device_that_never_ran_is_refused(tmp_path):
    ckpt, config = _condinilm_files(tmp_path)
    data = write_house(tmp_path / "ukdale", washer_runs=False)
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{data}")
    _one_line(tmp_path, result, "washing_machine's scale is 0")


def test_other_data_than_the_run_trained_on(tmp_path):
    """The config's cutoff is the first device's appliance_stat2 of CondiNILM's own fit: other data gives another."""
    ckpt, config = _condinilm_files(tmp_path, cutoff=3100.0)
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{write_house(tmp_path / 'ukdale')}")
    _one_line(tmp_path, result, "check --source: it is not the data this run trained on")


@pytest.mark.parametrize(
    ("over", "source", "match"),
    [
        ({}, "csv:{data}", "--source takes ukdale:PATH"),
        ({"dataset": "REFIT"}, "ukdale:{data}", "pass --scaler SCALER.json instead"),
        ({"ind_house_train_val": [2]}, "ukdale:{data}", "no house_2 folder"),
        ({"ind_house_train_val": None}, "ukdale:{data}", "no `ind_house_train_val`"),
        ({"overlap": 1.5}, "ukdale:{data}", "overlap is 1.5"),
        ({"app": ["kettle", "fridge", "WashingMachine"]}, "ukdale:{data}", "no appliance WashingMachine"),
        ({"appliance_scaling_type": "MeanScaling"}, "ukdale:{data}", "fits no appliance_scaling_type 'MeanScaling'"),
        ({}, "ukdale:{data}/nowhere", "no such folder"),
    ],
)
def test_bad_source_or_config(tmp_path, over, source, match):
    ckpt, config = _condinilm_files(tmp_path, **over)
    data = write_house(tmp_path / "ukdale")
    result = _import(tmp_path, ckpt, config, "--source", source.format(data=data))
    _one_line(tmp_path, result, match)


def test_a_house_shorter_than_a_window(tmp_path):
    ckpt, config = _condinilm_files(tmp_path)
    data = tmp_path / "ukdale"
    write_house(data, blocks=4)
    for f in (data / "house_1").glob("channel_*.dat"):  # keep 50 minutes: less than one 64-step window
        f.write_text("".join(f.read_text().splitlines(keepends=True)[: 50 * 6]))
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{data}")
    _one_line(tmp_path, result, "give no complete window of 64 steps")


def test_labels_without_the_device(tmp_path):
    ckpt, config = _condinilm_files(tmp_path)
    data = write_house(tmp_path / "ukdale")
    labels = data / "house_1" / "labels.dat"
    labels.write_text(labels.read_text().replace("washer_dryer", "toaster"))
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{data}")
    _one_line(tmp_path, result, "names no channel washing_machine or washer_dryer")


def test_scaler_and_source_together(tmp_path):
    ckpt, config = _condinilm_files(tmp_path)
    scaler = write_json(tmp_path / "scaler.json", {})
    result = _import(tmp_path, ckpt, config, "--scaler", str(scaler), "--source", "ukdale:x")
    _one_line(tmp_path, result, "pass --scaler or --source, not both")


def test_original_nilmformer_takes_its_scaler_block(tmp_path):
    ckpt = write_torch(tmp_path / "NILMFormer_0.pt", nilmformer_log(placeholder_weights()))
    config = write_json(tmp_path / "config.json", nilmformer_config())
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{write_house(tmp_path / 'u')}")
    _one_line(tmp_path, result, "--source refits CondiNILM's scaler only")


def test_condinilm_config_helper_is_not_a_training_block(tmp_path):
    """A config without CondiNILM's split settings (a hand-written one) is refused, not guessed."""
    config = write_json(tmp_path / "c.json", condinilm_config(window_size=64))
    ckpt = write_torch(tmp_path / "last.ckpt", lightning_checkpoint(placeholder_weights()))
    result = _import(tmp_path, ckpt, config, "--source", f"ukdale:{write_house(tmp_path / 'u')}")
    _one_line(tmp_path, result, "no `ind_house_train_val`")


def test_help_teaches_source():
    out = CliRunner().invoke(main, ["import", "--help"]).output
    assert "--source ukdale:PATH refits CondiNILM's scaler" in out and "--source ukdale:data/UKDALE --out" in out
