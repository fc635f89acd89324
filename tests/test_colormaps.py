"""static/js/colormaps.js (run in node) against published colormap tables, not against its own function.

Reference values (0..1 floats as published, compared after x 255):
  viridis, cividis: matplotlib 3.11.2, lib/matplotlib/_cm_listed.py (_viridis_data, _cividis_data:
      the 256-entry tables of van der Walt & Smith 2015 and Nuñez et al. 2018), entry i = colour(i / 255).
  burd = matplotlib's RdBu_r: the ColorBrewer RdBu 11-class colours (colorbrewer2.org; matplotlib
      lib/matplotlib/_cm.py _RdBu_data), evenly spaced on [0, 1], linearly interpolated, reversed.
Tolerances: viridis is a 6th-degree polynomial fit, documented in colormaps.js as within 4/255 per
channel; cividis and burd are within 1/255 (table anchors, linear interpolation, rounding).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

VIRIDIS = {  # matplotlib _viridis_data[i]
    0: (0.267004, 0.004874, 0.329415),
    23: (0.283072, 0.130895, 0.449241),
    64: (0.229739, 0.322361, 0.545706),
    128: (0.127568, 0.566949, 0.550556),
    212: (0.555484, 0.840254, 0.269281),
    255: (0.993248, 0.906157, 0.143936),
}
CIVIDIS = {  # matplotlib _cividis_data[i]
    0: (0.0, 0.135112, 0.304751),
    23: (0.003602, 0.195911, 0.441564),
    64: (0.263738, 0.307831, 0.422789),
    128: (0.488697, 0.485318, 0.471008),
    212: (0.819499, 0.747659, 0.379785),
    251: (0.992218, 0.888385, 0.205468),
    255: (0.995737, 0.909344, 0.217772),
}
RDBU_HEX = (
    "#67001f",
    "#b2182b",
    "#d6604d",
    "#f4a582",
    "#fddbc7",
    "#f7f7f7",  # ColorBrewer RdBu 11, red first
    "#d1e5f0",
    "#92c5de",
    "#4393c3",
    "#2166ac",
    "#053061",
)
BURD = {  # RdBu_r(i / 255): entries 0, 51, 102, 153, 204, 255 are ColorBrewer colours exactly
    0: (5, 48, 97),
    51: (67, 147, 195),
    102: (209, 229, 240),
    153: (253, 219, 199),
    204: (214, 96, 77),
    255: (103, 0, 31),
    64: (107, 172, 209),
    128: (247, 246, 246),
    191: (229, 131, 104),
}

NODE_SCRIPT = """
const { pathToFileURL } = await import("node:url");
const { colormaps } = await import(pathToFileURL(process.argv[1]).href);
const out = {};
for (const n of colormaps.names) out[n] = Array.from(colormaps.lut(n));
out.map = [0, 0.1, 0.5, 0.998, 1, -3, 7].map(t => colormaps.map("viridis", t));
console.log(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def js():
    if shutil.which("node") is None:
        pytest.skip("missing dependency: node: install Node.js 20+ (`make setup` installs it)")
    res = subprocess.run(
        ["node", "--input-type=module", "-e", NODE_SCRIPT, str(ROOT / "static" / "js" / "colormaps.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = json.loads(res.stdout)
    luts = {k: np.array(v, dtype=int).reshape(256, 4) for k, v in out.items() if k != "map"}
    return luts, out["map"]


def test_every_map_is_256_opaque_entries(js):
    luts, _ = js
    assert sorted(luts) == ["burd", "cividis", "viridis"]
    for name, lut in luts.items():
        assert lut.shape == (256, 4) and (lut[:, 3] == 255).all(), name


@pytest.mark.parametrize("name, table, tol", [("viridis", VIRIDIS, 4), ("cividis", CIVIDIS, 1)])
def test_matplotlib_table_entries(js, name, table, tol):
    lut = js[0][name]
    for i, rgb in table.items():
        want = np.round(np.array(rgb) * 255)
        assert np.abs(lut[i, :3] - want).max() <= tol, (name, i, lut[i, :3].tolist(), want.tolist())


def test_burd_is_colorbrewer_rdbu_reversed(js):
    lut = js[0]["burd"]
    for i, rgb in BURD.items():
        assert np.abs(lut[i, :3] - np.array(rgb)).max() <= 1, (i, lut[i, :3].tolist(), rgb)
    hexes = [tuple(int(h[k : k + 2], 16) for k in (1, 3, 5)) for h in RDBU_HEX[::-1]]
    assert [tuple(lut[round(k * 25.5), :3]) for k in range(0, 11, 2)] == hexes[::2]


def test_map_uses_entry_round_t_times_255_clamped(js):
    luts, mapped = js
    v = luts["viridis"][:, :3].tolist()
    assert mapped == [v[0], v[26], v[128], v[254], v[255], v[0], v[255]]
