"""nilmbuild/site/upstream_findings.py on small arrays whose answers are worked out by hand here."""

from __future__ import annotations

import numpy as np
import pytest

from nilmbuild.site import upstream_findings as U


def _weights(rows):
    """(1, H, T, T) from per-head (T, T) rows."""
    return np.asarray(rows, np.float64)[None]


def test_stats_token_share_per_head():
    # T = 3 tokens (2 steps + stats). Head 0: time queries put 0.5 and 0.25 on the stats token -> 0.375;
    # head 1: 0.1 and 0.1 -> 0.1. The stats token's own row (last) is not a time-step query and is ignored.
    h0 = [[0.25, 0.25, 0.5], [0.5, 0.25, 0.25], [1.0, 0.0, 0.0]]
    h1 = [[0.9, 0.0, 0.1], [0.0, 0.9, 0.1], [0.0, 0.0, 1.0]]
    got = U.stats_token_share([_weights([h0, h1]), _weights([h1, h1])])
    assert got["top"] == {"layer": 0, "head": 0, "share": pytest.approx(0.375)}
    assert got["low"]["share"] == pytest.approx(0.1) and (got["low"]["layer"], got["low"]["head"]) == (0, 1)
    assert got["uniform"] == pytest.approx(1 / 3)


def test_local_time_head_renormalises_over_the_time_keys():
    # 3 steps + stats. Head 0 puts all its time weight on its own step (distance 0) whatever goes to the stats
    # token; head 1 on the step furthest away: queries 0, 1, 2 -> keys 2, 0 (or 2), 0: distances 2, 1, 2 -> 5/3.
    eye = [[0.5, 0, 0, 0.5], [0, 0.5, 0, 0.5], [0, 0, 0.5, 0.5], [0.25, 0.25, 0.25, 0.25]]
    far = [[0, 0, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0.25, 0.25, 0.25, 0.25]]
    got = U.local_time_head([_weights([eye, far])])
    assert got["local"] == (0, 0, pytest.approx(0.0)) and got["global"] == (0, 1, pytest.approx(5 / 3))


def test_soft_gate_removed_counts_what_the_clamp_leaves():
    # 2 windows x 2 devices x 3 steps of 1 min. Window 1, device 0: before 1000, 1000, -200 (clamped to 0) = 2000 W
    # steps; after 100, 0, -300 (0) = 100 -> 1900 W x 1/60 h = 31.67 Wh removed, 95% of 33.33 Wh.
    before = np.zeros((2, 2, 3))
    after = np.zeros((2, 2, 3))
    before[1, 0], after[1, 0] = [1000, 1000, -200], [100, 0, -300]
    before[0, 1], after[0, 1] = [600, 0, 0], [0, 0, 0]  # 10 Wh removed: less
    got = U.soft_gate_removed(before, after, 1 / 60)
    assert (got["sample"], got["device"]) == (1, 0)
    assert got["kwh"] == pytest.approx(1900 / 60 / 1000) and got["share"] == pytest.approx(0.95)


def test_output_film_change_skips_the_sparse_devices():
    # Device 0 changes most (500 W) but is sparse: device 1's ReLU output goes 100 -> 0 and 0 -> 0 and -50 -> 30:
    # |change| 100, 0, 30 -> mean 130/3, mean power change (0 + 0 + 30 - 100) / 3 = -70/3.
    raw = np.array([[[0, 0, 0], [100, -20, -50]]], np.float64)
    film = np.array([[[500, 500, 500], [-10, -30, 30]]], np.float64)
    got = U.output_film_change(raw, film, skip=[0])
    assert (got["sample"], got["device"]) == (0, 1)
    assert got["mean_abs_w"] == pytest.approx(130 / 3) and got["delta_w"] == pytest.approx(-70 / 3)
    assert U.output_film_change(raw, film)["device"] == 0


def test_strongest_film_layer():
    g = np.zeros((2, 3, 4))
    g[:, 2] = [0.1, -0.3, 0.0, 0.2]  # layer 2: mean |gamma| 0.15, largest 0.3
    g[:, 0] = 0.05
    b = np.full((2, 3, 4), -0.5)
    got = U.strongest_film_layer(g, b)
    assert got == {"layer": 2, "mean_abs_gamma": pytest.approx(0.15), "max_abs_gamma": pytest.approx(0.3),
                   "mean_abs_beta": pytest.approx(0.5)}  # fmt: skip


def test_learned_denorm_range_and_correlations():
    std_p, mean_p = np.array([10.0, 40.0, 20.0]), np.array([5.0, 1.0, 3.0])
    got = U.learned_denorm(mean_p, std_p, mean_in=np.array([3.0, 1.0, 2.0]), std_in=np.array([1.0, 4.0, 2.0]))
    assert got["low"] == {"sample": 0, "std_w": 10.0, "mean_w": 5.0} and got["high"]["sample"] == 1
    assert got["r_std"] == pytest.approx(1.0) and got["r_mean"] == pytest.approx(1.0)  # both exactly linear
    flat = U.learned_denorm(mean_p, std_p, mean_in=np.ones(3), std_in=np.ones(3))
    assert flat["r_std"] == 0.0 and flat["r_mean"] == 0.0
