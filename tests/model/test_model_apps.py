"""The paper's matmul, written in loopy, computes a @ b on PoCL."""

from __future__ import annotations

import numpy as np
import pytest
from model_support import LOOPY

from perfport.model import APPLICATIONS
from perfport.model.apps import run_on

pytest.importorskip("loopy", reason=LOOPY)


@pytest.fixture(scope="module")
def queue():
    import pyopencl as cl

    devices = [d for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        pytest.skip("no OpenCL device: pip install 'perfport[pocl]'")
    return cl.CommandQueue(cl.Context(devices[:1]))


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_matmul_variants_agree_with_numpy(queue, name):
    got, want = run_on(queue, APPLICATIONS[name], 48, seed=1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
