"""The CUDA launch raises a kernel's dynamic shared-memory limit whenever static and dynamic
shared memory together pass 48 KiB: 16 KiB static beside 40 KiB dynamic was refused before."""

from perfport.devices.cuda import needs_shared_optin

KIB = 1024


def test_static_and_dynamic_shared_memory_count_together():
    assert needs_shared_optin(16 * KIB, 40 * KIB)
    assert needs_shared_optin(0, 49 * KIB)
    assert not needs_shared_optin(16 * KIB, 32 * KIB)
    assert not needs_shared_optin(0, 48 * KIB)
