"""nilmbuild.explain: attributions on hand-checkable toy models, the quality measures on hand-computed cases,
the explained function against run_window, the randomisation check, and the CLI's errors and JSON."""

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from torch import nn

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.explain import quality as q
from nilmbuild.explain.methods import Settings, attribute
from nilmbuild.explain.wrapper import Interval, Target, WattsToDevice, window_baseline

L = 40


class Linear(nn.Module):
    """f(x) = x @ w: IG and gradient x (input - baseline) are both exactly (x - b) * w."""

    def __init__(self, w):
        super().__init__()
        self.w = torch.as_tensor(w, dtype=torch.float32)

    def forward(self, x):
        return x @ self.w


class TwoSteps(nn.Module):
    """f(x) = x[10] + x[11]: a receptive field of exactly steps 10 and 11."""

    def forward(self, x):
        return x[:, 10] + x[:, 11]


def _toy_input():
    rng = np.random.default_rng(3)
    x = torch.from_numpy((100 + 2000 * rng.random(L)).astype(np.float32))[None]
    return x, torch.full_like(x, float(x.min()))


@pytest.mark.parametrize("method", ["ig", "saliency"])
def test_gradient_methods_on_a_linear_model_are_delta_times_weight(method):
    w = np.linspace(-1.0, 2.0, L)
    x, b = _toy_input()
    got = attribute(Linear(w), x, b, method)[0].double().numpy()
    np.testing.assert_allclose(got, (x - b)[0].double().numpy() * w, rtol=1e-5, atol=1e-3)


def test_occlusion_lights_up_exactly_the_window_that_holds_the_receptive_field():
    x, b = _toy_input()
    got = attribute(TwoSteps(), x, b, "occlusion", Settings(occlusion_window=4, occlusion_stride=4))[0].numpy()
    drop = float(x[0, 10] + x[0, 11] - 2 * b[0, 0])  # occluding steps 8..11 removes both steps' excess
    want = np.zeros(L)
    want[8:12] = drop
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_overlapping_occlusion_windows_average_their_drops():
    x, b = _toy_input()
    got = attribute(TwoSteps(), x, b, "occlusion", Settings(occlusion_window=2, occlusion_stride=1))[0].numpy()
    d10, d11 = float(x[0, 10] - b[0, 0]), float(x[0, 11] - b[0, 0])
    # step 10 is in windows [9,11) (drop d10) and [10,12) (drop d10 + d11); step 9 in [8,10) (0) and [9,11) (d10)
    assert got[10] == pytest.approx((d10 + d10 + d11) / 2, rel=1e-6)
    assert got[9] == pytest.approx(d10 / 2, rel=1e-6)
    assert got[12] == pytest.approx(d11 / 2, rel=1e-6) and got[5] == 0


def test_deletion_and_insertion_of_a_perfect_ranking():
    x, b = _toy_input()
    attr = np.zeros(L)
    attr[[10, 11]] = [2.0, 1.0]
    c = q.deletion_insertion(TwoSteps(), x[0], b[0], attr)
    # 5 % of 40 steps = the two relevant ones: deletion drops to 0, insertion reaches 1, at the first point
    assert c["deletion"][:2] == pytest.approx([1.0, 0.0]) and max(abs(v) for v in c["deletion"][1:]) < 1e-6
    assert c["insertion"][:2] == pytest.approx([0.0, 1.0]) and min(c["insertion"][1:]) > 1 - 1e-6
    assert c["deletion_area"] == pytest.approx(0.05 / 2) and c["insertion_area"] == pytest.approx(1 - 0.05 / 2)


def test_a_wrong_ranking_deletes_nothing_until_the_end():
    x, b = _toy_input()
    attr = np.arange(L, dtype=float)  # step 39 first ... steps 11, 10 at ranks 28, 29 (0-based)
    c = q.deletion_insertion(TwoSteps(), x[0], b[0], attr)
    assert c["deletion"][14] == pytest.approx(1.0)  # 70 % = 28 steps deleted, neither of the two yet
    assert c["deletion"][15] == pytest.approx(0.0, abs=1e-6)  # 75 % = 30 steps: both gone


def test_effective_steps_by_hand():
    assert q.effective_steps([3.0, -1.0, 0.0, 0.0]) == 2  # 3 < 0.9 * 4 <= 3 + 1
    assert q.effective_steps([1.0, 0.0, 0.0]) == 1
    assert q.effective_steps([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]) == 9
    assert q.effective_steps(np.zeros(5)) == 0


def test_spearman_by_hand():
    assert q.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert q.spearman([1, -2, 3], [1, 2, 3]) == pytest.approx(1.0)  # absolute values are ranked
    # ties share their average rank: ranks (1.5, 1.5, 3) vs (1, 2, 3) -> 1.5 / sqrt(1.5 * 2)
    assert q.spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(1.5 / np.sqrt(3.0))
    assert np.isnan(q.spearman([1, 1, 1], [1, 2, 3]))


def test_max_sensitivity_of_a_constant_explanation_is_zero_and_of_the_input_is_its_noise():
    x = torch.full((1, L), 100.0)
    assert q.max_sensitivity(lambda inp: inp * 0 + 1.0, x) == 0.0
    s = q.max_sensitivity(lambda inp: inp, x, radius=5.0, samples=4)
    assert 0 < s <= 5.0 * np.sqrt(L) / (100.0 * np.sqrt(L))  # ||d|| / ||x|| with |d| <= 5 W per step


@pytest.fixture(scope="module")
def shipped():
    return nilmbuild.load_model()


@pytest.fixture(scope="module")
def window():
    rng = np.random.default_rng(11)
    agg = 150 + 40 * rng.random(480)
    agg[100:104] += 2800.0  # a kettle-like boil
    agg[300:360] += 120.0 * (np.arange(60) % 20 < 12)  # fridge-like cycling
    return agg.astype(np.float32), "2024-06-20T06:00"


def test_the_explained_hard_output_is_run_window(shipped, window):
    agg, start = window
    want = shipped.run_window(agg, start)
    for d in shipped.devices:
        got = WattsToDevice(shipped.loaded, start, d, "hard")(torch.from_numpy(agg)[None])[0].detach().numpy()
        np.testing.assert_array_equal(got, want[d])


def test_energy_target_is_watt_minutes_over_sixty(shipped, window):
    agg, start = window
    f = WattsToDevice(shipped.loaded, start, "kettle", "hard")
    w = shipped.run_window(agg, start)["kettle"].astype(np.float64)
    with torch.no_grad():
        e = Target(f, 90, 120, step_s=60)(torch.from_numpy(agg)[None]).item()
        p = Target(f, 101, 102, step_s=60, point=True)(torch.from_numpy(agg)[None]).item()
    assert e == pytest.approx(w[90:120].sum() / 60, rel=1e-5) and p == pytest.approx(w[101], rel=1e-6)


def test_ig_on_the_soft_output_is_complete(shipped, window):
    from nilmbuild.explain import explain_window

    agg, start = window
    e = explain_window(shipped.loaded, agg, start, "kettle", method="ig", output="soft")
    assert abs(e.completeness["soft"]) < 0.05 * abs(e.value - e.baseline_value)
    assert e.baseline_w.min() == e.baseline_w.max() == agg.min()
    assert np.argmax(e.attribution) in range(100, 104)


def test_randomised_model_changes_every_weight_and_not_the_original(shipped):
    before = {k: v.clone() for k, v in shipped.loaded.model.state_dict().items()}
    twin = q.randomised_model(shipped.loaded.model, seed=1)
    for name, p in twin.named_parameters():
        assert not torch.equal(p, dict(shipped.loaded.model.named_parameters())[name]), name
    for k, v in shipped.loaded.model.state_dict().items():
        assert torch.equal(v, before[k])


def test_randomising_the_weights_moves_the_rank_correlation(shipped, window):
    from nilmbuild.explain.api import make_target

    agg, start = window
    x, b = torch.from_numpy(agg)[None], torch.from_numpy(window_baseline(agg))[None]
    iv = Interval(0, 480)
    real = attribute(make_target(shipped.loaded, start, "kettle", iv, "soft"), x, b, "saliency")[0].numpy()
    again = attribute(make_target(shipped.loaded, start, "kettle", iv, "soft"), x, b, "saliency")[0].numpy()
    twin = q.randomised_model(shipped.loaded.model)
    rand = attribute(make_target(shipped.loaded, start, "kettle", iv, "soft", model=twin), x, b, "saliency")[0]
    assert q.spearman(real, again) == pytest.approx(1.0)
    assert q.spearman(real, rand.numpy()) < 0.9


def _run(*args):
    return CliRunner().invoke(main, ["explain", *args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--start", "2024-06-20T04:00"], "pass --device and --start"),
        (["-d", "toaster", "--start", "2024-06-20T04:00"], "unknown device 'toaster'"),
        (["-d", "kettle", "--start", "yesterday"], "bad --start 'yesterday'"),
        (
            ["-d", "kettle", "--start", "2024-06-20T04:00", "--end", "2024-06-20T05:00", "--step", "2024-06-20T05:00"],
            "not both",
        ),
        (["-d", "kettle", "--start", "2024-06-20T04:00", "--step", "2024-06-20T12:00"], "is not a step of the window"),
        (
            ["-d", "kettle", "--start", "2024-06-20T04:00", "--end", "2024-06-20T04:30:30"],
            "is not a step of the window",
        ),
        (["--quality", "-d", "toaster"], "unknown device 'toaster'"),
        (["--quality", "--output", "soft"], "--quality measures the hard-gate output"),
    ],
)
def test_cli_bad_input_is_one_line(args, message):
    r = _run(*args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_window_outside_the_data_is_one_line():
    r = _run("-d", "kettle", "--start", "2031-01-01T00:00", "-m", "saliency")
    assert r.exit_code == 2 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_cli_json_point_level_is_the_model_on_the_data_window(shipped):
    r = CliRunner().invoke(
        main,
        [
            "explain",
            "-d",
            "kettle",
            "--start",
            "2024-06-20T04:00",
            "--step",
            "2024-06-20T06:43",
            "-m",
            "saliency",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["target"]["level"] == "point" and d["target"]["steps"] == [163, 164] and d["target"]["unit"] == "W"
    assert len(d["attribution"]) == len(d["aggregate_w"]) == 480 and d["timestamps"][163] == "2024-06-20T06:43:00"
    agg = np.asarray(d["aggregate_w"], np.float32)
    assert d["baseline_w"] == pytest.approx(float(agg.min()))
    want = shipped.run_window(agg, "2024-06-20T04:00")["kettle"]
    np.testing.assert_allclose(d["device_w"], want, rtol=1e-6, atol=1e-4)
    assert d["target"]["value"] == pytest.approx(float(want[163]), rel=1e-5)
    layers = d["attention_spearman"]["layers"]
    assert len(layers) == shipped.loaded.cfg.n_encoder_layers and all(-1 <= v <= 1 for v in layers)


def test_the_data_window_is_the_captured_one(shipped):
    from nilmbuild.explain.batch import captured_windows
    from nilmbuild.explain.window import load_window

    aggw, t0 = captured_windows(shipped.loaded)
    for b in (0, len(t0) - 1):
        np.testing.assert_allclose(load_window(shipped.loaded, None, t0[b]), aggw[b], atol=1e-3)


def test_cli_png_writes_a_png(tmp_path):
    out = tmp_path / "k.png"
    r = _run("-d", "kettle", "--start", "2024-06-20T04:00", "-m", "saliency", "--png", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and [p.name for p in tmp_path.iterdir()] == ["k.png"]


def test_cli_quality_json_explains_the_window_where_the_device_predicts_most(shipped):
    from nilmbuild.explain.batch import captured_windows

    r = _run("--quality", "-d", "kettle", "-m", "saliency", "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["rows"]
    assert [(row["device"], row["method"]) for row in rows] == [("kettle", "saliency")]
    row = rows[0]
    # the picked window: largest hard-gate kettle energy above its value at the window-minimum baseline
    aggw, t0 = captured_windows(shipped.loaded)
    gain = [
        shipped.run_window(a, t)["kettle"].sum() - shipped.run_window(np.full_like(a, a.min()), t)["kettle"].sum()
        for a, t in zip(aggw, t0)
    ]
    assert row["windows"] == [str(t0[int(np.argmax(gain))])]
    c = row["curves"]
    assert c["deletion"][0] == pytest.approx(1.0) and c["insertion"][-1] == pytest.approx(1.0)
    assert c["deletion"][-1] == pytest.approx(0.0, abs=1e-6) and c["insertion"][0] == pytest.approx(0.0, abs=1e-6)
    assert 0 < row["effective_steps"] <= 480 and -1 <= row["randomised_spearman"] <= 1
    assert row["max_sensitivity"] > 0


@pytest.mark.parametrize("name", ["condinilm_small", "nilmformer_small"])
def test_upstream_checkpoints_are_explained_on_their_evaluation_output(name, tmp_path):
    from test_upstream_models import _build

    from nilmbuild.explain import explain_window
    from nilmbuild.model.checkpoint import save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build(name)
    save_checkpoint(tmp_path / "up.pt", model, scalers=scalers_from_nilmscaler(fields), provenance={"source": "t"})
    m = nilmbuild.load_model(tmp_path / "up.pt")
    rng = np.random.default_rng(5)
    agg = (300 + 1500 * (rng.random(m.window) > 0.9)).astype(np.float32)
    device = m.devices[0]
    want = m.run_window(agg, "2021-03-04T10:00")[device]
    got = WattsToDevice(m.loaded, "2021-03-04T10:00", device)(torch.from_numpy(agg)[None])[0].detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-4)
    e = explain_window(m.loaded, agg, "2021-03-04T10:00", device, method="occlusion", settings=Settings(4, 4, 2))
    assert e.attribution.shape == (m.window,) and np.isfinite(e.attribution).all()


def test_attention_rows_are_masked_softmax_rows_and_correlate_with_themselves(shipped, window):
    from nilmbuild.explain.attention import attention_rows, attention_vs_attribution

    agg, start = window
    rows = attention_rows(shipped.loaded, agg, start, 101)
    cfg = shipped.loaded.cfg
    assert rows.shape == (cfg.n_encoder_layers, cfg.n_head, cfg.window)
    np.testing.assert_allclose(rows.sum(axis=-1), 1.0, atol=1e-5)
    assert cfg.mask_diagonal and (rows[:, :, 101] == 0).all()  # the shipped model masks the diagonal
    r = attention_vs_attribution(rows, rows[1, 2])
    assert r["heads"][1][2] == pytest.approx(1.0) and len(r["layers"]) == cfg.n_encoder_layers
