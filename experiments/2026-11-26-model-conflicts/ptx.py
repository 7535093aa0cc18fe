"""Which local loads the NVIDIA OpenCL compiler issues for the prefetching application kernels:
``gen`` writes each kernel's OpenCL source (loopy, here); ``ptx`` builds them on the GPU's
NVIDIA OpenCL platform (pyopencl only) and counts the shared-memory load instructions of each
width in the PTX it returns (``program.binaries``), writing the PTX beside the counts.

    python experiments/2026-11-26-model-conflicts/ptx.py gen DIR          # no GPU
    python experiments/2026-11-26-model-conflicts/ptx.py ptx DIR OUT      # on the GPU machine
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

KERNELS = ("matmul-prefetch", "dg-prefetch-u", "dg-prefetch-dm", "dg-prefetch-dm-tr", "fd-18x18")
_SHARED = re.compile(r"\b(ld|st)\.shared(?:\.(v2|v4))?\.(\w+)")


def gen(folder: Path) -> None:
    import loopy as lp

    from perfport.model.apps import load_program

    folder.mkdir(parents=True, exist_ok=True)
    for name in KERNELS:
        code = lp.generate_code_v2(load_program(name)).device_code()
        (folder / f"{name}.cl").write_text(code)


def ptx(folder: Path, out: Path) -> None:
    import pyopencl as cl

    platform = next(p for p in cl.get_platforms() if "NVIDIA" in p.name.upper())
    ctx = cl.Context(platform.get_devices())
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for source in sorted(folder.glob("*.cl")):
        program = cl.Program(ctx, source.read_text()).build()
        text = bytes(program.binaries[0]).decode(errors="replace")
        (out / f"{source.stem}.ptx").write_text(text)
        found: dict[str, int] = {}
        for op, vec, ty in _SHARED.findall(text):
            key = f"{op}.shared{'.' + vec if vec else ''}.{ty}"
            found[key] = found.get(key, 0) + 1
        counts[source.stem] = found
    (out / "shared-ops.json").write_text(json.dumps(counts, indent=1))
    print(json.dumps(counts, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(Path(sys.argv[2]))
    else:
        ptx(Path(sys.argv[2]), Path(sys.argv[3]))
