"""matmul_tiled's vector reads of the local tiles (lvw=4) against today's winner (lvw=1) and
cuBLAS SGEMM, for gpu_run.sh.

  matmul_b.py configs DIR          baseline.json (today's winner) and focus.json (lvw=4 list)
  matmul_b.py cublas M N K         cuBLAS SGEMM's median ms through CuPy, as JSON
  matmul_b.py summary DIR          DIR/summary.json from the tune reports and the cuBLAS JSON
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

NAMES = ("tile_m", "tile_n", "tile_k", "wpt_m", "wpt_n", "vw", "lvw")
# The best of 253 measured on NVIDIA OpenCL (H200, 4.640 ms): the baseline of this run.
BASELINE = (128, 128, 32, 8, 8, 4, 1)
# Ordered: the five best lvw=1 configurations with lvw=4 (those whose wpt_n allows it), then
# neighbours in tile_k, load width and tile shape. All fit 48 KiB of local memory.
FOCUS = (
    (128, 128, 32, 8, 8, 4, 4),
    (128, 128, 32, 4, 8, 4, 4),
    (128, 128, 32, 8, 4, 4, 4),
    (128, 64, 32, 8, 8, 4, 4),
    (128, 128, 16, 8, 8, 4, 4),
    (64, 128, 32, 8, 8, 4, 4),
    (128, 128, 8, 8, 8, 4, 4),
    (128, 128, 32, 8, 8, 2, 4),
    (128, 128, 16, 4, 8, 4, 4),
    (64, 64, 32, 4, 4, 4, 4),
    (64, 64, 32, 8, 4, 4, 4),
    (128, 64, 16, 8, 4, 4, 4),
)


def _config(values: tuple[int, ...]) -> dict[str, int]:
    return dict(zip(NAMES, values, strict=True))


def write_configs(out: Path) -> None:
    (out / "baseline.json").write_text(json.dumps([_config(BASELINE)]))
    (out / "focus.json").write_text(json.dumps([_config(v) for v in FOCUS]))


def cublas(m: int, n: int, k: int) -> dict[str, Any]:
    """Reuses the builtins study's CuPy timing (20 CUDA-event repeats after a warm-up)."""
    path = Path(__file__).parents[1] / "2026-11-26-builtins" / "builtins_compare.py"
    spec = importlib.util.spec_from_file_location("builtins_compare", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["builtins_compare"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    result: dict[str, Any] = module.cupy_baselines("matmul", {"M": m, "N": n, "K": k}, 20)
    return result


def _best(path: Path) -> dict[str, Any] | None:
    try:
        best = json.loads(path.read_text()).get("best")
    except (OSError, ValueError):
        return None  # the run failed or timed out: its .err file says why
    return {"ms": best["time_ms"], "config": best["config"]} if best else None


def summary(out: Path) -> dict[str, Any]:
    try:
        vendor = json.loads((out / "cublas.json").read_text())
    except (OSError, ValueError):
        vendor = {"skipped": "no cublas.json"}
    cublas_ms = vendor.get("cublas_sgemm_ms")
    devices = {}
    for base in sorted(out.glob("tune-baseline-*.json")):
        device = base.stem.removeprefix("tune-baseline-")
        row: dict[str, Any] = {
            "baseline_lvw1": _best(base),
            "best_lvw4": _best(out / f"tune-focus-{device}.json"),
        }
        found = [r["ms"] for r in (row["baseline_lvw1"], row["best_lvw4"]) if r]
        if found:
            row["best_ms"] = min(found)
        if found and cublas_ms:
            row["fraction_of_cublas"] = cublas_ms / min(found)
            row["baseline_fraction_of_cublas"] = (
                cublas_ms / row["baseline_lvw1"]["ms"] if row["baseline_lvw1"] else None
            )
        devices[device] = row
    return {"cublas": vendor, "devices": devices}


def main(argv: list[str]) -> None:
    if argv[:1] == ["configs"]:
        write_configs(Path(argv[1]))
    elif argv[:1] == ["cublas"]:
        print(json.dumps(cublas(*(int(a) for a in argv[1:4]))))
    elif argv[:1] == ["summary"]:
        result = summary(Path(argv[1]))
        (Path(argv[1]) / "summary.json").write_text(json.dumps(result, indent=1))
        print(json.dumps(result, indent=1))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
