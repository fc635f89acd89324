"""nilmbuild.threads: numpy's BLAS is held to one thread while the build's numpy work runs, and only then."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from nilmbuild import threads
from nilmbuild.capture import attention_plan, capture_batch
from tests.test_format import W, tiny_model


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_blas_thread_limits_blas_and_gives_the_limit_back():
    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
    before = _blas_threads()
    if not before:
        pytest.skip("this numpy has no BLAS library threadpoolctl knows")
    with threads.one_blas_thread():
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


def test_the_capture_rebuilds_attention_with_one_blas_thread(monkeypatch):
    seen = []
    rebuild = attention_plan.rebuild_chunk

    def spy(*args):
        seen.append(_blas_threads())
        return rebuild(*args)

    monkeypatch.setattr(attention_plan, "rebuild_chunk", spy)
    import torch

    capture_batch(tiny_model(), torch.rand(2, 7, W), ablations=False)
    assert seen and all(set(s) <= {1} for s in seen)
