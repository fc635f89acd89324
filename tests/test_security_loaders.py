"""No file a user hands us runs code (issue 36): checkpoints, their training trajectories, capture blobs, prepared
data, and the capture and site caches each get a file whose pickle would create a marker file when unpickled
freely. Each loader refuses it in one line (a UserError, or for a cache entry a one-line note and a rebuild), and
the marker never appears.
"""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from nilmbuild.cli import main
from nilmbuild.errors import UserError
from tests.hostile import ExecsCode


@pytest.fixture
def marker(tmp_path):
    m = tmp_path / "code-ran"
    yield m
    assert not m.exists(), "a loader ran code from a user's file"


def one_line(err: BaseException | str) -> str:
    text = str(err).strip()
    assert text and "\n" not in text and "Traceback" not in text, text
    return text


def evil_checkpoint(path, marker):
    """A torch file shaped like a nilmbuild checkpoint whose pickle calls exec (tests.hostile.ExecsCode)."""
    payload = {"format": "nilmbuild-checkpoint", "format_version": 1, "config": ExecsCode(marker), "state_dict": {}}
    torch.save(payload, path)
    return path


def test_free_unpickling_would_run_the_payload(tmp_path):
    """The payload works: without the loaders' guards the marker appears (so the tests below can fail)."""
    m = tmp_path / "ran"
    pickle.loads(pickle.dumps(ExecsCode(m)))
    assert m.exists()
    m.unlink()
    torch.load(evil_checkpoint(tmp_path / "c.pt", m), weights_only=False)
    assert m.exists()


def test_checkpoint(tmp_path, marker):
    from nilmbuild.model.checkpoint import load_checkpoint

    path = evil_checkpoint(tmp_path / "evil.pt", marker)
    with pytest.raises(UserError) as e:
        load_checkpoint(path)
    assert "evil.pt" in one_line(e.value)
    r = CliRunner().invoke(main, ["info", "--checkpoint", str(path)])
    assert r.exit_code == 2 and "evil.pt" in one_line(r.stderr)


def test_checkpoint_through_the_notebook_helper(tmp_path, marker):
    from nilmbuild import notebook

    with pytest.raises(UserError):
        notebook.show("gate", str(evil_checkpoint(tmp_path / "evil.pt", marker)))


def test_trajectory(tmp_path, marker):
    from nilmbuild.train.trajectory import load_trajectory

    path = tmp_path / "run.trajectory.pt"
    torch.save({"format": "x", "states": [ExecsCode(marker)]}, path)
    with pytest.raises(UserError) as e:
        load_trajectory(path)
    assert "run.trajectory.pt" in one_line(e.value)


@pytest.mark.parametrize("wrap", ["pickle", "zip"])
def test_capture_blob_inspect(tmp_path, marker, wrap):
    data = pickle.dumps(ExecsCode(marker))
    path = tmp_path / "cap.msgpack"
    if wrap == "zip":  # a torch-style zip with the pickle inside
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("archive/data.pkl", data)
        data = buf.getvalue()
    path.write_bytes(data)
    r = CliRunner().invoke(main, ["inspect", str(path)])
    assert r.exit_code == 2 and "cap.msgpack" in one_line(r.stderr)


def test_prepared_data(tmp_path, marker):
    from nilmbuild.data.preprocess import Prepared

    path = tmp_path / "prep.npz"
    np.savez(path, info_json=np.array([ExecsCode(marker)], dtype=object))
    with pytest.raises(UserError) as e:
        Prepared.from_npz(path)
    assert "prep.npz" in one_line(e.value)


def test_capture_cache_entry(tmp_path, marker, capsys):
    from nilmbuild.capture import cache

    (tmp_path / "k.pkl").write_bytes(pickle.dumps(ExecsCode(marker)))
    assert cache.load("k", tmp_path) is None
    assert "k.pkl" in one_line(capsys.readouterr().err)


def test_capture_cache_entry_hidden_in_a_record(tmp_path, marker, capsys):
    """An allowed class does not let its fields carry a payload."""
    from nilmbuild.capture import cache
    from nilmbuild.capture.records import Capture

    (tmp_path / "k.pkl").write_bytes(pickle.dumps(Capture(records={}, meta={"x": ExecsCode(marker)})))
    assert cache.load("k", tmp_path) is None
    assert "builtins.exec" in one_line(capsys.readouterr().err)


def test_capture_cache_reads_its_own_entries(tmp_path):
    from nilmbuild.capture import cache
    from nilmbuild.capture.records import Capture, CaptureRecord

    rec = CaptureRecord("a", np.arange(6, dtype=np.float32).reshape(2, 3), ("b", "t"), "0", "s", "d", (2, 3), [])
    meta = {"t0": np.array(["2024-01-01T00:00"], "datetime64[s]"), "n": np.int64(3), "f": np.float32(1.5)}
    cache.save("k", Capture(records={"a": rec}, meta=meta, batch_size=2), tmp_path)
    got = cache.load("k", tmp_path)
    np.testing.assert_array_equal(got.records["a"].tensor, rec.tensor)
    assert got.meta["t0"][0] == meta["t0"][0] and got.meta["n"] == 3 and got.batch_size == 2


def test_site_cache_entry(tmp_path, marker, capsys):
    from nilmbuild.site import site_cache

    (tmp_path / "k.pkl").write_bytes(
        pickle.dumps({"files": {"a.html": b"x"}, "data": ["synthetic", ExecsCode(marker)]})
    )
    assert site_cache.load("k", tmp_path) is None
    assert "k.pkl" in one_line(capsys.readouterr().err)
    site_cache.save("k", {"a.html": b"<p>"}, "synthetic", tmp_path)
    assert site_cache.load("k", tmp_path) == {"a.html": b"<p>"}
