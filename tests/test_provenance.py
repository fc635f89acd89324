"""nilmbuild.provenance: one fingerprint for a checkpoint (sha256 of its bytes, read once), one code fingerprint,
and the places files live; the caches key off them."""

from __future__ import annotations

import hashlib
import os

import torch

from nilmbuild import provenance
from nilmbuild.model.checkpoint import load_checkpoint, save_checkpoint
from nilmbuild.model.config import NILMFormerConfig
from nilmbuild.model.nilmformer import NILMFormer

# sha256("abc"), FIPS 180-2 appendix B.1
SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_checkpoint_fingerprint_is_the_sha256_of_the_bytes(tmp_path):
    f = tmp_path / "m.pt"
    f.write_bytes(b"abc")
    assert provenance.checkpoint_fingerprint(f) == SHA256_ABC


def test_a_rewritten_file_is_hashed_again(tmp_path):
    f = tmp_path / "m.pt"
    f.write_bytes(b"abc")
    assert provenance.checkpoint_fingerprint(f) == SHA256_ABC
    f.write_bytes(b"abd")
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: ctime and content still tell
    assert provenance.checkpoint_fingerprint(f) == hashlib.sha256(b"abd").hexdigest()


def test_the_file_is_read_once_while_unchanged(tmp_path, monkeypatch):
    f = tmp_path / "m.pt"
    f.write_bytes(b"abc")
    reads = []
    real = type(f).read_bytes
    monkeypatch.setattr(type(f), "read_bytes", lambda self: reads.append(self) or real(self))
    for _ in range(3):
        assert provenance.checkpoint_fingerprint(f) == SHA256_ABC
    assert len(reads) == 1


def test_a_loaded_checkpoint_carries_its_fingerprint(tmp_path):
    torch.manual_seed(0)
    cfg = NILMFormerConfig(d_model=16, n_head=2, head_dim=8, window=48, n_encoder_layers=1)
    path = tmp_path / "small.pt"
    save_checkpoint(path, NILMFormer(cfg))
    loaded = load_checkpoint(path)
    assert loaded.fingerprint == hashlib.sha256(path.read_bytes()).hexdigest()
    assert provenance.checkpoint_fingerprint(path) == loaded.fingerprint


def test_the_default_checkpoint_and_assets_are_defined_once():
    assert provenance.checkpoint_file(None) == provenance.default_checkpoint_path()
    assert provenance.default_checkpoint_path().is_file()
    assert (provenance.ASSET_ROOT / "templates").is_dir() and (provenance.ASSET_ROOT / "static").is_dir()


def test_code_fingerprint_covers_files_names_and_packages(tmp_path):
    code = tmp_path / "pkg"
    (code / "sub").mkdir(parents=True)
    (code / "sub" / "a.py").write_text("A = 1\n")
    (code / "__pycache__").mkdir()
    (code / "__pycache__" / "a.pyc").write_bytes(b"x")
    k = provenance.code_fingerprint([("pkg", code)])
    assert provenance.code_fingerprint([("pkg", code)]) == k
    (code / "__pycache__" / "a.pyc").write_bytes(b"y")  # compiled files are not code
    assert provenance.code_fingerprint([("pkg", code)]) == k
    (code / "sub" / "a.py").write_text("A = 2\n")
    k2 = provenance.code_fingerprint([("pkg", code)])
    assert k2 != k
    (code / "sub" / "a.py").rename(code / "sub" / "b.py")  # same bytes, another name
    assert provenance.code_fingerprint([("pkg", code)]) != k2
    assert provenance.code_fingerprint([("pkg", code)], packages=("numpy",)) != provenance.code_fingerprint(
        [("pkg", code)]
    )
    assert provenance.code_fingerprint([("pkg", code)], salt="v2") != provenance.code_fingerprint([("pkg", code)])
