"""A kernel in a language no device here runs: the refusal names what would run it."""

import pytest

from perfport._core import DeviceError
from perfport._core.records import Language
from perfport.devices import default_device, get_device, list_devices


def test_cuda_without_an_nvidia_gpu_points_to_the_portable_dialect():
    if any(d.backend.accepts(Language.CUDA) for d in list_devices()):
        pytest.skip("this machine runs CUDA kernels")
    # It said "install PoCL", which was installed and cannot run CUDA.
    with pytest.raises(DeviceError, match=r"CUDA needs an NVIDIA GPU.*language 'portable'") as e:
        default_device(Language.CUDA)
    assert "PoCL" not in str(e.value)
    opencl = next(d for d in list_devices() if d.backend.accepts(Language.OPENCL))
    with pytest.raises(DeviceError, match=r"cannot run cuda kernels; CUDA needs an NVIDIA GPU"):
        get_device(opencl.id, Language.CUDA)


def test_a_device_of_the_wrong_backend_names_the_devices_here_that_run_the_kernel(monkeypatch):
    """An OpenCL kernel given --device cuda:0 on a GPU machine was told to install PoCL, while
    the same GPU's NVIDIA OpenCL device sat at opencl:0:0."""
    import dataclasses
    import sys

    from perfport._core.records import Backend

    devices = sys.modules["perfport.devices"]  # the package; perfport.devices is its function

    opencl = next(d for d in list_devices() if d.backend is Backend.OPENCL)
    cuda = dataclasses.replace(opencl, id="cuda:0", backend=Backend.CUDA)
    monkeypatch.setattr(devices, "_all_devices", lambda: [opencl, cuda])
    with pytest.raises(DeviceError) as e:
        get_device("cuda:0", Language.OPENCL)
    assert f"use --device {opencl.id} ({opencl.name})" in str(e.value)
    assert "PoCL" not in str(e.value)
