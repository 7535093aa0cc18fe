"""Device ids: one device has one id, however its numbers are written."""

import pytest

from perfport._core import DeviceError
from perfport.devices import get_device, named_devices, stored_device


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("opencl:0:0.01", "opencl:0:0.1"),
        ("opencl:0:0.00", "opencl:0:0.0"),
        ("opencl:0:00.0", "opencl:0:0.0"),
        ("opencl:00:00", "opencl:0:0"),
    ],
)
def test_numbers_written_with_leading_zeros_name_the_same_device(given, meant):
    """'opencl:0:0.01' was a device of its own, so a split could run one sub-device beside
    itself; 'opencl:0:00.0' was refused."""
    assert get_device(given).id == get_device(meant).id == meant
    assert stored_device(given) == get_device(meant).fingerprint


@pytest.mark.parametrize("given", ["opencl:0:0.\u0661", "opencl:0:\u0660", "opencl:\uff10:0"])
def test_digits_of_other_scripts_are_no_device(given):
    """int() reads '\u0661' as 1, so 'opencl:0:0.\u0661' was a second name of opencl:0:0.1."""
    with pytest.raises(DeviceError, match="no device"):
        get_device(given)
    assert stored_device(given) == given  # matched as text, so it matches no stored device


def test_all_with_other_devices_is_refused_not_dropped():
    """'all' with 'opencl:0:0.0' silently left the sub-device out (it is not among 'all')."""
    with pytest.raises(DeviceError, match=r"'all' \(every device here\) comes alone, not with"):
        named_devices(["all", "opencl:0:0.0"])
    assert [d.id for d in named_devices(["all"])] == [d.id for d in named_devices(["all", "all"])]
