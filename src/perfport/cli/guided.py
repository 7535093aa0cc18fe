"""``perfport tune`` of the loopy application kernels (loopy-matmul, loopy-dg, loopy-fd) and of
a user's loopy space file (``perfport.model.loopy_file``), and model-guided search of them
(``--strategy model_guided --calibration FILE``): the wiring of ``perfport.model`` (the spec,
the calibration, the ranker) into ``perfport.tune``, which the strategy and tune layers cannot
import. Everything here is checked before the store opens.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfport._core import PerfportError
from perfport.kernels import LOOPY_PREFIX

if TYPE_CHECKING:
    from perfport._core import DeviceInfo, KernelSpec, Problem
    from perfport.model.spaces import SearchSpace
    from perfport.space import Space
    from perfport.strategies import Ranker

GUIDED = "model_guided"
HOW = (
    "get one with 'perfport model collect --device ID --db DB' then 'perfport model calibrate "
    "MODEL.json --device ID --db DB --out FILE'"
)


def is_loopy(kernel: str) -> bool:
    """A built-in loopy kernel (loopy-matmul, loopy-dg, loopy-fd) or a loopy space file."""
    from perfport.kernels.loader import is_loopy_space_file

    return kernel.startswith(LOOPY_PREFIX) or is_loopy_space_file(kernel)


def _loopy_kernel_file(kernel: str) -> bool:
    """A ``.py`` file whose ``kernel`` is a loopy kernel, or that defines ``make_kernel()``
    and no ``kernel`` (one kernel to count, as 'model stats' reads it, not a space)."""
    if not kernel.endswith(".py") or not Path(kernel).is_file():
        return False
    from perfport.kernels.loader import import_file

    module = import_file(kernel)
    made = getattr(module, "kernel", None)
    if made is None:
        return callable(getattr(module, "make_kernel", None))
    return type(made).__module__.split(".")[0] == "loopy"


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse what model-guided search cannot run with, naming the fix."""
    guided = args.strategy == GUIDED
    many = args.cluster or len(args.device or []) > 1 or "all" in (args.device or [])
    if guided and not args.calibration:
        raise PerfportError(f"--strategy {GUIDED} needs --calibration FILE, a calibration of the "
                            f"device; {HOW}")  # fmt: skip
    if args.calibration and not guided:
        raise PerfportError(f"--calibration is for --strategy {GUIDED}; add that, or drop "
                            "--calibration")  # fmt: skip
    if guided and many:
        raise PerfportError(f"--strategy {GUIDED} tunes on one device (its calibration's); "
                            "give one --device and no --cluster")  # fmt: skip
    loopy = is_loopy(args.kernel)
    if loopy and many:
        raise PerfportError(f"{args.kernel} tunes on one device: give one --device and no "
                            "--cluster")  # fmt: skip
    if guided and not loopy and _loopy_kernel_file(args.kernel):
        raise PerfportError(f"{args.kernel} defines one loopy kernel, nothing to search; to "
                            "tune it, define params and program(config) returning each "
                            f"configuration's kernel (a loopy space file, docs/model.md), and "
                            f"{GUIDED} ranks them; 'perfport model measure {args.kernel} "
                            "--sizes n=...' times the one kernel")  # fmt: skip
    if guided and not loopy:
        raise PerfportError(
            f"kernel {args.kernel} cannot be model-guided: it is not a loopy kernel, so loopy "
            f"cannot count it; {GUIDED} tunes loopy-matmul, loopy-dg, loopy-fd or a .py loopy "
            f"space file (docs/model.md) (a calibration: {HOW})"
        )


def loopy_kernel(kernel: str) -> tuple[KernelSpec, SearchSpace]:
    """The spec of a loopy kernel (a built-in name or a space file) and its space (needs the
    model extra: loopy)."""
    from perfport.model.tunable import loopy_space, loopy_spec

    return loopy_spec(kernel), loopy_space(kernel)


def ranker_factory(
    args: argparse.Namespace, spec: KernelSpec, searched: SearchSpace, device: DeviceInfo
) -> Callable[[KernelSpec, Problem, Space], Ranker]:
    """The ranker builder for ``perfport.tune``: the calibration checked against ``device``,
    and the device's measurement kernels in --db (if any) as the base of every refit."""
    from perfport._core.optional import require
    from perfport.cli.model_fit import _cache_folder, load_calibration, subgroup_size
    from perfport.model import StatsCache
    from perfport.model.tunable import base_measurements, guided_ranker

    require("scipy", "model", "Model-guided search (its refits)")
    calibration = load_calibration(args.calibration, HOW)
    if calibration.device != device.name:
        raise PerfportError(
            f"--calibration {args.calibration} is for device {calibration.device!r}, not "
            f"{device.name!r} ({device.id}); give that device's calibration or make one: "
            + HOW.replace("ID", device.id)
        )
    if calibration.negative:
        _warn(f"{GUIDED}: WARNING {args.calibration} has negative costs "
              f"({', '.join(calibration.negative)}): its ranking can put a configuration at a "
              "negative time first; calibrate again with --nonnegative")  # fmt: skip
    # Counted at the device's sub-group width (a 64-wide wavefront), as calibrate counts.
    cache = StatsCache(_cache_folder(), subgroup_size=subgroup_size(None, device))
    base: list[Any] = []
    skipped: tuple[Any, ...] = ()
    if Path(args.db).is_file():  # read only: a store that is not there is not made
        base, skipped = base_measurements(args.db, device.fingerprint, calibration, cache)
    for k in skipped:
        _warn(f"{GUIDED}: refits leave out {k.line()}")
    params = len(calibration.model.parameters)
    _warn(
        f"{GUIDED}: ranked by {args.calibration} ({calibration.device}); refits calibrate on "
        + (f"its {len(base)} measurement kernels in {args.db} and the configurations measured"
           if base else
           f"the configurations measured alone ({args.db} has no measurement kernels of the "
           f"device), once they are at least the model's {params} parameters")
    )  # fmt: skip

    def uncounted(config: Mapping[str, Any], why: str) -> None:
        _warn(f"{GUIDED}: {spec.name} {dict(config)} not counted by loopy, ranked last ({why})")

    def unpredicted(config: Mapping[str, Any], why: str) -> None:
        _warn(f"{GUIDED}: {spec.name} {dict(config)} cannot be predicted, ranked last ({why})")

    def build(spec: KernelSpec, problem: Problem, space: Space) -> Ranker:
        ranker = guided_ranker(
            searched, calibration, base, dict(problem), space, cache, uncounted, unpredicted
        )
        for line in _uncovered(searched, calibration, dict(problem), space, cache):
            _warn(f"{GUIDED}: WARNING for {spec.name}, {line.replace('prediction', 'ranking')}")
        return ranker

    return build


def _uncovered(
    searched: SearchSpace, calibration: Any, problem: dict[str, Any], space: Space, cache: Any
) -> list[str]:
    """What the model leaves out of the first configuration loopy counts (counted already by
    the ranker, so the cache has it): one dtype's kernel has the same kinds of counts in
    every configuration."""
    import warnings

    from perfport.model.coverage import uncovered

    model = calibration.model
    for i in range(len(space)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # loopy's notes
                stats = cache.stats(searched.program(dict(space.config(i)))).evaluate(problem)
        except Exception:  # uncounted: the ranker said so already
            continue
        return uncovered(model.feature_set(), model.features, stats)
    return []


def _warn(text: str) -> None:
    print(f"note: {text}", file=sys.stderr, flush=True)
