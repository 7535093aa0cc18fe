"""What a device-to-device copy between two CUDA devices moves, apart from any GPU: the
peer copy's pointers, devices and byte count from two buffers' base pointers and offsets,
checked against both buffers' sizes (a wrong offset must fail here, not write past a
buffer on the device), and the route the copy takes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class CopyRoute(Enum):
    """How bytes go from one device's buffer to another's."""

    SAME = "same"  # both buffers on one device: a copy on it
    PEER = "peer"  # device to device (CUDA peer access, or one OpenCL context)
    HOST = "host"  # read to the host, then written


@dataclass(frozen=True)
class PeerCopy:
    """The arguments of ``cudaMemcpyPeer(dst, dst_device, src, src_device, nbytes)``."""

    dst_pointer: int
    dst_device: int
    src_pointer: int
    src_device: int
    nbytes: int


@dataclass(frozen=True)
class DeviceBytes:
    """Bytes [offset, offset + nbytes) of a buffer of ``size`` bytes at ``pointer`` on
    device ``device``."""

    device: int
    pointer: int
    size: int
    offset: int


def peer_copy(src: DeviceBytes, dst: DeviceBytes, nbytes: int) -> PeerCopy:
    """The peer copy of ``nbytes`` from ``src`` to ``dst``; ValueError when either range
    leaves its buffer."""
    for what, b in (("source", src), ("target", dst)):
        if nbytes < 0 or b.offset < 0 or b.offset + nbytes > b.size:
            raise ValueError(
                f"{what} bytes {b.offset}..{b.offset + nbytes} are outside its buffer of "
                f"{b.size} bytes on device {b.device}"
            )
    return PeerCopy(
        dst.pointer + dst.offset, dst.device, src.pointer + src.offset, src.device, nbytes
    )


def route(src_device: int, dst_device: int, peer_access: bool) -> CopyRoute:
    """The route between two CUDA devices: on one device a copy there; between two, a peer
    copy where the target can access the source's memory, else through the host."""
    if src_device == dst_device:
        return CopyRoute.SAME
    return CopyRoute.PEER if peer_access else CopyRoute.HOST
