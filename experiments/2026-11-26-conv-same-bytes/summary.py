"""One line per device and mask of gpu_run.sh's tune JSONs: the best configuration, its time,
GB/s and fractions of the copy ceiling and of a copy of the same bytes.

    python experiments/2026-11-26-conv-same-bytes/summary.py OUT/conv-same-bytes
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(folder: Path) -> None:
    for path in sorted(folder.glob("tune-*.json")):
        try:
            run = json.loads(path.read_text())
        except ValueError as exc:
            print(f"{path.stem}: no result ({exc})")
            continue
        best = run.get("best") or {}
        metrics = best.get("metrics") or {}
        same, ceiling = run.get("roofline_same_bytes"), run.get("roofline")
        print(
            f"{path.stem}: {run.get('measured')} measured, best {best.get('config')} "
            f"{best.get('time_ms')} ms, {metrics.get('GBps', 0):.0f} GB/s, "
            f"of the ceiling {ceiling:.3f}, of the same bytes {same:.3f}"
            if same is not None and ceiling is not None
            else f"{path.stem}: {run.get('measured')} measured, no roofline ({best})"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
