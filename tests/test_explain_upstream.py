"""Explanations of imported upstream checkpoints (CondiNILM, the original NILMFormer: the reference fixtures of
tests/fixtures/upstream, saved as `nilmbuild import` saves them): the Why page's served explanations
(explain/served.py), the model-randomisation twin, attention over L + 1 tokens with the stats token apart, and
`nilmbuild explain -c IMPORTED.pt`.

An upstream model has one output, the one its evaluation computes (explain/wrapper.py): CondiNILM's external soft
gate, or the original's de-normalised output (no gate). So there is no hard / soft pair: the tests check that every
path explains that output (equal to run_window), that gradients follow it (IG's completeness), and that "soft" is
refused instead of silently giving the same numbers under another name.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.errors import UserError
from nilmbuild.explain import Interval, Settings, explain_window, served
from nilmbuild.explain.api import _step_s
from nilmbuild.explain.attention import attention_rows, attention_vs_attribution, split_tokens, stats_index
from nilmbuild.explain.quality import randomised_model, spearman
from nilmbuild.explain.wrapper import outputs_of

FAST = served.SiteSettings(methods=Settings(ig_steps=8, occlusion_window=8, occlusion_stride=4, batch=32))


@pytest.fixture(scope="module", params=["condinilm_small", "nilmformer_small"])
def imported(request, tmp_path_factory):
    from test_upstream_models import _build

    from nilmbuild.model.checkpoint import save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build(request.param)
    cfg = model.cfg
    prov = {"prep": {"resample_s": cfg.step_s, "window": cfg.window, "devices": list(cfg.devices)}}
    path = tmp_path_factory.mktemp("imported") / f"{request.param}.pt"
    save_checkpoint(path, model, scalers=scalers_from_nilmscaler(fields), provenance=prov)
    return path, nilmbuild.load_model(path)


def predicted(m, agg, start) -> dict:
    """{device: whether the model predicts it in the window}: its energy at the input is positive and at least twice
    its energy at the window-minimum baseline (served.active_devices' rule, here from run_window)."""
    f, g = m.run_window(agg, start), m.run_window(np.full_like(agg, agg.min()), start)
    return {d: bool(f[d].sum() > 0 and f[d].sum() - g[d].sum() >= 0.5 * f[d].sum()) for d in m.devices}


@pytest.fixture(scope="module")
def window(imported):
    """(watts, start) of the first reference window (the upstream's own inputs, tests/fixtures/upstream) where the
    model predicts a device."""
    from test_upstream_models import _ref

    path, m = imported
    ref = _ref(path.stem)
    for agg, start in zip(ref["watts"].astype(np.float32), ref["starts"].astype("datetime64[s]")):
        if any(predicted(m, agg, start).values()):
            return agg, start
    raise AssertionError("no reference window where the model predicts a device")


@pytest.fixture(scope="module")
def res(imported, window):
    _, m = imported
    return served.explain_served(m.loaded, *window, FAST)


def test_one_output_every_path_runs_it(imported, window):
    (_, m), (window, start) = imported, window
    assert outputs_of(m.loaded) == ("hard",) and _step_s(m.loaded) == m.loaded.cfg.step_s == m.step_s
    want = m.run_window(window, start)  # what the upstream's own evaluation computes (test_upstream_models)
    got = served.AllDevices(m.loaded, start, "hard")(torch.from_numpy(window)[None])[0].numpy()
    for d, name in enumerate(m.devices):
        np.testing.assert_allclose(got[d], want[name], rtol=1e-6, atol=1e-4)
    with pytest.raises(UserError, match="has one output"):
        explain_window(m.loaded, window, start, m.devices[0], method="occlusion", output="soft")


def test_served_explanations_are_of_that_output(imported, window, res):
    (_, m), (window, start) = imported, window
    assert res["active"] == list(predicted(m, window, start).values())
    D = len(m.devices)
    want = m.run_window(window, start)
    peaks = [int(np.argmax(want[d])) for d in m.devices]  # the point targets: each device's peak step
    assert [t["lo"] for t in res["targets"][D:]] == peaks
    # every device at once (the batch of the occlusion passes): float32 rounding of a batch, ~1e-5 relative
    np.testing.assert_allclose(res["passes"][0], np.stack([want[d] for d in m.devices]), rtol=1e-4, atol=1e-3)
    for d, name in enumerate(m.devices):  # the stored point-level occlusion is Captum's on the per-device target
        e = explain_window(m.loaded, window, start, name, Interval(peaks[d], peaks[d] + 1, True), "occlusion",
                           settings=FAST.methods)  # fmt: skip
        scale = np.abs(e.attribution).max()
        np.testing.assert_allclose(res["attributions"]["occlusion"][D + d], e.attribution, atol=1e-4 * scale + 1e-6)
    rows = [r for r in res["quality"] if r["active"]]
    assert rows and all("completeness_soft" not in r for r in rows)
    for r in (r for r in rows if r["method"] != "occlusion"):  # the gap is measured on run_window's output
        d = m.devices.index(r["device"])
        gain = _gain(m, window, start, r["device"])  # attributions stored in float32: their sum to ~1e-5 of it
        gap = float(res["attributions"][r["method"]][d].astype(np.float64).sum()) - gain
        assert r["completeness_hard"] == pytest.approx(gap, abs=1e-4 * abs(gain) + 1e-4), (r, gap)


def test_gradients_are_those_of_the_evaluation_output(imported, window, res):
    """saliency = gradient x (input - baseline): the gradient by central differences of run_window's energy (h =
    0.5 W per step) against the stored one, for each predicted device (the output's kinks cost ~0.5 % here)."""
    (_, m), (window, start) = imported, window
    h, L, hours = 0.5, m.window, m.step_s / 3600.0
    bumped = [window + s * h * np.eye(L, dtype=np.float64)[i] for i in range(L) for s in (1, -1)]
    for d, name in enumerate(m.devices):
        if not res["active"][d]:
            continue
        f = np.array([m.run_window(x.astype(np.float32), start)[name].sum() * hours for x in bumped]).reshape(L, 2)
        want = (f[:, 0] - f[:, 1]) / (2 * h) * (window - window.min())
        got = res["attributions"]["saliency"][d]
        np.testing.assert_allclose(got, want, atol=0.02 * np.abs(want).max())


def _gain(m, agg, start, device) -> float:
    """f(x) - f(baseline) of the device's energy over the window, Wh, from run_window (the baseline: the minimum)."""
    hours = m.step_s / 3600.0
    return float(
        (m.run_window(agg, start)[device].sum() - m.run_window(np.full_like(agg, agg.min()), start)[device].sum())
        * hours
    )


def test_randomised_twin_redraws_every_weight_and_keeps_the_stored_gate(imported, window):
    (_, m), (window, start) = imported, window
    model = m.loaded.model
    twin = randomised_model(model)
    same = [k for (k, a), (_, b) in zip(model.named_parameters(), twin.named_parameters()) if torch.equal(a, b)]
    assert same == []
    for k, buf in model.named_buffers():  # CondiNILM's criterion.gate_*: its evaluation's, not the network's
        if k.startswith("criterion."):
            assert torch.equal(buf, dict(twin.named_buffers())[k]), k
    assert any(k.startswith("criterion.") for k, _ in model.named_buffers()) == (m.architecture == "condinilm")
    a = served.AllDevices(m.loaded, start, "hard")(torch.from_numpy(window)[None])
    b = served.AllDevices(m.loaded, start, "hard", model=twin)(torch.from_numpy(window)[None])
    assert not torch.allclose(a, b)


def test_attention_has_the_stats_token_last_and_it_is_reported_apart(imported, window):
    (_, m), (window, start) = imported, window
    cfg, L = m.loaded.cfg, m.window
    assert stats_index(m.loaded) == L
    rows = attention_rows(m.loaded, window, start, 5)
    assert rows.shape == (cfg.n_encoder_layers, cfg.n_head, L + 1)
    np.testing.assert_allclose(rows.sum(axis=-1), 1.0, atol=1e-5)
    attr = np.arange(L, dtype=np.float64)
    got = attention_vs_attribution(rows, attr, stats_index(m.loaded))
    np.testing.assert_allclose(got["stats_share"]["layers"], rows[:, :, L].mean(axis=1))
    assert got["layers"][0] == pytest.approx(spearman(rows[0, :, :L].mean(axis=0), attr))
    with pytest.raises(ValueError, match="time steps"):
        attention_vs_attribution(rows, attr)  # L + 1 keys against L steps: never compared silently


def test_attention_vs_attribution_by_hand():
    """4 steps + the stats token, two heads that give it 0.2 and 0.8: over the time steps as computed (not
    renormalised) the head mean is [0.25, 0.075, 0.075, 0.1], the same ranks as the attribution [4, 1, 1, 2]."""
    rows = np.array([[[0.5, 0.1, 0.1, 0.1, 0.2], [0.0, 0.05, 0.05, 0.1, 0.8]]])
    got = attention_vs_attribution(rows, [4.0, 1.0, 1.0, 2.0], stats=4)
    assert got["layers"] == [pytest.approx(1.0)]
    assert got["stats_share"] == {"layers": [pytest.approx(0.5)], "heads": [[0.2, 0.8]]}
    steps, on = split_tokens(rows, None)
    assert on is None and steps is rows
    spec = attention_vs_attribution(rows[..., :4], [4.0, 1.0, 1.0, 2.0])  # the spec's rows: nothing to set apart
    assert "stats_share" not in spec


def test_explain_cli_on_an_imported_checkpoint(imported):
    from nilmbuild.explain import captured_windows

    path, m = imported
    aggw, t0 = captured_windows(m.loaded)
    device, start = m.devices[-1], t0[0]
    step = start + np.timedelta64(7 * m.step_s, "s")
    args = ["explain", "-c", str(path), "-d", device, "--start", str(start), "--step", str(step), "-m", "occlusion"]
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    agg = np.asarray(out["aggregate_w"], np.float32)  # the site's first window (captured_windows: via scaled units)
    np.testing.assert_allclose(agg, aggw[0], rtol=1e-6)
    assert out["architecture"] == m.architecture and out["target"]["steps"] == [7, 8]
    e = explain_window(m.loaded, agg, start, device, Interval(7, 8, True), "occlusion")
    np.testing.assert_allclose(out["attribution"], e.attribution, rtol=1e-6, atol=1e-9)
    rows = attention_rows(m.loaded, agg, start, 7)
    np.testing.assert_allclose(out["attention_spearman"]["stats_share"]["layers"], rows[:, :, m.window].mean(axis=1))
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0 and "query's weight on the stats token" in text.output
    soft = CliRunner().invoke(main, [*args, "--output", "soft"])
    assert soft.exit_code != 0 and "has one output" in soft.output and "Traceback" not in soft.output
    q = CliRunner().invoke(main, ["explain", "-c", str(path), "--quality", "-d", device, "-m", "saliency", "--json"])
    assert q.exit_code == 0, q.output
    (row,) = json.loads(q.stdout)["rows"]  # measured on the site's windows: one output, one gap
    assert np.isfinite(row["completeness_hard"]) and row["completeness_soft"] is None


def test_quality_text_has_one_gap_for_one_output():
    from nilmbuild.explain.batch import COLUMNS
    from nilmbuild.explain.report import quality_text

    row = {"device": "kettle", "method": "ig", **{k: 0.5 for k, _ in COLUMNS}, "completeness_soft": float("nan")}
    one = quality_text([row], ("hard",))
    assert "gap_soft" not in one and "gap_hard: sum(attr) - (f(x) - f(baseline)), the model's one output, Wh" in one
    assert one.splitlines()[1].split()[-2:] == ["0.5", "0.5"]  # gap_hard, then seconds: no column for soft
    spec = quality_text([row])  # the spec's model: both gaps, as before
    assert "gap_soft" in spec and spec.splitlines()[1].split()[-3:] == ["0.5", "-", "0.5"]
