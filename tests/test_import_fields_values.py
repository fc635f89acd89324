"""The import's config side as a user meets it: a scaler JSON and a config written here go through the same reading
and checks as `nilmbuild import`, and the numbers that come out are the upstream NILMscaler's own
(tests/fixtures/upstream/scaling_types.json, written by the upstreams' fit/transform/inverse_transform_appliance).
Each test kills mutants of `importer/scaler_fields.py`, `upstream_config.py` or `run.py` that `make mutate` found
alive (docs/testing.md): a scaler refused or read wrongly, or a bad input that crashes instead of a one-line error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.data.preprocess import scaler_from_dict
from nilmbuild.errors import UserError
from nilmbuild.importer.detect import detect
from nilmbuild.importer.provenance import import_provenance
from nilmbuild.importer.reading import read_torch_file
from nilmbuild.importer.run import cross_check
from nilmbuild.importer.scaler_fields import check_types, read_scaler
from nilmbuild.importer.upstream_config import read_config
from nilmbuild.model.upstream.inputs import scalers_from_nilmscaler
from tests.hostile import RunsCode
from tests.upstream_files import (
    condinilm_config,
    lightning_checkpoint,
    placeholder_weights,
    scaler_fields,
    write_json,
    write_torch,
)

CASES = json.loads((Path(__file__).resolve().parent / "fixtures" / "upstream" / "scaling_types.json").read_text())
PARAMS = [
    pytest.param(arch, case, id=f"{arch}-{case['power']}-{case['appliance']}")
    for arch, cases in CASES.items()
    for case in cases
]


def _read(tmp_path, fields, devices=("kettle", "fridge")):
    """The scaler JSON `fields` read as `nilmbuild import --scaler scaler.json` reads it, for a config of `devices`."""
    cfg = read_config(write_json(tmp_path / "experiment_config.json", condinilm_config(devices=list(devices))))
    return read_scaler(write_json(tmp_path / "scaler.json", fields), cfg)[0]


def _one_line_error(match, fn, *args):
    with pytest.raises(UserError, match=match) as e:
        fn(*args)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("arch", "case"), PARAMS)
def test_every_upstream_scaling_type_is_read_from_the_json_then_kept_or_refused(tmp_path, arch, case):
    """Every type name NILMscaler's constructor takes (MinMaxScaling, the original's fit() spelling, included) reads
    from a user's JSON; then a pair the upstream scales with gives its numbers, and the others are refused by
    name. A name dropped from what the JSON may say would refuse a working scaler, or refuse a broken one with
    the wrong reason."""
    if "error" in case:
        raw = {
            "power_scaling_type": case["power"],
            "appliance_scaling_type": case["appliance"],
            **{"power_stat1": 0.0, "power_stat2": 1.0, "appliance_stat1": [0.0], "appliance_stat2": [1.0]},
        }
        fields = _read(tmp_path, raw, devices=["kettle"])
        assert (fields["power_scaling_type"], fields["appliance_scaling_type"]) == (case["power"], case["appliance"])
        _one_line_error(f"the {arch} NILMscaler never scales with", check_types, fields, arch, "scaler.json")
        return
    fields = _read(tmp_path, case["fields"], devices=case["fields"]["devices"])
    assert fields == case["fields"]
    check_types(fields, arch, "scaler.json")
    scalers = scalers_from_nilmscaler(fields)
    watts, z, scaled = np.array(case["watts"]), np.array(case["z"]), np.array(case["scaled"])
    np.testing.assert_allclose(scaler_from_dict(scalers["aggregate"]).transform(watts), scaled[0], rtol=1e-12)
    for i, d in enumerate(fields["devices"]):
        s = scaler_from_dict(scalers["appliances"][d])
        np.testing.assert_allclose(s.inverse(z), case["inverse"][i], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (
            5,
            r"scaler.json: the scaler must be a JSON object of NILMscaler fields: write it from the NILMscaler as "
            r"docs/upstream-models.md shows$",
        ),
        ([1, 2], "the scaler must be a JSON object"),
        ({**scaler_fields(), "devices": 5}, r"the scaler's `devices` must be a list of device names"),
        ({**scaler_fields(), "devices": [["kettle"], "fridge", "washing_machine"]}, "must be a list of device names"),
        ({**scaler_fields(), "appliance_scaling_type": "Log"}, r"appliance_scaling_type is 'Log', not one of NILMsc"),
        ({**scaler_fields(), "power_scaling_type": "SameAsPower"}, r"power_scaling_type is 'SameAsPower', not one of"),
        ({**scaler_fields(), "power_scaling_type": 0}, "power_scaling_type is 0, not one of NILMscaler's"),
        ({**scaler_fields(), "power_scaling_type": True}, "power_scaling_type is True, not one of NILMscaler's"),
        ({**scaler_fields(), "power_stat1": "0"}, "power_stat1 is '0', not a finite number"),
        ({**scaler_fields(), "appliance_stat1": [0, 0, float("nan")]}, "appliance_stat1 is nan, not a finite number"),
    ],
    ids=[
        *("number", "list", "devices-number", "devices-nested", "appliance-Log", "power-SameAsPower", "zero", "bool"),
        *("stat1-text", "stat1-nan"),
    ],
)
def test_a_scaler_of_the_wrong_shape_is_one_line_naming_the_field(tmp_path, raw, match):
    _one_line_error(match, _read, tmp_path, raw, ("kettle", "fridge", "washing_machine"))


@pytest.mark.parametrize(
    ("power", "appliance"), [("MaxScaling", "MinMax"), ("MinMax", "SameAsPower"), ("StandardScaling", "MinMax")]
)
def test_a_min_max_device_whose_range_is_zero_is_refused(tmp_path, power, appliance):
    """Min-max scaling divides by stat2 - stat1: a kettle that read 50 W all through the training block (50..50 W)
    has a scale of 0, even though its stat2 is not 0; the fridge's 0..300 W is fine. Read as `import` reads it."""
    raw = {
        **{"power_scaling_type": power, "appliance_scaling_type": appliance, "power_stat1": 0.0},
        **{"power_stat2": 6000.0, "appliance_stat1": [50.0, 0.0], "appliance_stat2": [50.0, 300.0]},
        "devices": ["kettle", "fridge"],
    }
    fields = _read(tmp_path, raw)
    _one_line_error(r"kettle's scale is 0 .* reads it as a constant 50 W", check_types, fields, "condinilm", "s.json")
    raw["appliance_stat1"] = [0.0, 0.0]
    check_types(_read(tmp_path, raw), "condinilm", "s.json")  # 0..50 W: a scale of 50


def test_a_missing_or_folder_scaler_is_one_line(tmp_path):
    cfg = read_config(write_json(tmp_path / "experiment_config.json", condinilm_config()))
    for path in (tmp_path / "missing.json", tmp_path):
        _one_line_error(f"--scaler {re.escape(str(path))} does not exist: write it from", read_scaler, path, cfg)


def _config_file(tmp_path, text: str, name="resolved.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


MODEL = "model_kwargs: {d_model: 96}\nsampling_rate: 30s\n"


def test_the_original_config_may_leave_out_name_model_and_window_2_is_the_least(tmp_path):
    """The original NILMFormer's resolved config need not name the model (NILMFormer is the default); a window of 2
    steps is read, 1 (or a bool) is refused."""
    cfg = read_config(_config_file(tmp_path, f"app: kettle\nwindow_size: 2\n{MODEL}"))
    assert (cfg.devices, cfg.window, cfg.step_s) == (["kettle"], 2, 30)
    for w in ("1", "true"):
        path = _config_file(tmp_path, f"app: kettle\nwindow_size: {w}\n{MODEL}")
        _one_line_error(r"window_size is (1|True), not a number of steps", read_config, path)


@pytest.mark.parametrize(
    ("app", "match"),
    [
        ('["kettle", " "]', r"`app` has repeated or empty device names \(\): fix `app`"),
        ('["kettle", 1.5]', r"has no device list `app` .*: pass CondiNILM's .* \(see docs/upstream-models.md\)$"),
        ('["kettle", null]', "has no device list `app`"),
        ("1.5", "has no device list `app`"),
    ],
)
def test_an_app_with_an_empty_or_non_name_entry_is_refused(tmp_path, app, match):
    path = _config_file(tmp_path, f'{{"app": {app}, "window_size": 128, "model_kwargs": {{}}}}', "c.json")
    _one_line_error(match, read_config, path)


def test_a_config_that_is_missing_or_has_a_date_key_is_one_line_and_bad_bytes_are_replaced(tmp_path):
    missing = tmp_path / "nowhere.json"
    _one_line_error(f"--config {re.escape(str(missing))} does not exist: pass CondiNILM's", read_config, missing)
    path = _config_file(tmp_path, f"app: kettle\nwindow_size: 128\n{MODEL}2024-04-12: a date as a key\n")
    _one_line_error(r"--config resolved.yaml has keys that are not strings: pass", read_config, path)
    path = tmp_path / "latin1.json"  # a byte that is not UTF-8 in a value nilmbuild keeps but does not use
    path.write_bytes(
        b'{"app": "kettle", "window_size": 128, "model_kwargs": {}, "sampling_rate": "1min", "dataset": "caf\xe9"}'
    )
    cfg = read_config(path)
    assert (cfg.devices, cfg.step_s) == (["kettle"], 60) and cfg.raw["dataset"] == "caf\ufffd"


def test_an_int_divisor_of_1_is_a_scaling_type(tmp_path):
    """NILMscaler takes an int type as a fixed divisor (stat1 0, stat2 the int): 1 leaves watts as they are."""
    raw = {"power_scaling_type": 1, "appliance_scaling_type": "SameAsPower", "power_stat1": 0.0, "power_stat2": 1.0}
    fields = _read(tmp_path, {**raw, "appliance_stat1": [0.0], "appliance_stat2": [1.0]}, devices=["kettle"])
    check_types(fields, "condinilm", "scaler.json")
    scalers = scalers_from_nilmscaler(fields)
    watts = np.array([0.0, 120.0, 2500.0])
    for s in (scalers["aggregate"], scalers["appliances"]["kettle"]):
        np.testing.assert_array_equal(scaler_from_dict(s).transform(watts), watts)


def test_a_config_with_nan_values_is_read_and_kept(tmp_path):
    """A NaN (Python's json writes float("nan") as NaN) in a field nilmbuild does not use: the config is kept."""
    path = _config_file(
        tmp_path,
        '{"app": ["kettle"], "window_size": 128, "model_kwargs": {}, "sampling_rate": "1min", "threshold": NaN}',
        "c.json",
    )
    cfg = read_config(path)
    assert cfg.devices == ["kettle"] and np.isnan(cfg.raw["threshold"])


@pytest.mark.parametrize(
    "other", [{"epoch": 3, "state_dict": {}}, {"format": "not-nilmbuild"}, [1, 2]], ids=["ckpt", "format", "list"]
)
def test_an_out_that_is_another_torch_file_is_kept(tmp_path, other):
    """A torch file nilmbuild did not write (another run's checkpoint, a dict of another format, a list) is never
    replaced by an import: one line, and the file is as it was."""
    ckpt = write_torch(tmp_path / "last.ckpt", lightning_checkpoint(placeholder_weights()))
    config = write_json(tmp_path / "experiment_config.json", condinilm_config())
    scaler = write_json(tmp_path / "scaler.json", scaler_fields())
    out = write_torch(tmp_path / "mine.pt", other)
    before = out.read_bytes()
    args = ["import", str(ckpt), "--config", str(config), "--scaler", str(scaler), "--out", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "error: --out mine.pt exists and is not a nilmbuild checkpoint" in r.output
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("cutoff", "first", "refused"),
    [
        (3000.1, float(np.float32(3000.1)), None),  # the same fit, one side kept in float32: 3.3e-8 relative
        (3000.0, 3000.0045, ("3000.0045", "3000")),  # 1.5e-6 relative: another fit (both numbers told apart)
        (0.5, 0.5000015, ("0.5000015", "0.5")),  # below 1 W the tolerance is 1e-6 W: 1.5e-6 W off
        (0.5, 0.5000005, None),
    ],
)
def test_the_scaler_must_match_the_cutoff_the_config_recorded(tmp_path, cutoff, first, refused):
    """Both upstreams set `cutoff` to appliance_stat2[0] right after fitting: the scaler must give it back to
    1e-6 relative (1e-6 W below 1 W); the message's advice depends on where the scaler came from."""
    cfg = read_config(write_json(tmp_path / "experiment_config.json", condinilm_config(cutoff=cutoff)))
    fields = read_scaler(write_json(tmp_path / "s.json", scaler_fields(stat2=(first, 300.0, 2500.0))), cfg)[0]
    if not refused:
        cross_check(fields, cfg)
        cross_check(fields, cfg, refitted=True)
        return
    shown_first, shown_cutoff = (re.escape(t) for t in refused)
    head = rf"the scaler's appliance_stat2 for kettle is {shown_first} but --config experiment_config.json recorded "
    head += rf"cutoff {shown_cutoff} from the same fit: "
    _one_line_error(head + "pass the scaler of the run that trained this model$", cross_check, fields, cfg)
    _one_line_error(head + "check --source: it is not the data this run trained on$", cross_check, fields, cfg, True)


@pytest.mark.parametrize("key", ["power_scaling_type", "appliance_scaling_type"])
def test_a_scaler_whose_types_are_not_the_configs_is_refused(tmp_path, key):
    cfg = read_config(write_json(tmp_path / "experiment_config.json", condinilm_config()))
    fields = read_scaler(write_json(tmp_path / "s.json", {**scaler_fields(), key: "StandardScaling"}), cfg)[0]
    want = rf"the scaler's {key} is 'StandardScaling' but --config experiment_config.json says 'MaxScaling': pass"
    _one_line_error(want, cross_check, fields, cfg)


def test_an_out_whose_pickle_would_run_code_is_kept_and_never_run(tmp_path):
    """--out is read (to see whether nilmbuild wrote it) weights-only: a planted pickle there is not run, and the
    file is not replaced."""
    marker = tmp_path / "MARKER"
    ckpt = write_torch(tmp_path / "last.ckpt", lightning_checkpoint(placeholder_weights()))
    config = write_json(tmp_path / "experiment_config.json", condinilm_config())
    scaler = write_json(tmp_path / "scaler.json", scaler_fields())
    out = write_torch(tmp_path / "mine.pt", {"format": RunsCode(marker)})
    before = out.read_bytes()
    args = ["import", str(ckpt), "--config", str(config), "--scaler", str(scaler), "--out", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and "error: --out mine.pt exists and is not a nilmbuild checkpoint" in r.output
    assert not marker.exists() and out.read_bytes() == before


def test_the_recorded_command_of_a_refit_names_the_source_folder_only(tmp_path):
    ckpt = write_torch(tmp_path / "last.ckpt", lightning_checkpoint(placeholder_weights()))
    config = write_json(tmp_path / "experiment_config.json", condinilm_config())
    up, cfg = detect(read_torch_file(ckpt), ckpt.name), read_config(config)
    where = "refit from ukdale:UKDALE"
    prov = import_provenance(
        up, cfg, checkpoint=ckpt, config=config, scaler=None, scaler_from=where, source=f"ukdale:{tmp_path}/UKDALE"
    )
    assert prov["command"] == "nilmbuild import last.ckpt --config experiment_config.json --source ukdale:UKDALE"
    assert prov["upstream"]["files"]["scaler"] == {"from": where}
    assert prov["nilmbuild_version"] == nilmbuild.__version__
