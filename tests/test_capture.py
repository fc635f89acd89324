"""Capture on the full-size model: attention rebuild bound vs PyTorch, stage coverage, 3 MB per sample, CLI."""

import functools
import json

import numpy as np
import torch
from click.testing import CliRunner

from nilmbuild.capture import capture_batch, decode, encode, size_report
from nilmbuild.capture.attention_plan import ATTN_WEIGHTS_TOL
from nilmbuild.capture.head_ablation import focus_samples
from nilmbuild.model import NILMFormer, NILMFormerConfig, Trace
from nilmbuild.model.checkpoint import default_checkpoint_path, load_checkpoint, save_checkpoint

STAGES = [str(i) for i in range(13)]


def _model():
    """The shipped checkpoint (package data: a missing one is a packaging bug, so no fallback)."""
    assert default_checkpoint_path().is_file(), f"shipped checkpoint missing: {default_checkpoint_path()}"
    return load_checkpoint().model


def _batch(B, model):
    """A real batch from the built-in simulator's test split. No fallback: a broken data pipeline fails here."""
    from nilmbuild.data import PrepConfig, example_batch, prepare, simulate_household

    prep = prepare(simulate_household(days=20, seed=0), PrepConfig(window=model.cfg.window))
    x, y, t0 = example_batch(prep, batch_size=B, seed=0)
    assert x.shape == (B, model.cfg.n_channels, model.cfg.window) and len(t0) == B
    return torch.from_numpy(np.asarray(x, np.float32)), np.asarray(y, np.float32), t0


@functools.cache
def full_capture(B=1):
    m = _model()
    x, y, t0 = _batch(B, m)
    return m, x, capture_batch(m, x, y=y, t0=t0)


def test_attention_rebuild_within_2e3_of_pytorch():
    m, x, cap = full_capture()
    trace = Trace()
    with torch.no_grad():
        m(x, trace=trace, gate_mode="hard")
    r = decode(encode(cap, names=["encoder.*.attn.weights", "encoder.*.attn.masked_scores"]))
    for l in range(m.cfg.n_encoder_layers):
        w = r.get(f"encoder.{l}.attn.weights")
        true = trace[f"encoder.{l}.attn.weights"].numpy()
        err = np.abs(w - true).max()
        assert err <= ATTN_WEIGHTS_TOL, (l, err)
        assert np.allclose(w.sum(-1), 1.0, atol=1e-5)  # self-consistent rows
        d = np.arange(w.shape[-1])
        assert (w[..., d, d] == 0).all()  # diagonal exactly 0
        assert (r.get(f"encoder.{l}.attn.masked_scores")[..., d, d] == -1e4).all()


def test_every_stage_is_captured_and_inspect_lists_it(tmp_path):
    _, _, cap = full_capture()
    stages = {r.stage.rstrip("abcdefgh") for r in cap.records.values()}
    assert set(STAGES) <= stages
    f = tmp_path / "c.msgpack"
    f.write_bytes(encode(cap, samples=[0]))
    from nilmbuild.cli import main

    res = CliRunner().invoke(main, ["inspect", str(f), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert {r["stage"].rstrip("abcdefgh") for r in out["records"]} >= set(STAGES)
    assert {r["name"] for r in out["records"]} == set(cap.records)
    text = CliRunner().invoke(main, ["inspect", str(f)]).output
    assert "encoder.0.attn.weights" in text and "total:" in text


def test_one_sample_fits_in_3_mb():
    _, _, cap = full_capture()
    rep = size_report(cap, samples=[0])
    assert rep["blob_bytes"] <= 3_000_000, rep["groups"]
    assert sum(rep["groups"].values()) == rep["data_bytes"]
    # attention matrices are never stored, only rebuilt
    for n, r in rep["records"].items():
        if n.endswith(("attn.weights", "attn.scores", "attn.masked_scores")):
            assert r["bytes"] == 0 and r["encoding"] == "derived", n


def test_ablations_are_real_runs():
    m, x, cap = full_capture(B=3)
    r = decode(encode(cap, names=["ablation.*", "output.power"]))
    # the unmasked run: on the attention page's samples only, each in its chunk of the batch
    assert r.rows("ablation.no_mask.output.power") == focus_samples(x)
    assert len(focus_samples(x)) == 2
    assert r.record("ablation.no_mask.encoder.0.attn.q")["op"] == "alias"  # layer 0's q: the same bits
    with torch.no_grad():
        for key, kw in (
            ("no_film", {"use_film": False}),
            ("no_mask", {"mask_diagonal": False}),
            ("soft_gate", {"gate_mode": "soft"}),
        ):
            kw.setdefault("gate_mode", "hard")
            true = m(x, **kw).power.numpy()
            name = f"ablation.{key}.output.power"
            got = r.get(name)
            assert np.abs(got - true[r.rows(name)]).max() <= 1e-3 * max(1.0, np.abs(true).max()), key
    assert "ablation.no_mask.encoder.2.attn.weights" in r.names()


def test_capture_cli_end_to_end(tmp_path):
    torch.manual_seed(0)
    ck = tmp_path / "m.pt"
    save_checkpoint(ck, NILMFormer(NILMFormerConfig()).eval())
    from nilmbuild.cli import main

    out = tmp_path / "cap.msgpack"
    res = CliRunner().invoke(
        main,
        [
            "capture",
            "--checkpoint",
            str(ck),
            "--batch",
            "2",
            "--no-ablations",
            "--names",
            "output.*",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    r = decode(out.read_bytes())
    assert r.meta["samples"] == [0, 1] and r.meta["data"]["source"] == "synthetic"
    assert r.get("output.power").shape == (2, 5, 480)
    assert CliRunner().invoke(main, ["capture", "--help"]).output.count("Examples") == 1
