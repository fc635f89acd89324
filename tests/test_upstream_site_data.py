"""The example windows a site prepares for an upstream checkpoint carry that checkpoint's own time features (1 + 8
channels for CondiNILM's minute, hour, dow, month), exactly as `pipeline.model_input` builds them for
`load_model(...).run_window` (which the upstream fixtures hold to the upstream's own outputs); and the stitched
series of seq2subseq runs the upstream model itself (its output, in watts)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parent


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    sys.path.insert(0, str(ROOT))
    from test_upstream_models import _build

    from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
    from nilmbuild.model.upstream import scalers_from_nilmscaler

    model, _, fields = _build("condinilm_small")
    cfg = model.cfg
    prov = {"prep": {"resample_s": cfg.step_s, "window": cfg.window, "devices": list(cfg.devices)}, "days": 21}
    path = tmp_path_factory.mktemp("up") / "c.pt"
    save_checkpoint(path, model, scalers=scalers_from_nilmscaler(fields), provenance=prov)
    return load_checkpoint(path)


@pytest.fixture(scope="module")
def prepared(loaded):
    from nilmbuild.pipeline import load_household_for, prepare_for

    return prepare_for(loaded, load_household_for(loaded, None, None))


def test_windows_have_the_checkpoints_time_features(loaded, prepared):
    from nilmbuild.pipeline import model_input

    sp = prepared.splits["test"]
    assert sp.x.shape[1] == 1 + 8  # CondiNILM: minute, hour, dow, month, each sin + cos
    for i in (0, sp.x.shape[0] // 2, sp.x.shape[0] - 1):
        stamps = sp.t0[i].astype("datetime64[s]") + np.arange(loaded.cfg.window) * np.timedelta64(60, "s")
        agg = sp.x[i, 0]  # scaled; model_input rescales watts: compare the time channels
        ref = model_input(loaded, stamps, np.zeros_like(agg))
        np.testing.assert_array_equal(sp.x[i, 1:], ref[1:])
    t = sp.t0[0].astype("datetime64[m]").astype(np.int64)
    minute, hour = t % 60, (t // 60) % 24  # hand-computed: the first step's minute and hour channels
    np.testing.assert_allclose(sp.x[0, 1:5, 0], [np.sin(2 * np.pi * minute / 60), np.cos(2 * np.pi * minute / 60),
                                               np.sin(2 * np.pi * hour / 24), np.cos(2 * np.pi * hour / 24)], atol=1e-6)  # fmt: skip


def test_seq2subseq_runs_the_upstream_model(loaded, prepared):
    import torch

    from nilmbuild.infer.seq2subseq import seq2subseq
    from nilmbuild.pipeline import model_input

    sp = prepared.splits["test"]
    W, T = loaded.cfg.window, loaded.cfg.window * 3
    x = model_input(loaded, sp.timestamps[:T], sp.aggregate_w[:T])
    res = seq2subseq(loaded.model, x, timestamps=sp.timestamps[:T], step_s=60)
    c0, C = W // 2, W // 2  # the window starting at step W / 4 contributes steps W / 2 .. W
    start = c0 - W // 4
    with torch.no_grad():
        out = loaded.model.eval()(torch.from_numpy(x[None, :, start : start + W]))
    np.testing.assert_allclose(res.power[:, c0 : c0 + C], out.power[0, :, W // 4 : W // 4 + C].numpy(), atol=1e-5)
    np.testing.assert_allclose(res.gate[:, c0 : c0 + C], out.gate[0, :, W // 4 : W // 4 + C].numpy(), atol=1e-6)


def test_notebook_helper_builds_an_upstream_page_and_refuses_one_not_built(loaded, monkeypatch):
    from nilmbuild.errors import UserError
    from nilmbuild.notebook import context, page_html
    from nilmbuild.site.views import attention

    ctx = context(str(loaded.path))
    text = page_html("gate", ctx=ctx)
    assert "CondiNILM&#39;s soft gate" in text or "CondiNILM's soft gate" in text
    assert "stats token" in page_html("attention", ctx=ctx)  # every page is built for CondiNILM now
    monkeypatch.setattr(attention, "ARCHITECTURES", ("spec",))  # a page whose view does not list the architecture
    with pytest.raises(UserError, match="not built for a condinilm model"):
        page_html("attention", ctx=ctx)
