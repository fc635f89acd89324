"""The upstream's device names (CondiNILM/NILMFormer REFIT configs say "WashingMachine", "Dishwasher", "Kettle")
become nilmbuild's at import (importer/device_names.py), so every command that takes the imported checkpoint
accepts it: `site`, `evaluate`, `disaggregate`. The renamed model computes the upstream's own numbers (the sparse
CNN and gate floor still come from the upstream name), the provenance keeps the upstream's names, and a name no
page could explain is refused with one line at import, writing nothing."""

from __future__ import annotations

import csv
import json

import numpy as np
from click.testing import CliRunner

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.model.checkpoint import load_checkpoint
from tests.test_import_fixtures import FIXTURES, _assert_matches_upstream, _import

REFIT_NAMES = {"kettle": "Kettle", "fridge": "Fridge", "washing_machine": "WashingMachine"}


def _renamed_condinilm(tmp_path, names: dict) -> tuple:
    """condinilm_small (app kettle, fridge, washing_machine) with its devices spelled as in `names`."""
    d = FIXTURES / "condinilm_small"
    cfg = json.loads((d / "experiment_config.json").read_text())
    fields = json.loads((d / "scaler.json").read_text())
    cfg["app"] = [names.get(a, a) for a in cfg["app"]]
    fields["devices"] = [names.get(a, a) for a in fields["devices"]]
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    (tmp_path / "s.json").write_text(json.dumps(fields))
    return d / "last.ckpt", tmp_path / "c.json", tmp_path / "s.json"


def test_refit_spellings_import_as_nilmbuild_names_with_the_upstream_numbers(tmp_path):
    result = _import(tmp_path, *_renamed_condinilm(tmp_path, REFIT_NAMES))
    assert result.exit_code == 0, result.output
    assert "washing_machine (upstream WashingMachine)" in result.output
    model = nilmbuild.load_model(tmp_path / "out.pt")
    assert model.devices == ["kettle", "fridge", "washing_machine"]
    # "Kettle" still picks CondiNILM's sparse CNN and the kettle's gate-logit floor: the same watts as upstream
    _assert_matches_upstream(model, np.load(FIXTURES / "condinilm_small" / "reference.npz"))
    loaded = load_checkpoint(tmp_path / "out.pt")
    up = loaded.provenance["upstream"]
    assert up["devices"] == ["Kettle", "Fridge", "WashingMachine"] and up["device_names"] == {
        "Kettle": "kettle",
        "Fridge": "fridge",
        "WashingMachine": "washing_machine",
    }
    assert up["config"]["app"] == ["Kettle", "Fridge", "WashingMachine"]  # the config as it was read
    assert set(loaded.scalers["appliances"]) == {"kettle", "fridge", "washing_machine"}


def test_every_command_takes_the_renamed_checkpoint(tmp_path):
    assert _import(tmp_path, *_renamed_condinilm(tmp_path, REFIT_NAMES)).exit_code == 0
    ckpt = str(tmp_path / "out.pt")
    run = CliRunner().invoke
    ev = run(main, ["evaluate", "-c", ckpt])
    assert ev.exit_code == 0, ev.output
    rows = {line.split()[0] for line in ev.output.splitlines() if "NILMFormer" in line}
    assert {"kettle", "fridge", "washing_machine"} <= rows
    plain = tmp_path / "plain"  # the same run imported under its UK-DALE names: the very same scores, digit for digit
    plain.mkdir()
    d = FIXTURES / "condinilm_small"
    assert _import(plain, d / "last.ckpt", d / "experiment_config.json", d / "scaler.json").exit_code == 0
    assert run(main, ["evaluate", "-c", str(plain / "out.pt")]).output == ev.output
    out = tmp_path / "d.csv"
    dis = run(main, ["disaggregate", "-c", ckpt, "--from", "2024-01-02", "--to", "2024-01-03", "--out", str(out)])
    assert dis.exit_code == 0, dis.output
    with out.open() as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["time", "aggregate", "kettle", "fridge", "washing_machine"]
    assert len(table) == 24 * 60 and max(float(r["washing_machine"] or 0) for r in table) > 0
    site = run(main, ["site", "-c", ckpt, "-o", str(tmp_path / "site"), "--pages", "gate", "-q", "--no-cache"])
    assert site.exit_code == 0, site.output
    assert '"washing_machine"' in (tmp_path / "site" / "gate.html").read_text()  # the page's devices


def test_original_nilmformer_dishwasher_spelling(tmp_path):
    """An original-NILMFormer REFIT run names its one appliance "Dishwasher": it imports as dishwasher."""
    d = FIXTURES / "nilmformer_odd"
    cfg = json.loads((d / "config.json").read_text())
    cfg["app"] = "Dishwasher"
    cfg["scaler"] = {**cfg["scaler"], "devices": ["Dishwasher"]} if "devices" in cfg["scaler"] else cfg["scaler"]
    (tmp_path / "c.json").write_text(json.dumps(cfg))
    result = _import(tmp_path, d / "NILMFormer_0.pt", tmp_path / "c.json")
    assert result.exit_code == 0, result.output
    model = nilmbuild.load_model(tmp_path / "out.pt")
    assert model.devices == ["dishwasher"]
    _assert_matches_upstream(model, np.load(d / "reference.npz"))  # the name changes no number
    ev = CliRunner().invoke(main, ["evaluate", "-c", str(tmp_path / "out.pt")])
    assert ev.exit_code == 0 and any(line.startswith("dishwasher") for line in ev.output.splitlines()), ev.output


def test_unknown_and_colliding_names_fail_in_one_line_and_write_nothing(tmp_path):
    for names, said in (
        ({"fridge": "Toaster"}, "'Toaster', which nilmbuild cannot explain"),
        ({"fridge": "Kettle"}, "'kettle', 'Kettle', which are all nilmbuild's kettle"),
    ):
        result = _import(tmp_path, *_renamed_condinilm(tmp_path, names))
        assert result.exit_code != 0 and said in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
        assert not (tmp_path / "out.pt").exists()
