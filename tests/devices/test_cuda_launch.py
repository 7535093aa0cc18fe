"""How a CUDA launch is laid out, without a GPU. Two LOCAL_PARAM buffers of a portable kernel
shared the start of dynamic shared memory (on an H200 a kernel writing 2x into one and 1x
into the other read 4x back: wrong_result, or, with no numpy reference, every configuration
'verified' against the default's wrong output); a grid past CUDA's limits was truncated by
CuPy (2^32 + 1024 blocks ran as 1024) or refused with a bare INVALID_VALUE."""

import numpy as np

from perfport.devices.cuda import grid_over_limits, launch_arguments
from perfport.devices.dialect import CUDA_PRELUDE
from perfport.devices.session import LocalSpace


def test_each_local_buffer_of_a_portable_kernel_has_its_own_aligned_part():
    x = np.zeros(4, np.float32)
    shared, plain = launch_arguments([x, LocalSpace(100), 7, LocalSpace(64)], portable=True)
    assert plain[0] is x and plain[2] == 7
    assert (int(plain[1]), int(plain[3])) == (0, 112)  # 100 rounded up to 16 bytes
    assert isinstance(plain[3], np.uint32) and shared == 176


def test_a_cuda_kernel_of_the_users_gets_one_block_and_no_offsets():
    shared, plain = launch_arguments([LocalSpace(100), 7, LocalSpace(64)], portable=False)
    assert shared == 164 and plain == (7,)


def test_the_prelude_passes_each_buffer_its_offset():
    param = next(ln for ln in CUDA_PRELUDE.splitlines() if "define LOCAL_PARAM" in ln)
    decl = next(ln for ln in CUDA_PRELUDE.splitlines() if "define LOCAL_DECL" in ln)
    assert "name##_perfport_at" in param and "perfport_smem_ + name##_perfport_at" in decl


def test_a_grid_past_cudas_limits_is_refused_saying_so():
    assert grid_over_limits((2**31 - 1, 65535, 65535)) == ""
    assert "CUDA's limits" in grid_over_limits((2**32 + 1024, 1, 1))
    assert "use larger blocks" in grid_over_limits((32, 70000, 1))


def test_the_local_memory_check_counts_the_padding():
    from types import SimpleNamespace

    from perfport.devices.cuda import _CudaKernel

    fn = SimpleNamespace(max_threads_per_block=1024, shared_size_bytes=0)
    assert _CudaKernel(None, fn, portable=True).dynamic_local_bytes([4, 4, 4]) == 36
    assert _CudaKernel(None, fn, portable=False).dynamic_local_bytes([4, 4, 4]) == 12
