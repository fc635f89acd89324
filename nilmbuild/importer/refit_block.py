"""CondiNILM's training block, as its experiment_config.json records it: what `--source` refits the scaler on.

CondiNILM's `scripts/run_experiment.py` (UK-DALE branch) fits its NILMscaler on the training windows only:
the houses `ind_house_train_val` (all of each house's files: UK-DALE runs choose no dates), put on the
`sampling_rate` grid, cut into windows of `window_size` steps every `window_size * (1 - overlap)` steps, split
into training and validation by `overlap` and `seed`, with the scaling types `power_scaling_type` and
`appliance_scaling_type`. Every one of these is in the config it writes, so `--source` needs no other option.
"""

from __future__ import annotations

from dataclasses import dataclass

from nilmbuild.errors import UserError

from .upstream_config import UpstreamConfig

#: The appliance names CondiNILM's UK-DALE builder accepts (UKDALE_DataBuilder._check_appliance_names).
UKDALE_APPLIANCES = ("washing_machine", "cooker", "dishwasher", "kettle", "fridge", "microwave", "electric_heater")
#: The labels.dat names it also takes for an appliance when the appliance's own name is not there, in order.
UKDALE_ALIASES = {
    "fridge": ("freezer", "fridge_freezer", "fridge-freezer"),
    "washing_machine": ("washer_dryer", "washer", "clothes_washer"),
    "dishwasher": ("dish_washer",),
    "microwave": ("microwave_oven",),
}
_PASS_SCALER = "pass --scaler SCALER.json instead (docs/upstream-models.md)"


@dataclass(frozen=True)
class TrainingBlock:
    houses: list[int]  # ind_house_train_val, in order
    devices: list[str]  # the config's `app`
    rate: str  # the config's sampling_rate, as written ("1min", "30s", ...)
    rate_s: int
    window: int
    stride: int  # window_size when overlap is 0, else max(1, round(window_size * (1 - overlap)))
    overlap: float
    seed: int
    power_type: str | int
    appliance_type: str | int


def training_block(cfg: UpstreamConfig) -> TrainingBlock:
    """The block `--source` refits on; a one-line UserError for a run it cannot reproduce."""
    raw, name = cfg.raw, cfg.name
    dataset = str(raw.get("dataset", ""))
    if not dataset.upper().startswith("UKDALE"):
        raise UserError(
            f"--source refits CondiNILM's UK-DALE scaler only, but --config {name} trained on dataset "
            f"{dataset or '(none)'!r}: {_PASS_SCALER}"
        )
    bad = [d for d in cfg.devices if d not in UKDALE_APPLIANCES]
    if bad:
        raise UserError(
            f"--config {name}: CondiNILM's UK-DALE builder has no appliance {', '.join(bad)}: {_PASS_SCALER}"
        )
    overlap = _overlap(raw.get("overlap", 0.0), name)
    stride = cfg.window if overlap == 0 else max(1, int(round(cfg.window * (1.0 - overlap))))
    return TrainingBlock(
        houses=_houses(raw.get("ind_house_train_val"), name),
        devices=list(cfg.devices),
        rate=str(raw.get("sampling_rate")),
        rate_s=cfg.step_s,
        window=cfg.window,
        stride=stride,
        overlap=overlap,
        seed=_int(raw.get("seed"), name, "seed"),
        power_type=_scaling(raw, "power_scaling_type", name),
        appliance_type=_scaling(raw, "appliance_scaling_type", name),
    )


def _houses(v, name: str) -> list[int]:
    if not isinstance(v, list) or not v or not all(isinstance(h, int) and not isinstance(h, bool) for h in v):
        raise UserError(
            f"--config {name} has no `ind_house_train_val` list of house numbers (the houses CondiNILM trained on): "
            f"pass the experiment_config.json CondiNILM wrote, or {_PASS_SCALER}"
        )
    return list(v)


def _overlap(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v == 0 or 0 < v < 1):
        raise UserError(f"--config {name}: overlap is {v!r}; CondiNILM takes 0 or a fraction between 0 and 1")
    return float(v)


def _int(v, name: str, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise UserError(f"--config {name} has no integer `{key}` (its split depends on it): {_PASS_SCALER}")
    return v


def _scaling(raw: dict, key: str, name: str) -> str | int:
    if key not in raw:
        raise UserError(f"--config {name} has no `{key}`: pass the experiment_config.json CondiNILM wrote")
    return raw[key]
