"""The ordered list gpu_run.sh hands ``perfport tune --configs``: the earlier best
configuration (``access=vector vw=4 rows=2 variant=direct``) at 96x4 and 32x4 as the same-run
reference, then every march configuration with ``access=vector``, ``vw`` 4 or 8, ``rows`` 4 to
32 at 12 work-group shapes that are legal on the device at the problem, the likeliest first
(so a ``--max-time`` cut drops the least likely).

    python configs.py --device cuda:0 --problem width=4096 height=4096 --out configs.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from perfport import builtin
from perfport._core import Config, Problem
from perfport.devices import get_device
from perfport.space import kernel_space

REFERENCE_SHAPES = ((96, 4), (32, 4))
# Likeliest first: 16-byte runs before 32-byte ones; at 4096^2 rows 8 and 16 leave about two
# and one waves of work-items on an H200 (132 SMs x 2048), rows 32 half a wave.
MARCH_ORDER = ((4, 16), (4, 8), (8, 8), (4, 32), (8, 16), (4, 4), (8, 4), (8, 32))
SHAPES = tuple((wc, wr) for wr in (2, 1, 4) for wc in (64, 128, 32, 256))


def ordered(device: str, problem: dict[str, int]) -> list[dict[str, Any]]:
    spec = builtin("stencil_wide")
    space = kernel_space(spec, Problem.of(problem), get_device(device))
    wanted = [
        {"wc": wc, "wr": wr, "rows": 2, "vw": 4, "variant": "direct", "access": "vector"}
        for wc, wr in REFERENCE_SHAPES
    ] + [
        {"wc": wc, "wr": wr, "rows": rows, "vw": vw, "variant": "march", "access": "vector"}
        for vw, rows in MARCH_ORDER
        for wc, wr in SHAPES
    ]
    return [c for c in wanted if space.index(Config.of(c)) is not None]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", required=True)
    p.add_argument("--problem", nargs="+", required=True, help="width=W height=H")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    problem = {k: int(v) for k, _, v in (t.partition("=") for t in args.problem)}
    configs = ordered(args.device, problem)
    args.out.write_text(json.dumps(configs))
    print(f"{len(configs)} configurations legal on {args.device}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
