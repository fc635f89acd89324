"""Every NILMscaler scaling type, against the upstreams' own NILMscaler (tests/fixtures/upstream/scaling_types.json,
written by generate_refit.py with their fit/transform/inverse_transform_appliance): a type the upstream scales with
gives nilmbuild's scalers the same numbers both ways; a type it accepts but cannot scale with (or refuses) is
refused by the import with one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nilmbuild.data.preprocess import scaler_from_dict
from nilmbuild.errors import UserError
from nilmbuild.importer.scaler_fields import check_types
from nilmbuild.model.upstream.inputs import scalers_from_nilmscaler

CASES = json.loads((Path(__file__).resolve().parent / "fixtures" / "upstream" / "scaling_types.json").read_text())
PARAMS = [
    pytest.param(arch, case, id=f"{arch}-{case['power']}-{case['appliance']}")
    for arch, cases in CASES.items()
    for case in cases
]


def test_every_type_pair_is_covered():
    for arch in ("condinilm", "nilmformer"):
        pairs = {(c["power"], c["appliance"]) for c in CASES[arch]}
        assert len(pairs) == 7 * 8  # 6 names + an int divisor, and SameAsPower for the appliances
        assert sum("error" not in c for c in CASES[arch]) >= 20


@pytest.mark.parametrize(("arch", "case"), PARAMS)
def test_scaling_type_matches_or_is_refused(arch, case):
    if "error" in case:
        fields = {
            "power_scaling_type": case["power"],
            "appliance_scaling_type": case["appliance"],
            "power_stat1": 0.0,
            "power_stat2": 1.0,
            "appliance_stat1": [0.0],
            "appliance_stat2": [1.0],
            "devices": ["kettle"],
        }
        with pytest.raises(UserError, match="NILMscaler never scales with") as e:
            check_types(fields, arch, "scaler.json")
        assert "\n" not in str(e.value)
        return
    fields = case["fields"]
    check_types(fields, arch, "scaler.json")
    scalers = scalers_from_nilmscaler(fields)
    watts, z = np.array(case["watts"]), np.array(case["z"])
    scaled = np.array(case["scaled"])
    np.testing.assert_allclose(scaler_from_dict(scalers["aggregate"]).transform(watts), scaled[0], rtol=1e-12)
    for i, d in enumerate(fields["devices"]):
        s = scaler_from_dict(scalers["appliances"][d])
        np.testing.assert_allclose(s.transform(watts), scaled[1 + i], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(s.inverse(z), case["inverse"][i], rtol=1e-12, atol=1e-12)
