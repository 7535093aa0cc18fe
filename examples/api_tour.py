"""A tour of the Python API: devices, built-in and file kernels, tuning, results, export.

python examples/api_tour.py    # writes tour.db in the current directory
"""

import io
from pathlib import Path

import perfport
from perfport.store import Store, export_rows, write_csv

# Every OpenCL and CUDA device; the default is a GPU if there is one, else PoCL's CPU device.
for device in perfport.devices():
    print(
        f"{device.id:12} {device.name} ({device.type.value}), max work-group {device.max_work_group_size}"
    )

# Tune a built-in kernel: every result is stored in tour.db as it arrives.
result = perfport.tune("stencil", problem={"width": 256, "height": 256}, budget=8, db="tour.db")
print(f"stencil: best {dict(result.best.config)} at {result.best.time_ms:.4f} ms, "
      f"{result.speedup:.2f}x over the default {dict(result.default.config)}")  # fmt: skip
print("outcomes:", {k: v for k, v in result.outcomes.items() if v})

# Tune a kernel from a spec file, exhaustively.
spec = perfport.load_kernel(Path(__file__).with_name("saxpy.toml"))
result = perfport.tune(spec, problem={"n": 1 << 16}, strategy="brute_force", db="tour.db")
print(f"saxpy: {result.measured} configurations, best {dict(result.best.config)}")

# The best configuration per device, kernel and problem, over every campaign in the database.
for best in perfport.results("tour.db"):
    print(
        f"{best.kernel:8} {best.device}: {dict(best.best)} {best.best_ms:.4f} ms (x{best.speedup:.2f})"
    )

# Every result with its samples, as CSV.
with Store("tour.db") as store:
    out = io.StringIO()
    print("exported", write_csv(export_rows(store, kernel="saxpy"), out), "saxpy results")
