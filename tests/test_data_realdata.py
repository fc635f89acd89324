"""The real UK-DALE / REFIT samples in ../shared/data load as they are (tests/conftest.py: skipped when
absent, failed when absent in CI)."""

from pathlib import Path

import numpy as np
import pytest

from nilmbuild.data import PrepConfig, load_source, prepare

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # = conftest.SHARED_DATA

pytestmark = pytest.mark.realdata


def test_ukdale_house2_csv():
    h = load_source(f"csv:{DATA / 'ukdale-house2-30s'}").check()
    assert h.rate_s == 30 and h.meta["like"] == "ukdale" and h.meta["missing"] == ["fridge"]
    assert str(h.timestamps[0])[:10] == "2013-05-20" and str(h.timestamps[-1])[:10] == "2013-10-10"
    with pytest.warns(UserWarning, match="fridge"):
        p = prepare(h, PrepConfig(test_from="2013-09-15"))
    assert p.stats["cutoff_w"] == 6000 and p.thresholds_w["kettle"] == 2000
    assert all(p.stats["windows"][s] > 50 for s in ("train", "val", "test"))
    assert 0.002 < p.stats["on_fraction"]["kettle"] < 0.03
    assert str(p.test.timestamps[0]) >= "2013-09-15"


def test_refit_house2_csv_one_month_and_folder():
    h = load_source(f"csv:{DATA / 'refit-house2-30s' / 'REFIT_House2_2014-03.csv.gz'}")
    assert h.meta["like"] == "refit" and np.isfinite(h.aggregate).mean() > 0.9
    with pytest.warns(UserWarning):
        p = prepare(h)
    assert p.stats["cutoff_w"] == 10000 and p.thresholds_w["kettle"] == 500
    full = load_source(f"csv:{DATA / 'refit-house2-30s'}")
    assert len(full) > 1_700_000 and str(full.timestamps[-1])[:10] == "2015-05-28"
