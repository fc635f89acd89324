"""Write stores in NILMTK's DataStore layout with PyTables, for tests (hand-chosen values, any metadata) and the
disaggregate memory benchmark (a simulated household of any length).

The layout is what NILMTK's HDFDataStore (pandas "frame_table") writes: /buildingN/elec/meterM/table with an
`index` column of UTC nanoseconds and one `values_block_0` float32 column whose labels are the pickled
`values_block_0_kind` attribute; building and root metadata pickled into `metadata` attributes (PyTables
pickles what is not a plain array when an attribute is set). The real NILMTK-written store is the UK-DALE
fixture (tests/fixtures/nilmtk/make_ukdale_house2.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tables

ACTIVE = ("power", "active")
APPARENT = ("power", "apparent")


def write_meter(f, building: int, meter: int, times_s, columns: dict[tuple[str, str], list[float]]) -> None:
    """One meter's table: times in unix seconds, columns label -> values (watts)."""
    labels = list(columns)
    desc = {
        "index": tables.Int64Col(pos=0),
        "values_block_0": tables.Float32Col(shape=(len(labels),), pos=1),
    }
    group = f"/building{building}/elec/meter{meter}"
    t = f.create_table(group, "table", desc, createparents=True)
    rows = np.zeros(len(times_s), dtype=t.dtype)
    rows["index"] = np.asarray(times_s, dtype=np.int64) * 1_000_000_000
    rows["values_block_0"] = np.stack([np.asarray(columns[k], np.float32) for k in labels], axis=1)
    t.append(rows)
    t.attrs.index_kind = "datetime64"
    t.attrs.values_block_0_kind = labels  # a list: PyTables pickles it, as pandas' stores have it
    f.get_node(group)._v_attrs.non_index_axes = [(1, labels)]


def write_store(path: Path, buildings: dict[int, dict], root: dict | None = None) -> Path:
    """buildings: number -> {"metadata": dict, "meters": {meter: (times_s, {label: values})}}."""
    with tables.open_file(str(path), "w") as f:
        f.root._v_attrs.metadata = root if root is not None else {"name": "TEST", "meter_devices": {}}
        for number, b in buildings.items():
            f.create_group("/", f"building{number}")
            f.get_node(f"/building{number}")._v_attrs.metadata = b["metadata"]
            for meter, (times_s, cols) in b.get("meters", {}).items():
                write_meter(f, number, meter, times_s, cols)
    return path


def building_meta(number: int, sites: list[int], appliances: list[tuple[str, list[int]]], **extra) -> dict:
    """NILMTK building metadata: site meters, and (type, meters) appliances each metered by submeters."""
    meters = {m: {"site_meter": True, "device_model": "mains"} for m in sites}
    for _, ms in appliances:
        for m in ms:
            meters.setdefault(m, {"submeter_of": sites[0], "device_model": "plug"})
    apps = [{"type": t, "instance": 1, "meters": ms, "original_name": t} for t, ms in appliances]
    return {"instance": number, "elec_meters": meters, "appliances": apps, **extra}


def store_from_household(path: Path, hh) -> Path:
    """A Household (e.g. the simulator's) as building 1 of a NILMTK store: a site meter and one meter per device."""
    from nilmbuild.data.household import DEVICE_NAMES

    types = {"kettle": "kettle", "microwave": "microwave", "fridge": "fridge", "dishwasher": "dish washer"}
    types["washing_machine"] = "washing machine"
    devs = [d for d in DEVICE_NAMES if d in hh.appliances]
    meta = building_meta(1, [1], [(types[d], [i + 2]) for i, d in enumerate(devs)])
    t = hh.timestamps.astype("datetime64[s]").astype(np.int64)
    meters = {1: (t, {ACTIVE: hh.aggregate})}
    meters.update({i + 2: (t, {ACTIVE: hh.appliances[d]}) for i, d in enumerate(devs)})
    return write_store(path, {1: {"metadata": meta, "meters": meters}})
