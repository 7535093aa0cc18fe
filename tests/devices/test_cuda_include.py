"""The CUDA build searches a spec's folder for ``#include "x.h"`` as the OpenCL build does
(-I, passed to NVRTC through CuPy's RawModule), without a GPU: CuPy is faked."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from perfport._core import Language
from perfport.devices.cuda import CudaSession


def test_the_include_folders_reach_nvrtc_as_options():
    seen: list[tuple[str, ...]] = []

    def raw_module(code: str, options: tuple[str, ...]) -> SimpleNamespace:
        seen.append(options)
        kernel = SimpleNamespace(max_threads_per_block=1024, shared_size_bytes=0)
        return SimpleNamespace(get_function=lambda entry: kernel)

    session = CudaSession.__new__(CudaSession)  # no device: only compile runs
    session._cupy = SimpleNamespace(RawModule=raw_module)
    session._device = contextlib.nullcontext()
    source = '#include "helper.h"\nextern "C" __global__ void k() {}\n'
    session.compile(source, Language.CUDA, "k", {"WG": "64"}, ("/specs/my kernels",))
    assert seen == [("-DWG=64", "-I/specs/my kernels")]  # one option each: a space is kept
