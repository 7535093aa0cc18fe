"""Registers and SASS instruction counts of perfport's stencil_cross (rows=2 vw=4, direct,
vector) against probe.py's hand-written cross, both built by nvcc for sm_90 (issue 29: why
the built-in runs 0.7-0.9 points behind). Needs nvcc and cuobjdump on PATH (the GPU machine).

    python sass.py --out DIR
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe import SOURCE, N


def builtin_source() -> str:
    from perfport import builtin
    from perfport.devices.dialect import CUDA_PRELUDE

    spec = builtin("stencil_cross")
    config = dict(wc=96, wr=4, rows=2, vw=4, variant="direct", access="vector")
    defines = spec.build_defines(spec.env(config, dict(width=N, height=N)))
    head = "".join(f"#define {k} {v}\n" for k, v in defines.items())
    return head + CUDA_PRELUDE + spec.source


def build(name: str, text: str, out: Path) -> dict[str, object]:
    cu = out / f"{name}.cu"
    cu.write_text(text)
    cubin = out / f"{name}.cubin"
    done = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", str(cubin), str(cu)],
                          capture_output=True, text=True)  # fmt: skip
    (out / f"{name}.ptxas.txt").write_text(done.stdout + done.stderr)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
    (out / f"{name}.sass").write_text(sass)
    ops = collections.Counter(
        m.group(1).split(".")[0]
        for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9.]+)", sass)
    )
    return {"ptxas": done.stderr.strip().splitlines()[-3:], "ops": dict(ops.most_common())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    mine = "#define R 2\n#define SHAPE 0\n" + SOURCE
    for name, text in (("builtin", builtin_source()), ("probe", mine)):
        result = build(name, text, args.out)
        print(name, result["ptxas"])
        print("  ", result["ops"])


if __name__ == "__main__":
    main()
