"""Leave-one-device-out of `select portable` on every convolution_milo cache of the benchmark
hub (six GPUs, three more than ../shared/data has), k = 1, 4 and 8.

    python experiments/2026-11-27-hub-checks/portable_six.py /tmp/hub > portable_six.txt

(/tmp/hub from experiments/2026-11-27-heldout-caches/get_caches.py.)
"""

import sys
from pathlib import Path

from perfport.select.across_devices_holdout import leave_one_out, loo_markdown

GPUS = ("A100", "A4000", "A6000", "MI250X", "W6600", "W7800")
METHODS = ["portable", "most_often_best", "greedy_geomean"]

hub = Path(sys.argv[1]) / "kerneltuner-benchmark_hub" / "convolution_milo"
print(loo_markdown(leave_one_out([hub / f"{g}.json.gz" for g in GPUS], [1, 4, 8], METHODS)))
