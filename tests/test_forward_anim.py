"""The Forward page's animation data (nilmbuild/site/views/forward_anim.py): particle sampling maths vs a
hand-written loop, and the shipped tables vs the captured tensors read back through the Python reader."""

from __future__ import annotations

import msgpack
import numpy as np
import pytest

from nilmbuild.capture.format import decode
from nilmbuild.model.names import attn, encoder
from nilmbuild.site.views.forward_anim import anim_blob, particle_targets, query_steps


def _loop_targets(row, n):
    """Particle j -> the first key whose running sum reaches (j + 0.5) / n of the total, one key at a time."""
    total, out = float(np.sum(row, dtype=np.float64)), []
    for j in range(n):
        u, acc = (j + 0.5) / n * total, 0.0
        for k, w in enumerate(row):
            acc += float(w)
            if acc >= u:
                out.append(k)
                break
    return out


def test_particle_targets_hand_computed():
    row = np.array([0.0, 0.5, 0.0, 0.25, 0.25])  # cumulative 0, .5, .5, .75, 1
    # quantiles 1/8, 3/8, 5/8, 7/8 -> keys 1, 1, 3, 4; the zero-weight keys 0 and 2 are never chosen
    assert particle_targets(row, 4).tolist() == [1, 1, 3, 4]
    assert particle_targets(np.eye(3)[None], 1).tolist() == [[[0], [1], [2]]]


def test_particle_targets_match_loop_on_random_rows():
    rng = np.random.default_rng(3)
    rows = rng.dirichlet(np.full(40, 0.3), size=(2, 3)).astype(np.float32)
    rows[..., 7] = 0.0  # a masked diagonal
    got = particle_targets(rows, 9)
    for idx in np.ndindex(rows.shape[:-1]):
        assert got[idx].tolist() == _loop_targets(rows[idx], 9)
        assert all(rows[idx][k] > 0 for k in got[idx])


def test_query_steps_centres():
    assert query_steps(480, 16) == [15 + 30 * i for i in range(16)]
    assert query_steps(96, 16) == [3 + 6 * i for i in range(16)]
    assert query_steps(5, 16) == [0, 1, 2, 3, 4]


@pytest.fixture(scope="module")
def anim(site_context):
    return msgpack.unpackb(anim_blob(site_context), raw=False)


def test_particles_are_the_captured_rows_quantiles(site_context, anim):
    a = anim["attention"]
    B, n_layers, H, Q, P = a["shape"]
    t = np.frombuffer(a["targets"], "<u2").reshape(a["shape"])
    am = np.frombuffer(a["argmax"], "<u2").reshape(a["shape"][:4])
    wm = np.frombuffer(a["argmax_weight"], "<f2").reshape(a["shape"][:4])
    rng = np.random.default_rng(0)
    for _ in range(3):
        b, l, h = int(rng.integers(B)), int(rng.integers(n_layers)), int(rng.integers(H))
        name = attn(l, "weights")
        w = decode(site_context.blob([name], [b])).get(name)[0, h]  # (L, L)
        for qi, q in enumerate(a["queries"]):
            assert t[b, l, h, qi].tolist() == _loop_targets(w[q], P)
            assert am[b, l, h, qi] == int(np.argmax(w[q])) and am[b, l, h, qi] != q  # the diagonal is masked
            assert abs(float(wm[b, l, h, qi]) - float(w[q].max())) <= 1e-3 * float(w[q].max())


def test_ffn_means_and_film_identity(site_context, anim):
    """Unit means over time of ln2 / GELU / FFN output; FiLM's output mean is (1 + γ) · out_mean + β."""
    f = anim["ffn"]
    l = int(site_context.loaded.cfg.n_encoder_layers) - 1
    names = [encoder(l, p) for p in ("ln2", "ffn.gelu", "ffn.out", "film")]
    r = decode(site_context.blob(names + ["film_enc.gamma_mean", "film_enc.beta_mean"], [1]))
    for key, name in zip(("in", "hidden", "out"), names, strict=False):
        got = np.frombuffer(f[key]["data"], "<f2").reshape(f[key]["shape"])[1, l].astype(np.float64)
        want = r.get(name)[0].astype(np.float64).mean(axis=0)
        assert f[key]["source"][l] == name
        np.testing.assert_allclose(got, want, atol=2e-3 * max(1.0, np.abs(want).max()))
    out = np.frombuffer(f["out"]["data"], "<f2").reshape(f["out"]["shape"])[1, l].astype(np.float64)
    g, bt = r.get("film_enc.gamma_mean")[0, l], r.get("film_enc.beta_mean")[0, l]
    film_mean = r.get(names[3])[0].astype(np.float64).mean(axis=0)
    np.testing.assert_allclose((1 + g) * out + bt, film_mean, atol=5e-3 * max(1.0, np.abs(film_mean).max()))


def test_page_blobs_hold_only_listed_records(site_context):
    """Everything the Forward page ships comes from records() (the view's one list of what it draws)."""
    from nilmbuild.site.views import forward

    spec = forward.build(site_context)
    listed = set(forward.records(site_context.loaded.cfg))
    drawn = {r for st in spec.data["stages"] for r in st["records"]}
    assert drawn <= listed and drawn <= set(decode(spec.blobs["capture"]).names()) | set(
        msgpack.unpackb(spec.blobs["binned"], raw=False)["summaries"]
    )
    anim = msgpack.unpackb(spec.blobs["anim"], raw=False)
    used = set(anim["attention"]["source"]) | {n for e in anim["ffn"].values() for n in e["source"]}
    assert used <= listed and {"film_enc.gamma_mean", "film_enc.beta_mean"} <= listed
    assert spec.data["anim"]["film"] == {"gamma": "film_enc.gamma_mean", "beta": "film_enc.beta_mean"}
