"""perfport: find, predict, model and deploy the fastest launch configurations of OpenCL and
CUDA kernels.

>>> import perfport
>>> result = perfport.tune("stencil", problem={"width": 1024, "height": 1024}, budget=30)  # doctest: +SKIP
>>> print(result.best.config, result.best.time_ms, result.speedup)  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

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
    ScalarArg,
    SpecError,
    Stats,
    __version__,
)
from perfport.devices import get_device, list_devices
from perfport.kernels import BUILTINS, builtin, load_kernel
from perfport.measure import RunSettings, Timing
from perfport.space import kernel_space
from perfport.store import BestResult, CampaignStatus, Store, best_results
from perfport.tune import Budget, TuneResult, tune


def devices() -> list[DeviceInfo]:
    """Every OpenCL and CUDA device on this machine.

    >>> import perfport
    >>> for d in perfport.devices():  # doctest: +SKIP
    ...     print(d.id, d.name, d.max_work_group_size, d.local_mem_bytes)
    opencl:0:0 pthread-Intel(R) Xeon(R) Processor 4096 2097152
    """
    return list_devices()


def results(
    db: str | Path = "perfport.db", kernel: str | None = None, device: str | None = None
) -> list[BestResult]:
    """The best configuration per device, kernel and problem stored in ``db``, with the speedup
    over the kernel's default configuration and the outcome counts.

    >>> import perfport
    >>> for r in perfport.results("perfport.db", kernel="stencil"):  # doctest: +SKIP
    ...     print(r.device, dict(r.problem), dict(r.best), r.best_ms, r.speedup)
    """
    with Store(db, create=False) as store:
        return best_results(store, kernel=kernel, device=device)


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
    "RunSettings",
    "ScalarArg",
    "SpecError",
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
