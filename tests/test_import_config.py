"""nilmbuild import, --config and --scaler: the device order is the config's `app`, the sampling rate fixes the
step, the NILMscaler's fields are checked and put in the config's order, and every problem is one line that says
what to pass."""

from __future__ import annotations

import pytest

from nilmbuild.errors import UserError
from nilmbuild.importer.run import cross_check
from nilmbuild.importer.scaler_fields import read_scaler
from nilmbuild.importer.upstream_config import read_config, step_seconds
from tests.upstream_files import DEVICES, condinilm_config, nilmformer_config, scaler_fields, write_json


def _cfg(tmp_path, **over):
    return read_config(write_json(tmp_path / "experiment_config.json", condinilm_config(**over)))


def test_condinilm_config(tmp_path):
    cfg = _cfg(tmp_path)
    assert (cfg.devices, cfg.window, cfg.step_s) == (DEVICES, 128, 60)
    assert cfg.raw == condinilm_config()  # kept whole, as it was read


def test_original_config_from_yaml_with_tags(tmp_path):
    """The original's configs use YAML tags (!!str, !!float); a date in the YAML is kept as text."""
    path = tmp_path / "resolved.yaml"
    path.write_text(
        "name_model: !!str NILMFormer\napp: !!str kettle\nwindow_size: 256\nsampling_rate: !!str 30s\n"
        "model_kwargs:\n  d_model: 96\n  norm_eps: !!float 1e-5\nrun_on: 2024-04-12\n"
    )
    cfg = read_config(path)
    assert (cfg.devices, cfg.window, cfg.step_s) == (["kettle"], 256, 30)
    assert cfg.raw["model_kwargs"]["norm_eps"] == 1e-5 and cfg.raw["run_on"] == "2024-04-12"


@pytest.mark.parametrize(
    ("rate", "seconds"), [("1min", 60), ("30s", 30), ("10S", 10), ("1T", 60), ("6s", 6), ("1h", 3600)]
)
def test_sampling_rates(rate, seconds):
    assert step_seconds(rate, "c.json") == seconds


@pytest.mark.parametrize("rate", ["0.5s", "fast", None, "10 parsecs"])
def test_bad_sampling_rate(rate):
    with pytest.raises(UserError, match="sampling_rate"):
        step_seconds(rate, "c.json")


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"app": []}, "no device list `app`"),
        ({"app": None}, "no device list `app`"),
        ({"app": ["kettle", "kettle"]}, "repeated or empty device names \\(kettle\\)"),
        ({"window_size": "day"}, "window_size is 'day'"),
        ({"name_model": "BiGRU"}, "only NILMFormer"),
        ({"model_kwargs": None}, "no `model_kwargs`"),
    ],
)
def test_config_errors(tmp_path, over, match):
    with pytest.raises(UserError, match=match) as e:
        _cfg(tmp_path, **over)
    assert "\n" not in str(e.value)


def test_config_not_json_or_yaml(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("app: [kettle\nwindow_size: 1")
    with pytest.raises(UserError, match="c.yaml line .* is neither JSON nor YAML"):
        read_config(path)
    path.write_text("just words")
    with pytest.raises(UserError, match="holds a str, not a mapping"):
        read_config(path)


def test_scaler_reordered_to_config_order(tmp_path):
    cfg = _cfg(tmp_path)
    fields = scaler_fields(devices=["washing_machine", "kettle", "fridge"], stat2=(2500.0, 3000.0, 300.0))
    got, where = read_scaler(write_json(tmp_path / "scaler.json", fields), cfg)
    assert where == "scaler.json"
    assert got["devices"] == DEVICES
    assert got["appliance_stat2"] == [3000.0, 300.0, 2500.0]  # kettle, fridge, washing_machine
    assert got["power_stat2"] == 8000.0


def test_scaler_block_in_original_config(tmp_path):
    cfg = read_config(write_json(tmp_path / "resolved.json", nilmformer_config()))
    got, where = read_scaler(None, cfg)
    assert where == "resolved.json:scaler"
    assert got["devices"] == ["kettle"] and got["appliance_stat2"] == [7000.0]
    assert got["appliance_scaling_type"] == "SameAsPower"


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda f: f.pop("power_stat2"), "no power_stat2"),
        (
            lambda f: f.update(devices=["kettle", "fridge"], appliance_stat1=[0, 0], appliance_stat2=[1, 2]),
            "no scaler for device washing_machine",
        ),
        (lambda f: f.update(devices=[*DEVICES, "oven"]), "are not the config's `app`"),
        (lambda f: f.update(appliance_stat2=[1.0, 2.0]), "appliance_stat2 has 2 values for 3 devices"),
        (lambda f: f.update(power_scaling_type="Log"), "power_scaling_type is 'Log'"),
        (lambda f: f.update(power_stat2="8000"), "power_stat2 is '8000', not a finite number"),
        (lambda f: f.pop("devices"), "no `devices` list"),
    ],
)
def test_scaler_errors(tmp_path, edit, match):
    cfg = _cfg(tmp_path)
    fields = scaler_fields()
    edit(fields)
    with pytest.raises(UserError, match=match) as e:
        read_scaler(write_json(tmp_path / "scaler.json", fields), cfg)
    assert "\n" not in str(e.value)


def test_no_scaler_anywhere(tmp_path):
    with pytest.raises(UserError, match="pass --scaler SCALER.json"):
        read_scaler(None, _cfg(tmp_path))


def test_scaler_not_json(tmp_path):
    path = tmp_path / "scaler.json"
    path.write_text("power_stat2: 1")
    with pytest.raises(UserError, match="scaler.json is not JSON"):
        read_scaler(path, _cfg(tmp_path))


def test_scaler_from_another_run(tmp_path):
    """The config recorded cutoff = appliance_stat2[0] and the scaling types of its fit: a different scaler fails."""
    cfg = _cfg(tmp_path)
    cross_check(read_scaler(write_json(tmp_path / "s.json", scaler_fields()), cfg)[0], cfg)  # 3000 == cutoff
    other = read_scaler(write_json(tmp_path / "s.json", scaler_fields(stat2=(3100.0, 300.0, 2500.0))), cfg)[0]
    with pytest.raises(UserError, match="appliance_stat2 for kettle is 3100 but .* recorded cutoff 3000"):
        cross_check(other, cfg)
    fields = scaler_fields()
    fields["appliance_scaling_type"] = "StandardScaling"
    with pytest.raises(UserError, match="appliance_scaling_type is 'StandardScaling' but"):
        cross_check(read_scaler(write_json(tmp_path / "s.json", fields), cfg)[0], cfg)


def test_script_in_device_name_is_refused_in_one_line(tmp_path):
    """Device names are the user's strings; one that is none of nilmbuild's devices (importer/device_names.py) is
    refused before anything is read further, with one line that names what nilmbuild knows."""
    name = '<script>alert("x")</script>'
    with pytest.raises(UserError, match="which nilmbuild cannot explain: it knows kettle, microwave") as e:
        read_config(write_json(tmp_path / "c.json", condinilm_config(devices=[name, "fridge"])))
    assert "\n" not in str(e.value)


def test_upstream_spellings_keep_their_names_for_the_scaler(tmp_path):
    """The scaler names the upstream's devices, so it is matched by those; the model's names are nilmbuild's."""
    cfg = read_config(write_json(tmp_path / "c.json", condinilm_config(devices=["Kettle", "WashingMachine"])))
    assert cfg.devices == ["Kettle", "WashingMachine"] and cfg.names == ["kettle", "washing_machine"]
    got, _ = read_scaler(write_json(tmp_path / "s.json", scaler_fields(devices=["WashingMachine", "Kettle"])), cfg)
    assert got["devices"] == ["Kettle", "WashingMachine"] and got["appliance_stat2"] == [300.0, 3000.0]
