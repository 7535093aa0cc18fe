"""Which training scenarios the default model's novelty test compares a scenario with: the
shipped dataset's scenarios grouped by their exact device features (the test's key), with the
device labels and kernels in each group. Writes novel_backends.json beside this script.

    python experiments/2026-11-26-described-stencils/novel_backends.py
"""

from __future__ import annotations

import json
from collections import defaultdict
from importlib import resources
from pathlib import Path

import numpy as np

from perfport.wg.dataset import load_dataset


def groups() -> list[dict[str, object]]:
    path = resources.files("perfport.datasets") / "wg" / "stencils.npz"
    data = load_dataset(str(path))
    names = list(data.feature_names)
    columns = [i for i, n in enumerate(names) if n.startswith("device_")]
    rows: dict[tuple[float, ...], list[int]] = defaultdict(list)
    for i, row in enumerate(np.asarray(data.features)[:, columns]):
        rows[tuple(float(v) for v in row)].append(i)
    return [
        {
            "device_features": {names[c]: v for c, v in zip(columns, key, strict=True)},
            "local_mem_bytes": round(2 ** key[columns.index(names.index("device_log2_local_mem"))]),
            "scenarios": len(members),
            "devices": sorted({str(data.device[i]) for i in members}),
            "kernels": len({str(data.kernel[i]) for i in members}),
        }
        for key, members in rows.items()
    ]


if __name__ == "__main__":
    out = {"groups": groups()}
    (Path(__file__).parent / "novel_backends.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
