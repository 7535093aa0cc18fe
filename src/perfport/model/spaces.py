"""The configuration spaces of the paper's application kernels, for model-guided search
(issue 24): the loopy matmul (prefetch on or off, ti x tj work-groups, k staged tk at a time),
the four DG variants at three work-group tiles and the finite-difference stencil at six
work-group sizes. ``benchmarks/model_guided.py`` replays searches over them and
``perfport tune loopy-matmul|loopy-dg|loopy-fd`` tunes them (``perfport.model.tunable``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfport._core.errors import MissingExtra
from perfport._core.spec import Param, Reference
from perfport.model.expression import DomainError
from perfport.space import Space
from perfport.space.space import Constraint

TILES = (8, 16, 32)
FD_LSIZES = (6, 10, 16, 18, 22, 30)  # lsize - 2 divides 1120
DEFAULT_SIZES = {"matmul": 256, "dg": 2048, "fd": 1120}  # PoCL on 2 cores: 20-200 ms each
# A size must divide by every tile of its space: matmul and DG by 32, FD by 560.
MULTIPLE = {"matmul": 32, "dg": 32, "fd": 560}


@dataclass(frozen=True)
class SearchSpace:
    """One application's configurations, how to build each, the size it is timed at, the
    rule a configuration must meet at a problem (an expression over both), the numpy
    reference its output is checked against (``reference(problem, inputs) -> outputs``; None:
    not verified), and the problem values besides the sizes (``options``, defaults: DG's
    ``layout``), which only ``fits`` and the reference see; loopy's programs take the sizes."""

    name: str
    space: Space
    program: Callable[[dict[str, Any]], Any]
    sizes: dict[str, int]
    fits: str = "True"
    reference: Reference | None = None
    options: dict[str, str] = field(default_factory=dict)

    def label(self, config: Mapping[str, Any]) -> str:
        return f"guided-{self.name}-" + "-".join(f"{k}{v}" for k, v in sorted(config.items()))

    def configs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The first ``limit`` configurations (all when None), in the space's order."""
        count = len(self.space) if limit is None else min(limit, len(self.space))
        return [dict(self.space.config(i)) for i in range(count)]


def _matmul(config: dict[str, Any]) -> Any:
    from perfport.model.apps import matmul

    return matmul(bool(config["prefetch"]), config["ti"], tile_j=config["tj"], tile_k=config["tk"])


def _dg(config: dict[str, Any]) -> Any:
    from perfport.model.paper_kernels import dg_diff

    return dg_diff(config["variant"], tile=config["tile"])


def _fd(config: dict[str, Any]) -> Any:
    from perfport.model.paper_kernels import finite_diff

    return finite_diff(config["lsize"])


def spaces(sizes: Mapping[str, int] | None = None) -> list[SearchSpace]:
    """The three spaces at ``sizes`` ({space: size}; DEFAULT_SIZES where not given)."""
    size = {**DEFAULT_SIZES, **(sizes or {})}
    from perfport.model.paper_kernels import DG_LAYOUTS, DG_VARIANTS

    matmul = Space(
        [Param("prefetch", (0, 1)), Param("ti", TILES), Param("tj", TILES), Param("tk", TILES)],
        [Constraint.of("prefetch == 1 or tk == 8")],
    )
    dg = Space([Param("variant", DG_VARIANTS), Param("tile", TILES)])
    fd = Space([Param("lsize", FD_LSIZES)])
    return [
        SearchSpace("matmul", matmul, _matmul, {"n": size["matmul"]},
                    "n % ti == 0 and n % tj == 0 and (prefetch == 0 or n % tk == 0)"),
        # The layout is the problem's, not the configuration's, because a reference sees only
        # (problem, inputs): at each layout only the variants storing u and res so are legal.
        SearchSpace("dg", dg, _dg, {"nelements": size["dg"]},
                    "nelements % tile == 0 and layout == ('element-fastest' if variant == "
                    "'prefetch-dm-tr' else 'node-fastest')", options={"layout": DG_LAYOUTS[0]}),
        SearchSpace("fd", fd, _fd, {"n": size["fd"]}, "n % (lsize - 2) == 0"),
    ]  # fmt: skip


def config_features(
    s: SearchSpace,
    configs: Sequence[Mapping[str, Any]],
    sizes: Mapping[str, int],
    inputs: Callable[[Any], dict[str, float]],
    cache: Any,
    uncounted: Callable[[Mapping[str, Any], str], None] | None = None,
    unpredicted: Callable[[Mapping[str, Any], str], None] | None = None,
) -> list[dict[str, float] | None]:
    """Each configuration's model inputs (``inputs`` of its statistics evaluated at
    ``sizes``); None where loopy cannot count it (``uncounted`` is told the configuration
    and why) or a feature of the model divides by 0 for it (``unpredicted`` is told), so the
    model ranks it last and the search still runs."""
    out: list[dict[str, float] | None] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loopy's notes on counts and schedules
        for c in configs:
            try:
                evaluated = cache.stats(s.program(dict(c))).evaluate(dict(sizes))
            except MissingExtra:
                raise
            except Exception as exc:  # loopy and islpy raise bare errors of many kinds
                if uncounted is not None:
                    first = str(exc).splitlines()[0] if str(exc) else ""
                    uncounted(c, f"{type(exc).__name__}: {first}")
                out.append(None)
                continue
            # Outside the try: a model's own error (an unknown feature) is not "uncounted".
            try:
                out.append(inputs(evaluated))
            except DomainError as exc:  # 0 for this configuration alone: the others rank
                if unpredicted is not None:
                    unpredicted(c, str(exc))
                out.append(None)
    return out
