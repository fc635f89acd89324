"""`nilmbuild landscape` on a tiny model trained for two epochs in a temp dir (Li et al. 2018 slice)."""

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.pipeline import load_data_for
from nilmbuild.train.landscape import filter_normalised, project, val_batch
from nilmbuild.train.trainer import TrainConfig, train, validate

TINY = {"d_model": 16, "n_head": 2, "head_dim": 8, "n_encoder_layers": 1, "window": 96, "film_hidden_dim": 8}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("landscape") / "m.pt"
    train(
        TrainConfig(
            days=2,
            epochs=2,
            batch_size=8,
            lr=1e-2,
            model=TINY,
            out=str(out),
            progress=False,
            threads=2,
            warmup_epochs=1,
            prep={"stride": 96},
        ),
        log=lambda *a: None,
    )
    res = CliRunner().invoke(
        main, ["landscape", "-c", str(out), "--grid", "5", "--span", "0.5", "--seed", "3", "--batch", "6"]
    )
    assert res.exit_code == 0, res.output
    return out, res.output


def test_centre_is_the_checkpoints_validation_loss_on_the_same_batch(trained):
    out, _ = trained
    loaded = load_checkpoint(out)
    ls = loaded.extra["landscape"]
    assert ls["grid"] == 5 and ls["seed"] == 3 and ls["batch"]["windows"] >= 2 and ls["alpha"][2] == 0.0
    n = ls["batch"]["windows"]
    b = val_batch(loaded, load_data_for(loaded), n, 3)
    ref = validate(loaded.model, b.data(), b.weights, load_data_for(loaded), b.pos_weight, batch_size=n)["loss"]
    assert ls["loss"][2][2] == pytest.approx(ref, rel=1e-6)
    assert ls["centre_loss"] == ls["loss"][2][2]
    flat = np.array(ls["loss"])
    assert ls["min"]["loss"] == flat.min() and flat.max() > flat.min()  # the plane is not flat


def test_off_centre_point_is_the_loss_of_the_moved_weights(trained):
    out, _ = trained
    loaded = load_checkpoint(out)
    ls = loaded.extra["landscape"]
    base = {k: p.detach().clone() for k, p in loaded.model.named_parameters()}
    gen = torch.Generator().manual_seed(3)
    d1, d2 = filter_normalised(base, gen), filter_normalised(base, gen)
    a, b = ls["alpha"][4], ls["beta"][0]  # loss[0][4]: beta = -span, alpha = +span
    with torch.no_grad():
        for k, p in loaded.model.named_parameters():
            p.copy_(base[k] + a * d1[k] + b * d2[k])
    prepared = load_data_for(loaded)
    vb = val_batch(loaded, prepared, ls["batch"]["windows"], 3)
    ref = validate(loaded.model, vb.data(), vb.weights, prepared, vb.pos_weight, batch_size=ls["batch"]["windows"])[
        "loss"
    ]
    assert ls["loss"][0][4] == pytest.approx(ref, rel=1e-5)


def test_trajectory_points_are_projections_with_their_own_loss(trained):
    out, _ = trained
    ls = load_checkpoint(out).extra["landscape"]
    pts = ls["trajectory"]
    assert [p["epoch"] for p in pts] == [1, 2] and ls["trajectory_file"] == "m.trajectory.pt"
    assert all(0.0 <= p["in_plane"] <= 1.0 and p["distance"] >= 0 for p in pts)
    # the last epoch is the checkpoint itself (float16-rounded): almost no distance, loss near the centre
    assert pts[1]["distance"] < 0.05 * pts[0]["distance"] + 1e-2
    assert pts[1]["loss"] == pytest.approx(ls["centre_loss"], rel=1e-2)


def test_filter_normalisation_and_projection_by_hand():
    w = {"m": torch.tensor([[3.0, 4.0], [0.0, 2.0]]), "b": torch.ones(2)}
    d = filter_normalised(w, torch.Generator().manual_seed(0))
    assert torch.allclose(d["m"].norm(dim=1), torch.tensor([5.0, 2.0]), atol=1e-5) and torch.equal(
        d["b"], torch.zeros(2)
    )
    d1 = {"m": torch.tensor([[1.0, 0.0], [0.0, 0.0]]), "b": torch.zeros(2)}
    d2 = {"m": torch.tensor([[0.0, 1.0], [0.0, 0.0]]), "b": torch.zeros(2)}
    state = {"m": w["m"] + torch.tensor([[2.0, -1.0], [0.0, 0.0]]), "b": w["b"] + torch.tensor([0.0, 1.0])}
    p = project(state, w, d1, d2)
    assert (p["alpha"], p["beta"]) == pytest.approx((2.0, -1.0)) and p["distance"] == pytest.approx(6**0.5)
    assert p["in_plane"] == pytest.approx(5 / 6)


def test_epochs_upto_and_bad_input_are_one_line_errors(trained, tmp_path):
    out, _ = trained
    r = CliRunner().invoke(main, ["landscape", "-c", str(out), "--grid", "4"])
    assert r.exit_code == 2 and "odd" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["landscape", "-c", str(out), "--trajectory", str(tmp_path / "nope.pt")])
    assert r.exit_code == 2 and "no such file" in r.output
    r = CliRunner().invoke(main, ["landscape", "-c", str(out), "--grid", "3", "--epochs-upto", "1", "--batch", "2"])
    assert r.exit_code == 0, r.output
    assert [p["epoch"] for p in load_checkpoint(out).extra["landscape"]["trajectory"]] == [1]
    assert load_checkpoint(out).extra["landscape"]["epochs_upto"] == 1
