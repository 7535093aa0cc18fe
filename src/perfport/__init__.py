"""perfport: find, predict, model and deploy the fastest launch configurations of OpenCL and
CUDA kernels.

>>> import perfport
>>> result = perfport.tune("stencil", problem={"width": 1024, "height": 1024}, budget=30)  # doctest: +SKIP
>>> print(result.best.config, result.best.time_ms, result.speedup)  # doctest: +SKIP
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core.lazy import lazy_exports
from perfport._core.version import __version__

if TYPE_CHECKING:
    from perfport._core import (
        ArrayArg,
        Config,
        DeviceInfo,
        Init,
        KernelSpec,
        Language,
        LocalArg,
        Measurement,
        Outcome,
        Param,
        ParamKind,
        PerfportError,
        Problem,
        ReferenceKernel,
        ScalarArg,
        SpecError,
        SplitArray,
        SplitDim,
        Stats,
    )
    from perfport.devices import get_device
    from perfport.devices import list_devices as list_devices  # not in __all__, but importable
    from perfport.kernels import BUILTINS, builtin, load_kernel
    from perfport.measure import RunSettings, Timing
    from perfport.space import kernel_space
    from perfport.store import BestResult, CampaignStatus, Store
    from perfport.store import best_results as best_results  # not in __all__, but importable
    from perfport.tune import Budget, TuneResult, tune

# Each name is imported from its layer on first use: `import perfport` (and the command line,
# which imports it) then costs neither numpy nor the layers a call does not reach.
_EXPORTS = {
    **dict.fromkeys(
        ("ArrayArg", "Config", "DeviceInfo", "Init", "KernelSpec", "Language", "LocalArg",
         "Measurement", "Outcome", "Param", "ParamKind", "PerfportError", "Problem", "ScalarArg",
         "SpecError", "Stats"),
        "perfport._core",
    ),
    "ReferenceKernel": "perfport._core",  # issue 26: a kernel computing the expected outputs
    # a spec file declaring how it splits across devices (docs/split.md) needs these
    **dict.fromkeys(("SplitArray", "SplitDim"), "perfport._core"),
    **dict.fromkeys(("get_device", "list_devices"), "perfport.devices"),
    **dict.fromkeys(("BUILTINS", "builtin", "load_kernel"), "perfport.kernels"),
    **dict.fromkeys(("RunSettings", "Timing"), "perfport.measure"),
    "kernel_space": "perfport.space",
    **dict.fromkeys(("BestResult", "CampaignStatus", "Store", "best_results"), "perfport.store"),
    **dict.fromkeys(("Budget", "TuneResult", "tune"), "perfport.tune"),
}  # fmt: skip

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _Facade(types.ModuleType):
    """perfport's module type. Importing a subpackage binds it on its parent package, and two
    subpackages share their name with a function of the API (perfport.tune, perfport.devices):
    the functions keep those names, as they did when this facade imported everything eagerly."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("tune", "devices") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade


def devices() -> list[DeviceInfo]:
    """Every OpenCL and CUDA device on this machine.

    >>> import perfport
    >>> for d in perfport.devices():  # doctest: +SKIP
    ...     print(d.id, d.name, d.max_work_group_size, d.local_mem_bytes)
    opencl:0:0 pthread-Intel(R) Xeon(R) Processor 4096 2097152
    """
    from perfport.devices import list_devices

    return list_devices()


def results(
    db: str | Path = "perfport.db", kernel: str | None = None, device: str | None = None
) -> list[BestResult]:
    """The best configuration per device, kernel and problem stored in ``db``, with the speedup
    over the kernel's default configuration and the outcome counts. ``device``: its name,
    fingerprint or, for a device of this machine, its id (``opencl:0:0``).

    >>> import perfport
    >>> for r in perfport.results("perfport.db", kernel="stencil"):  # doctest: +SKIP
    ...     print(r.device, dict(r.problem), dict(r.best), r.best_ms, r.speedup)
    """
    from perfport.devices import stored_device
    from perfport.store import Store, best_results

    with Store(db, create=False) as store:
        return best_results(store, kernel=kernel, device=stored_device(device))


__all__ = [
    "BUILTINS",
    "ArrayArg",
    "BestResult",
    "Budget",
    "CampaignStatus",
    "Config",
    "DeviceInfo",
    "Init",
    "KernelSpec",
    "Language",
    "LocalArg",
    "Measurement",
    "Outcome",
    "Param",
    "ParamKind",
    "PerfportError",
    "Problem",
    "ReferenceKernel",
    "RunSettings",
    "ScalarArg",
    "SpecError",
    "SplitArray",
    "SplitDim",
    "Stats",
    "Store",
    "Timing",
    "TuneResult",
    "__version__",
    "builtin",
    "devices",
    "get_device",
    "kernel_space",
    "load_kernel",
    "results",
    "tune",
]
