"""CondiNILM's gate-logit floor, which its evaluation applies but no file stores.

CondiNILM's loss (src/helpers/loss.py) gives each device a type, and its gate configuration
(src/helpers/device_config.py DEVICE_TYPE_GATE_CONFIG) a `gate_logits_floor` of -3 to the sparse-high-power
type only; the evaluation raises every gate logit of such a device to at least -3 before its soft gate. The
loss maps the types "sparse_high_power" and "sparse_medium_power" to that type. CondiNILM computes each device's
type from its training data (classify_device_type) and drops it before writing experiment_config.json, so
nilmbuild takes it, in this order, from:
  1. the config's `device_type_per_device` {name: type}, when the config has it;
  2. CondiNILM's configs/dataset_params.yaml types by device name (DATASET_TYPES below: kettle and microwave
     are sparse_high_power, cooker sparse_medium_power, ...);
  3. else no floor.
A one-device run has no floor: CondiNILM computes per-device statistics for two or more devices only, and its
loss classifies the one device from default statistics as "cycling", which has none (parse.py applies this).
Leaving the floor out costs 2.6-6.2 W on a kettle (issue 31).
"""

from __future__ import annotations

SPARSE_HIGH_POWER_TYPES = ("sparse_high_power", "sparse_medium_power")
LOGITS_FLOOR = -3.0

#: Device types that CondiNILM's configs/dataset_params.yaml assigns (UK-DALE, REFIT), by lower-case name.
DATASET_TYPES = {
    "kettle": "sparse_high_power",
    "microwave": "sparse_high_power",
    "cooker": "sparse_medium_power",
    "fridge": "cycling_low_power",
    "washing_machine": "long_cycle",
    "washingmachine": "long_cycle",
    "dishwasher": "long_cycle",
}


def device_type(name: str, config: dict) -> str:
    per_device = {str(k).strip().lower(): v for k, v in (config.get("device_type_per_device") or {}).items()}
    key = str(name).strip().lower()
    return str(per_device.get(key) or DATASET_TYPES.get(key) or "unknown")


def gate_logits_floors(devices, config: dict) -> list[float]:
    """One floor per device: -3 for sparse-high-power types, -inf (none) for the rest."""
    return [LOGITS_FLOOR if device_type(d, config) in SPARSE_HIGH_POWER_TYPES else float("-inf") for d in devices]
