"""The Why page's explanations stored with the checkpoint (nilmbuild/explain/served_store.py, `nilmbuild explain
--store`): the shipped entry is what the code computes now for the window the site serves, a stale entry is
ignored, and the command stores an entry the site then reads (an imported checkpoint's too), or says in one line
what to pass."""

import copy
import dataclasses
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import nilmbuild
from nilmbuild.cli import main
from nilmbuild.explain import served, served_cache, served_store
from nilmbuild.model.checkpoint import load_checkpoint
from nilmbuild.provenance import default_checkpoint_path


@pytest.fixture(scope="module")
def shipped():
    return nilmbuild.load_model().loaded


@pytest.fixture(scope="module")
def entry(shipped):
    e = shipped.extra.get(served_store.KEY)
    assert e is not None, "the shipped checkpoint has no stored explanations: run `nilmbuild explain --store`"
    return e


def _window(entry):
    return entry["served"]["aggregate_w"].numpy(), np.datetime64(entry["start"], "s")


def _same(got, want, path="") -> None:
    """Equal structure, equal keys, numbers within a tight tolerance (NaN where NaN)."""
    if isinstance(want, np.ndarray) or isinstance(want, float):
        scale = float(np.nanmax(np.abs(want))) if np.size(want) and not np.isnan(want).all() else 0.0
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale + 1e-9, err_msg=path)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), path
        for k in want:
            _same(got[k], want[k], f"{path}/{k}")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), path
        for i, (a, b) in enumerate(zip(got, want)):
            _same(a, b, f"{path}[{i}]")
    else:
        assert got == want, path


def test_shipped_entry_is_what_the_code_computes_for_its_window(shipped, entry):
    """Fails when a change to the explanations leaves the shipped entry behind: then bump
    served_store.EXPLANATIONS_VERSION and run `nilmbuild explain --store` (docs/attributions.md)."""
    agg, start = _window(entry)
    stored = served_store.stored_explanations(shipped, agg, start, served.SITE)
    assert stored is not None, "the shipped entry is for another version or settings"
    _same(stored, served.explain_served(shipped, agg, start, served.SITE))


def test_shipped_entry_is_for_the_window_the_site_serves(site_context, entry):
    from nilmbuild.site.views import why

    if site_context.loaded.fingerprint != load_checkpoint(default_checkpoint_path()).fingerprint:
        pytest.skip("NILMBUILD_TEST_CHECKPOINT: the site is not the shipped checkpoint's")
    agg, start = why.served_window(site_context, why.window_sample(site_context))
    assert served_store.stored_explanations(site_context.loaded, agg, start, served.SITE) is not None
    assert str(start) == entry["start"] and served_store.window_sha256(agg) == entry["aggregate_sha256"]


def _with(shipped, entry, model=None):
    """The shipped checkpoint with this extra["why"] (and these weights), not read from any file."""
    return dataclasses.replace(shipped, extra={"why": entry}, model=model or shipped.model, fingerprint="")


@pytest.mark.parametrize("stale", ["version", "model", "start", "window", "settings", "served"])
def test_a_stale_entry_is_ignored_and_the_window_recomputed(shipped, entry, stale, monkeypatch):
    agg, start = _window(entry)
    e, model = dict(entry), None
    if stale == "model":  # e.g. `nilmbuild calibrate` or a further training run that kept extra
        model = copy.deepcopy(shipped.model)
        with torch.no_grad():
            next(model.parameters()).add_(1e-3)
    elif stale == "version":
        e["version"] = served_store.EXPLANATIONS_VERSION + 1
    elif stale == "start":
        e["start"] = str(start + np.timedelta64(60, "s"))
    elif stale == "window":
        e["aggregate_sha256"] = served_store.window_sha256(agg + np.float32(1.0))
    elif stale == "settings":
        e["settings"] = {**e["settings"], "fractions": 11}
    else:
        e["served"] = None
    calls = []
    monkeypatch.setattr(served, "explain_served", lambda *a: calls.append(a) or {"computed": True})
    fresh = served_cache.cached_explain(_with(shipped, e, model), agg, start, cache=False)
    assert fresh == {"computed": True} and len(calls) == 1
    kept = served_cache.cached_explain(_with(shipped, entry), agg, start, cache=False)
    assert len(calls) == 1 and kept["quality"] == served_store.from_stored(entry["served"])["quality"]
    assert served_store.stored_explanations(_with(shipped, entry), agg + np.float32(1.0), start, served.SITE) is None


def test_store_writes_the_sites_window_and_keeps_the_rest(site_context, tmp_path, monkeypatch):
    """`nilmbuild explain --store` on a copy of the shipped checkpoint (Captum replaced by a stand-in: the numbers
    are the test above's): the entry is the served window's, the weights and the other extras are unchanged."""
    from nilmbuild.site.views import why

    ckpt = shutil.copy(default_checkpoint_path(), tmp_path / "m.pt")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(served, "explain_served", lambda *a, progress: {"passes": np.arange(4.0), "n": 1})
    r = CliRunner().invoke(main, ["explain", "--store", "-c", str(ckpt)])
    assert r.exit_code == 0, r.output
    before, after = load_checkpoint(default_checkpoint_path()), load_checkpoint(ckpt)
    assert sorted(after.extra) == sorted(set(before.extra) | {"why"})
    assert after.extra["landscape"] == before.extra["landscape"]
    for k, v in before.model.state_dict().items():
        assert torch.equal(after.model.state_dict()[k], v)
    agg, start = why.served_window(site_context, why.window_sample(site_context))
    got = served_store.stored_explanations(after, agg, start, served.SITE)
    assert got["n"] == 1 and got["passes"].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "args, says",
    [
        (["--store", "-d", "kettle"], "not --device"),
        (["--store", "--quality", "--ig-steps", "3"], "not --ig-steps, --quality"),
        (["--store", "-c", "nope.pt"], "does not exist"),
    ],
)
def test_store_bad_input_is_one_line(args, says):
    r = CliRunner().invoke(main, ["explain", *args])
    assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_store_on_an_imported_checkpoint_is_what_its_site_reads(tmp_path, monkeypatch):
    """An imported CondiNILM checkpoint (the bench's fixture, window 64) gets its Why page stored too, with the real
    explanations: its site's lookup finds them, and they are what explain_served computes for that window."""
    from nilmbuild.bench.upstream import import_fixture
    from nilmbuild.site.context import make_context
    from nilmbuild.site.views import why

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ckpt = import_fixture(tmp_path)
    r = CliRunner().invoke(main, ["explain", "--store", "-c", str(ckpt)])
    assert r.exit_code == 0, r.output
    ctx = make_context(str(ckpt), cache=True)
    agg, start = why.served_window(ctx, why.window_sample(ctx))
    got = served_store.stored_explanations(ctx.loaded, agg, start, served.SITE)
    assert got is not None and got["aggregate_w"].shape == (64,)
    _same(got, served.explain_served(ctx.loaded, agg, start, served.SITE))


def test_the_bench_checkpoint_without_stored_explanations_is_the_shipped_one_less_them(shipped, tmp_path):
    from nilmbuild.bench.build_runs import without_stored_explanations

    bare = load_checkpoint(without_stored_explanations(tmp_path / "bare.pt"))
    assert "why" not in bare.extra and sorted(bare.extra) == sorted(k for k in shipped.extra if k != "why")
    assert all(torch.equal(v, shipped.model.state_dict()[k]) for k, v in bare.model.state_dict().items())
    assert bare.provenance == shipped.provenance and bare.scalers == shipped.scalers
