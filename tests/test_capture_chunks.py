"""The capture traces the batch in chunks and plans attention chunk by chunk: the result must not depend on the
chunk size, and a layer whose f16 q, k miss the weights bound is planned again with f32 q, k."""

import numpy as np
import pytest
import torch

from nilmbuild import threads as threads_mod
from nilmbuild.capture import attention_plan, capture_batch, decode, encode, traced_run
from nilmbuild.model import Trace
from tests.test_format import W, tiny_model


def _capture(monkeypatch, chunk: int, batch: int = 5):
    monkeypatch.setattr(traced_run, "CHUNK", chunk)
    torch.manual_seed(2)
    return capture_batch(tiny_model(), torch.rand(batch, 7, W))


def test_capture_barely_depends_on_the_chunk_size(monkeypatch):
    """Chunks of 2, 2, 1 samples vs one run: the same records, derivations and encodings, and every value a
    reader gets equal up to float32 rounding in the model (PyTorch's kernels depend on the batch size) carried
    through float16 storage: within 2 float16 steps of the record's largest value."""
    whole, chunked = _capture(monkeypatch, chunk=64), _capture(monkeypatch, chunk=2)
    assert list(chunked.records) == list(whole.records)
    a, b = decode(encode(whole)), decode(encode(chunked))
    for name, r in whole.records.items():
        assert chunked.records[name].encoding == r.encoding and chunked.records[name].derive == r.derive, name
        if "attn" in name and name.endswith((".scores", ".masked_scores", ".weights")):
            continue  # rebuilt from q, k, lse, compared through them
        x, y = a.get(name), b.get(name)
        assert np.allclose(x, y, rtol=0, atol=2 * 2.0**-10 * float(np.abs(x).max()) + 1e-6), name


def test_joined_trace_is_the_chunks_runs_side_by_side(monkeypatch):
    monkeypatch.setattr(traced_run, "CHUNK", 2)
    m, x = tiny_model(), torch.rand(5, 7, W)
    joined = traced_run.run_traced(m, x, attention=lambda layer, parts: None, gate_mode="hard")
    runs = []
    for i in range(0, 5, 2):
        runs.append(Trace())
        with torch.no_grad():
            m(x[i : i + 2], trace=runs[-1], gate_mode="hard")
    assert joined.names() == runs[0].names()
    assert traced_run.run_traced(m, x, gate_mode="hard").records.keys() == runs[0].records.keys()  # whole batch
    for name, r in joined.records.items():
        if name.endswith((".scores", ".masked_scores", ".weights")) and ".attn." in name:
            raise AssertionError(f"{name}: (B, H, L, L) joined")
        if r.axes[:1] == ("batch",):
            assert torch.equal(r.tensor, torch.cat([t.records[name].tensor for t in runs])), name
        else:
            assert torch.equal(r.tensor, runs[0].records[name].tensor), name


def test_attention_matrices_are_planned_not_joined(monkeypatch):
    monkeypatch.setattr(traced_run, "CHUNK", 2)
    seen = []
    joined = traced_run.run_traced(
        tiny_model(), torch.rand(5, 7, W), attention=lambda layer, parts: seen.append((layer, len(parts["q"].tensor)))
    )
    assert [n for _, n in seen if _ == 0] == [2, 2, 1]
    assert not any(n.endswith((".scores", ".masked_scores", ".weights")) for n in joined.records)


def test_a_layer_that_misses_with_f16_is_planned_with_f32(monkeypatch):
    cap = _capture(monkeypatch, chunk=2)
    errs = {n: r.err for n, r in cap.records.items() if n.startswith("encoder.") and n.endswith(".attn.weights")}
    worst = max(errs, key=errs.get)
    # a bound just under the worst f16 error: that layer (and only the layers above the bound) go f32
    monkeypatch.setattr(attention_plan, "ATTN_WEIGHTS_TOL", errs[worst] * 0.999)
    cap32 = _capture(monkeypatch, chunk=2)
    prefix = worst.rsplit(".", 1)[0]
    assert cap32.records[f"{prefix}.q"].encoding == "f32" and cap32.records[f"{prefix}.k"].encoding == "f32"
    assert cap32.records[worst].err <= errs[worst] * 0.999
    for n, e in errs.items():
        if e <= errs[worst] * 0.999:
            assert cap32.records[n.rsplit(".", 1)[0] + ".q"].encoding == "f16", n


def test_missing_even_with_f32_is_an_error(monkeypatch):
    monkeypatch.setattr(attention_plan, "ATTN_WEIGHTS_TOL", 0.0)
    with pytest.raises(RuntimeError, match="even with f32"):
        _capture(monkeypatch, chunk=2)


def test_lse_is_computed_per_chunk_for_every_sample(monkeypatch):
    cap = _capture(monkeypatch, chunk=2)
    lse = cap.records["encoder.0.attn.lse"]
    assert lse.tensor.shape[0] == 5 and np.isfinite(lse.tensor).all() and len(lse.moments) == 5


def _chunk_operands(n=5, H=2, L=9, E=3, seed=4):
    """Random f32 q, k and PyTorch-like true matrices (each part off by a different small error per sample)."""
    from nilmbuild.capture import format as fmt

    rng = np.random.default_rng(seed)
    q, k = (rng.standard_normal((n, H, L, E)).astype(np.float32) for _ in range(2))
    s = np.stack([fmt.attention_scores64(q[b], k[b], 0.5) for b in range(n)])
    noise = lambda: rng.normal(0, 1e-4, s.shape)  # noqa: E731
    true = {"scores": s + noise(), "masked_scores": s + noise(), "weights": np.exp(s - s.max(-1, keepdims=True))}
    return q, k, {p: t.astype(np.float32) for p, t in true.items()}


def test_rebuilding_head_by_head_is_the_whole_samples_arithmetic():
    """rebuild_sample works one head at a time: lse and errors are those of the whole (H, L, S) sample computed
    at once (the same bits), the moments are the whole sample's up to float64 rounding."""
    from nilmbuild.capture import format as fmt
    from nilmbuild.model.attention import MASK_VALUE

    q, k, true = _chunk_operands(n=1)
    one = {p: t[0] for p, t in true.items()}
    lse, errs, moments = attention_plan.rebuild_sample(q[0], k[0], 0.5, True, one)
    s = fmt.attention_scores64(q[0], k[0], 0.5)  # (H, L, S) at once
    diag = np.arange(s.shape[-1])
    want = {"scores": attention_plan.max_abs_diff(s.astype(np.float32), one["scores"])}
    s[:, diag, diag] = MASK_VALUE
    want["masked_scores"] = attention_plan.max_abs_diff(s.astype(np.float32), one["masked_scores"])
    want_lse = fmt.logsumexp_rows(s).astype(np.float32)
    w = np.exp(s - want_lse.astype(np.float64)[..., None])
    w[:, diag, diag] = 0.0
    want["weights"] = attention_plan.max_abs_diff(w.astype(np.float32), one["weights"])
    assert np.array_equal(lse, want_lse) and errs == want and min(errs.values()) > 0
    for p, t in one.items():
        n, mn, mx, mean, m2 = fmt.moments(t)
        assert moments[p][:3] == (n, mn, mx), p
        assert moments[p][3] == pytest.approx(mean, rel=1e-12, abs=1e-15) and moments[p][4] == pytest.approx(
            m2, rel=1e-12
        ), p


def test_a_reused_workspace_gives_the_same_bits():
    """One workspace reused from sample to sample (as LayerPlan.add does): lse, errors and moments equal a fresh
    workspace per sample, sample by sample."""
    q, k, true = _chunk_operands()
    ws = attention_plan.Workspace((q.shape[2], k.shape[2]))
    errors = set()
    for b in range(5):
        one = {p: t[b] for p, t in true.items()}
        reused, fresh = (attention_plan.rebuild_sample(q[b], k[b], 0.5, True, one, w) for w in (ws, None))
        assert np.array_equal(reused[0], fresh[0]) and reused[1] == fresh[1] and reused[2] == fresh[2], b
        errors.add(fresh[1]["scores"])
    assert len(errors) == 5  # the samples really differ


@pytest.mark.parametrize("threads", [2, 3])
def test_rebuilding_a_chunk_in_threads_gives_the_same_bits(monkeypatch, threads):
    """Samples shared out between threads, each with its own reused workspace: lse, errors and moments equal one
    thread's and a fresh workspace per sample (rebuild_sample alone), sample by sample, in sample order."""
    q, k, true = _chunk_operands()
    monkeypatch.setattr(attention_plan, "REBUILD_THREADS", 1)
    one = attention_plan.rebuild_chunk(q, k, 0.5, True, true)
    monkeypatch.setattr(attention_plan, "REBUILD_THREADS", threads)
    monkeypatch.setattr(threads_mod.os, "sched_getaffinity", lambda pid: set(range(threads)))
    many = attention_plan.rebuild_chunk(q, k, 0.5, True, true)
    alone = [attention_plan.rebuild_sample(q[b], k[b], 0.5, True, {p: t[b] for p, t in true.items()}) for b in range(5)]
    for b in range(5):
        for got in (many[b], alone[b]):
            assert np.array_equal(got[0], one[b][0]) and got[1] == one[b][1] and got[2] == one[b][2], b


def test_workspace_variants_of_the_format_maths_give_the_same_bits():
    """attention_scores64(out=), logsumexp_rows(work), moments(work) against their allocating forms."""
    from nilmbuild.capture import format as fmt

    q, k, true = _chunk_operands(n=1)
    s = fmt.attention_scores64(q[0], k[0], 0.5)
    out = np.full_like(s, np.nan)
    assert fmt.attention_scores64(q[0], k[0], 0.5, out=out) is out and np.array_equal(out, s)
    assert np.array_equal(fmt.logsumexp_rows(s, np.empty_like(s)), fmt.logsumexp_rows(s))
    work = np.full(s.size + 7, np.nan)  # larger than needed: moments uses the first a.size values
    assert fmt.moments(true["weights"][0], work) == fmt.moments(true["weights"][0])


def test_max_abs_diff_equals_the_float64_difference():
    """The float32 pass that picks the candidates gives exactly the float64 maximum |a - b|, over magnitudes from
    subnormal to huge (float32 overflow of the difference), ties, and NaN / inf (a miss unless both agree)."""
    from nilmbuild.capture.attention_plan import _max_abs_diff64, max_abs_diff

    rng = np.random.default_rng(0)
    for scale in (1e-42, 1e-6, 1.0, 3e4, 3e38):
        for _ in range(20):
            a = (rng.standard_normal(999) * scale).astype(np.float32)
            b = (a + rng.standard_normal(999).astype(np.float32) * np.float32(scale) * rng.random()).astype(np.float32)
            b[rng.integers(0, 999, 5)] = a[rng.integers(0, 999, 5)]
            work = np.empty_like(a)
            assert max_abs_diff(a, b, work) == _max_abs_diff64(a, b) == max_abs_diff(b, a)
    a = np.array([1.0, np.nan, np.inf, 2.0], dtype=np.float32)
    assert max_abs_diff(a, a.copy()) == 0.0
    assert max_abs_diff(a, np.array([1.0, 0.0, np.inf, 2.0], dtype=np.float32)) == np.inf
    assert max_abs_diff(np.full(7, 0.5, np.float32), np.full(7, 0.5, np.float32)) == 0.0
    tie = np.array([1.0, 1.0 + 2**-23, 3.0], dtype=np.float32)
    assert max_abs_diff(tie, np.zeros(3, np.float32)) == 3.0
