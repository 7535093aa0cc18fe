"""Device-to-device copies between CUDA devices: the peer copy's arguments and route
(anywhere), and on a machine with two CUDA GPUs a halo row copied by peer access."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.devices.peer import CopyRoute, DeviceBytes, PeerCopy, peer_copy, route


def test_peer_copy_offsets_each_buffer_and_names_both_devices():
    src = DeviceBytes(device=0, pointer=0x1000, size=4096, offset=512)
    dst = DeviceBytes(device=1, pointer=0x9000, size=1024, offset=256)
    assert peer_copy(src, dst, 768) == PeerCopy(0x9100, 1, 0x1200, 0, 768)


@pytest.mark.parametrize(
    ("src_offset", "dst_offset", "nbytes", "says"),
    [(4000, 0, 200, "source bytes 4000..4200"), (0, 900, 200, "target bytes 900..1100"),
     (-8, 0, 8, "source"), (0, 0, -1, "source")],
)  # fmt: skip
def test_a_copy_outside_either_buffer_is_refused(src_offset, dst_offset, nbytes, says):
    src = DeviceBytes(0, 0x1000, 4096, src_offset)
    dst = DeviceBytes(1, 0x9000, 1024, dst_offset)
    with pytest.raises(ValueError, match=says):
        peer_copy(src, dst, nbytes)


def test_route_between_devices():
    assert route(0, 0, peer_access=False) is CopyRoute.SAME
    assert route(0, 1, peer_access=True) is CopyRoute.PEER
    assert route(1, 0, peer_access=False) is CopyRoute.HOST


def test_cuda_sessions_copy_between_gpus():
    cupy = pytest.importorskip("cupy")
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two CUDA devices")
    from perfport.devices import get_device, open_sessions

    a, b = open_sessions([get_device("cuda:0"), get_device("cuda:1")])
    try:
        src = a.upload(np.arange(64, dtype=np.float32))
        dst = b.upload(np.zeros(64, dtype=np.float32))
        if b.can_copy_from(a):
            assert b.copy_from(a, src, 16 * 4, dst, 8 * 4, 4 * 4)
        else:  # no peer access between these two: the split stages through the host
            assert not b.copy_from(a, src, 16 * 4, dst, 8 * 4, 4 * 4)
            staged = np.empty(4, np.float32)
            a.read_range(src, 16 * 4, staged)
            b.write_range(dst, 8 * 4, staged)
        out = np.empty(64, np.float32)
        b.download(dst, out)
        assert np.array_equal(out[8:12], [16, 17, 18, 19]) and not out[:8].any()
    finally:
        a.close()
        b.close()
