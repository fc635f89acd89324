"""docs/upstream-models.md's recipes: every Python snippet parses, and the CondiNILM one writes a scaler JSON that
`nilmbuild import` accepts (run here on a stand-in for the data cache: a scaler holding numpy values, as CondiNILM's
NILMscaler does after fitting)."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from nilmbuild.importer.scaler_fields import read_scaler
from nilmbuild.importer.upstream_config import read_config
from tests.upstream_files import condinilm_config, write_json

DOC = Path(__file__).resolve().parents[1] / "docs" / "upstream-models.md"


def _snippets(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_python_snippets_parse():
    snippets = _snippets("python")
    assert len(snippets) == 2
    for code in snippets:
        ast.parse(code)


def test_condinilm_scaler_recipe_writes_what_import_reads(tmp_path, monkeypatch):
    code = _snippets("python")[0]
    load = 'torch.load("data_cache/<key>.pt", weights_only=False)'
    assert load in code
    scaler = SimpleNamespace(
        power_scaling_type="MaxScaling",
        appliance_scaling_type="MaxScaling",
        power_stat1=0,
        power_stat2=np.float32(6348.0),
        appliance_stat1=[0, 0, 0],
        appliance_stat2=[np.float32(2012.0), np.float32(3106.0), np.float32(298.0)],
    )
    cache = {"scaler": scaler, "app_list": ["washing_machine", "kettle", "fridge"]}
    monkeypatch.chdir(tmp_path)
    exec(compile(code.replace(load, "CACHE"), "upstream-models.md", "exec"), {"CACHE": cache})
    cfg = read_config(write_json(tmp_path / "experiment_config.json", condinilm_config(cutoff=3106.0)))
    fields, _ = read_scaler(tmp_path / "scaler.json", cfg)
    assert fields["devices"] == ["kettle", "fridge", "washing_machine"]
    assert fields["appliance_stat2"] == [3106.0, 298.0, 2012.0] and fields["power_stat2"] == 6348.0


def test_commands_in_the_doc_are_the_cli_s():
    from click.testing import CliRunner

    from nilmbuild.cli import main

    help_text = CliRunner().invoke(main, ["import", "--help"]).output
    for cmd in _snippets("sh"):
        for line in cmd.replace("\\\n", " ").splitlines():
            if line.startswith("nilmbuild import"):
                for opt in re.findall(r"(--[a-z]+)", line):
                    assert opt in help_text, opt
