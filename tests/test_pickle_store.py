"""nilmbuild/pickle_store.py beyond refusing code (tests/test_security_loaders.py): where the cache lives, and that
an entry saved into a folder that does not exist yet reads back."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nilmbuild import pickle_store


def test_cache_home_follows_xdg_or_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert pickle_store.cache_home("site") == tmp_path / "nilmbuild" / "site"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert pickle_store.cache_home("site") == Path(tmp_path / "h") / ".cache" / "nilmbuild" / "site"


def test_save_makes_its_folder_and_load_reads_the_entry_back(tmp_path):
    folder = tmp_path / "a" / "b"
    obj = {"x": np.arange(3.0), "n": 2}
    assert pickle_store.save(folder, "k1", obj) == folder / "k1.pkl"
    got = pickle_store.load(folder, "k1")
    assert got["n"] == 2 and got["x"].tolist() == [0.0, 1.0, 2.0]
    assert pickle_store.load(folder, "absent") is None
    assert pickle_store.clear(folder) == 1 and not list(folder.iterdir())


def test_clear_removes_only_its_own_files(tmp_path):
    folder = tmp_path / "c"
    assert pickle_store.clear(folder) == 0  # no folder yet
    pickle_store.save(folder, "k", 1)
    (folder / ".k.abc.tmp").write_bytes(b"stale")  # a temporary file of an interrupted save
    (tmp_path / "elsewhere.pkl").write_bytes(b"not ours")
    (folder / "link.pkl").symlink_to(tmp_path / "elsewhere.pkl")
    (folder / "notes.txt").write_text("not ours")
    assert pickle_store.clear(folder) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["link.pkl", "notes.txt"]
    assert (tmp_path / "elsewhere.pkl").read_bytes() == b"not ours"


def test_a_failed_save_leaves_no_temporary_file(tmp_path):
    import pickle

    import pytest

    pickle_store.save(tmp_path, "ok", 1)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle_store.save(tmp_path, "bad", lambda: 0)  # a lambda cannot be pickled
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.pkl"]
