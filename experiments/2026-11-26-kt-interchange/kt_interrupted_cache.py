"""Write a cache with Kernel Tuner's own functions (its header, then three entries) and leave it
open, as a killed run does; print how many entries Kernel Tuner itself reads back."""

import sys

from kernel_tuner.interface import Options
from kernel_tuner.util import process_cache, read_cache, store_cache

path = sys.argv[1]


class Runner:
    """What process_cache asks of a runner."""

    simulation_mode = False

    def get_device_info(self) -> Options:
        return Options(name="Test GPU")


kernel = Options(kernel_name="vector_add", problem_size=4096)
tuning = Options(tune_params={"block_size_x": [32, 64, 128, 256, 512]}, simulation_mode=False,
                 objective="time", cache={}, cachefile=path)  # fmt: skip
process_cache(path, kernel, tuning, Runner())
for b in (32, 64, 128):
    entry = {"block_size_x": b, "time": b / 100, "times": [b / 100] * 3, "compile_time": 1.0}
    store_cache(str(b), entry, path, tuning.cache)
print(len(read_cache(path, open_cache=False)["cache"]))
