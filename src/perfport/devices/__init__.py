"""Layer 1: devices. Every OpenCL platform and device (pyopencl) and every CUDA device (CuPy).

Device ids are ``opencl:<platform>:<device>`` and ``cuda:<n>``. Without a GPU the default is
PoCL's CPU device (``pip install 'perfport[pocl]'``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from perfport._core import Backend, DeviceError, DeviceInfo, DeviceType, Language, PerfportError
from perfport.devices.session import (
    CompiledKernel,
    ConstantData,
    LocalSpace,
    Session,
    opencl_platform,
)

__all__ = [
    "CompiledKernel",
    "ConstantData",
    "LocalSpace",
    "Session",
    "default_device",
    "get_device",
    "list_devices",
    "named_devices",
    "open_session",
    "open_sessions",
    "opencl_platform",
    "stored_device",
]

_TYPE_RANK = {DeviceType.GPU: 0, DeviceType.ACCELERATOR: 1, DeviceType.CPU: 2, DeviceType.OTHER: 3}


@lru_cache(maxsize=1)
def _all_devices() -> tuple[DeviceInfo, ...]:
    from perfport.devices.cuda import list_cuda
    from perfport.devices.opencl import list_opencl

    return tuple(list_opencl() + list_cuda())


def list_devices() -> list[DeviceInfo]:
    """Every device on this machine, OpenCL first, then CUDA.

    >>> import perfport
    >>> [d.id for d in perfport.devices()]  # doctest: +SKIP
    ['opencl:0:0']
    """
    return list(_all_devices())


def default_device(language: Language = Language.PORTABLE) -> DeviceInfo:
    """The fastest kind of device that can run ``language``: a GPU if there is one, else
    the CPU (PoCL)."""
    usable = [d for d in _all_devices() if d.backend.accepts(language)]
    if not usable:
        raise DeviceError(f"no device can run {language.value} kernels here; {_fix(language)}")
    return min(usable, key=lambda d: (_TYPE_RANK[d.type], d.backend is not Backend.OPENCL))


def _fix(language: Language) -> str:
    """What makes a device run ``language``: PoCL runs OpenCL on the CPU; CUDA needs an
    NVIDIA GPU, or the kernel in perfport's portable dialect, which OpenCL devices run too."""
    if language is Language.CUDA:
        return (
            "CUDA needs an NVIDIA GPU with CuPy (pip install 'perfport[cuda]'); on other "
            "devices write the kernel with language 'portable' (docs/kernel-spec.md, 'The portable dialect')"
        )
    return "install PoCL (pip install 'perfport[pocl]') for OpenCL on the CPU"


def _others(language: Language) -> str:
    """The devices here that do run ``language``, as the choice to offer ('' if none)."""
    usable = [f"{d.id} ({d.name})" for d in _all_devices() if d.backend.accepts(language)]
    return f"use --device {' or '.join(usable)}" if usable else ""


def named_devices(
    ids: Sequence[str | None], language: Language = Language.PORTABLE
) -> list[DeviceInfo]:
    """The devices with these ids (None: the default one), in order; with ``all`` among them,
    every device here that runs ``language`` instead, so ``all`` comes alone."""
    if "all" not in ids:
        return [get_device(i, language) for i in ids]
    others = [str(i) for i in ids if i != "all"]
    if others:  # they were dropped without a word (a sub-device is not among "all")
        raise DeviceError(
            f"device 'all' (every device here) comes alone, not with {', '.join(others)}; "
            "give 'all' alone, or name each device instead"
        )
    devices = [d for d in list_devices() if d.backend.accepts(language)]
    if not devices:
        raise DeviceError(f"no device here runs {language.value} kernels; see 'perfport devices'")
    return devices


# A device's id: ASCII digits only (\d takes any script's digits, and int() reads them).
_ID = re.compile(r"opencl:[0-9]+:[0-9]+(\.[0-9]+)?|cuda:[0-9]+")


def _canonical_id(device_id: str) -> str:
    """A device id as perfport writes it, each number without leading zeros: 'opencl:0:0.01'
    is 'opencl:0:0.1', one device, not a second one; anything else (a fingerprint, an id
    with other digits) as given, and refused as no device where one is looked up."""
    if not _ID.fullmatch(device_id):
        return device_id
    return re.sub(r"[0-9]+", lambda m: str(int(m.group())), device_id)


def stored_device(device: str | None) -> str | None:
    """A filter on stored results' device: an id of this machine (``opencl:0:0``, as ``tune
    --device`` takes) becomes its fingerprint, which the store keys devices by; a name or a
    fingerprint is kept as given."""
    if device is None or not _ID.fullmatch(device):
        return device
    try:
        return get_device(device).fingerprint
    except PerfportError:  # not a device here: matched as text, and refused as no match
        return device


def get_device(device_id: str | None = None, language: Language = Language.PORTABLE) -> DeviceInfo:
    """The device with this id (see ``perfport devices``), or the default one for None."""
    if device_id is None:
        return default_device(language)
    if not isinstance(device_id, str):
        raise DeviceError(
            f"a device is named by its id, such as 'opencl:0:0' (perfport devices), not "
            f"{type(device_id).__name__} {device_id!r}"
        )
    wanted = _canonical_id(device_id)
    for d in _all_devices():
        if d.id == wanted or d.fingerprint == wanted:
            if not d.backend.accepts(language):
                raise DeviceError(
                    f"device {device_id} ({d.backend.value}) cannot run {language.value} "
                    f"kernels; {_others(language) or _fix(language)}"
                )
            return d
    if _ID.fullmatch(wanted) and "." in wanted:  # a sub-device, made on demand
        parent = wanted.rsplit(".", 1)[0]
        if not any(d.id == parent for d in _all_devices()):
            raise DeviceError(f"no device {parent!r} to partition into {wanted}")
        from perfport.devices.opencl import opencl_sub_device

        return opencl_sub_device(wanted)
    if device_id.startswith("cuda:"):
        from perfport.devices.cuda import _cupy

        _cupy()  # raises MissingExtra when CuPy is the reason
    known = ", ".join(d.id for d in _all_devices()) or "none"
    raise DeviceError(f"no device {device_id!r}; devices here: {known} (see 'perfport devices')")


def open_session(device: DeviceInfo, compute_units: int | None = None) -> Session:
    """A context and queue on ``device``; ``compute_units``: on an OpenCL sub-device of that
    many of its compute units (device fission), the others left free."""
    if device.backend is Backend.CUDA:
        if compute_units is not None:
            raise DeviceError(f"{device.id} is a CUDA device: it cannot be partitioned")
        from perfport.devices.cuda import CudaSession

        return CudaSession(device)
    from perfport.devices.opencl import OpenCLSession

    return OpenCLSession(device, compute_units)


def open_sessions(
    devices: Sequence[DeviceInfo],
    compute_units: Mapping[str, int] | None = None,
    share_context: bool = True,
) -> list[Session]:
    """A session per device, in order. With ``share_context`` the OpenCL devices of one
    platform share one context, so ``Session.copy_from`` moves buffers between them on the
    devices (CUDA sessions copy between peers by themselves); ``compute_units`` by device id
    as ``open_session``'s."""
    units = dict(compute_units or {})
    sessions: list[Session | None] = [None] * len(devices)
    opencl = [i for i, d in enumerate(devices) if d.backend is Backend.OPENCL]
    if share_context and len(opencl) > 1:
        from perfport.devices.opencl import open_opencl_sessions

        shared = open_opencl_sessions([devices[i] for i in opencl], units)
        for i, s in zip(opencl, shared, strict=True):
            sessions[i] = s
    return [s or open_session(d, units.get(d.id)) for s, d in zip(sessions, devices, strict=True)]
