"""model/checkpoint.update_extra (what `nilmbuild landscape` and `nilmbuild explain --store` write with): the
checkpoint is rewritten atomically, and a file that cannot be rewritten gives a one-line error and stays as it was."""

from __future__ import annotations

import errno
import shutil

import pytest
import torch

from nilmbuild.errors import UserError
from nilmbuild.model import checkpoint as ck


@pytest.fixture
def copy(tmp_path):
    out = tmp_path / "model.pt"
    shutil.copyfile(ck.default_checkpoint_path(), out)
    return out


def test_update_extra_sets_one_key_and_keeps_the_rest(copy):
    before = torch.load(copy, map_location="cpu", weights_only=True)
    ck.update_extra(copy, "note", {"value": 3})
    after = torch.load(copy, map_location="cpu", weights_only=True)
    assert after["extra"]["note"] == {"value": 3}
    assert set(after["extra"]) == set(before.get("extra") or {}) | {"note"}
    for name, w in before["state_dict"].items():
        assert torch.equal(after["state_dict"][name], w), name


def test_unwritable_checkpoint_is_one_line_and_untouched(copy, monkeypatch):
    data = copy.read_bytes()

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(ck.tempfile, "mkstemp", refuse)
    with pytest.raises(UserError) as e:
        ck.update_extra(copy, "note", 1)
    msg = str(e.value)
    assert "\n" not in msg and "Read-only file system" in msg and "--checkpoint" in msg
    assert copy.read_bytes() == data
    assert sorted(p.name for p in copy.parent.iterdir()) == ["model.pt"]
