"""Copy the held-out Kernel Tuner caches (and the shared ones, as relatives) out of a clone of
github.com/AutoTuningAssociation/benchmark_hub at the commit ../shared/data was taken from, in
the layout benchmarks/strategies.py reads (--data DEST):

    git clone https://github.com/AutoTuningAssociation/benchmark_hub /tmp/benchmark_hub
    python experiments/2026-11-27-heldout-caches/get_caches.py /tmp/benchmark_hub /tmp/hub
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMIT = "8eeb99e7179e6838af95d392ac6c60cebfd8c434"
UNUSED = "currently_unused/cachefiles/KernelTuner data"
MILO_GPUS = ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800")
OLD_GPUS = ("RTX_2080_Ti", "RTX_3090", "RTX_Titan")  # RTX_3060_laptop's GEMM is a partial sweep
T1 = {
    "kernels/convolution_milo.json", "kernels/dedispersion_milo.json", "kernels/gemm_milo.json",
    "currently_unused/kernels/pnpoly.json", "currently_unused/kernels/convolution.json",
}  # fmt: skip


def files() -> dict[str, str]:
    """Destination (under kerneltuner-benchmark_hub/) -> path in the repository."""
    out = {f"t1_inputs/{Path(t).name}": t for t in T1}
    for kernel in ("convolution_milo", "dedispersion_milo"):
        out |= {f"{kernel}/{g}.json.gz": f"cachefiles/{kernel}/{g}.json.gz" for g in MILO_GPUS}
    for kernel in ("gemm", "convolution", "pnpoly"):
        out |= {f"{kernel}/{g}.json.gz": f"{UNUSED}/{kernel}/{g}.json.gz" for g in OLD_GPUS}
    out |= {f"{k}/RTX_3060_laptop.json.gz": f"{UNUSED}/{k}/RTX_3060_laptop.json.gz"
            for k in ("convolution", "pnpoly")}  # fmt: skip
    return out


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: get_caches.py BENCHMARK_HUB_CLONE DEST")
    repo, dest = Path(sys.argv[1]), Path(sys.argv[2]) / "kerneltuner-benchmark_hub"
    for target, source in files().items():
        blob = subprocess.run(["git", "-C", str(repo), "show", f"{COMMIT}:{source}"],
                              capture_output=True, check=True).stdout  # fmt: skip
        (dest / target).parent.mkdir(parents=True, exist_ok=True)
        (dest / target).write_bytes(blob)
    print(f"{len(files())} files under {dest}")


if __name__ == "__main__":
    main()
