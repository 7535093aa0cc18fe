"""Dispatcher on CUDA: a kernel whose __launch_bounds__(256) makes the driver refuse blocks of
512 and 1024 threads; a bundle that picks 1024 (ranked 1024, 512, 128) must fall back to 128
with one warning per refusal, and give correct outputs."""
import sys
import warnings
from pathlib import Path

import numpy as np

from perfport.select.bundle import TRAIN_PERFORMANCE, write_bundle
from perfport.select.dispatch import Dispatcher
from perfport.select.tree import SelectorTree

here = Path(__file__).parent
out = Path(sys.argv[1]) / "bundle"
configs = [{"wg": 128}, {"wg": 512}, {"wg": 1024}]
write_bundle(out, "scale_bounded", ("wg",), configs, ("n",), SelectorTree.constant(("n",), 2),
             metadata={TRAIN_PERFORMANCE: [0.5, 0.9, 1.0]})
x = np.arange(100000, dtype=np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with Dispatcher(out, device="cuda:0", spec=here / "scale.toml") as d:
        y = d.run({"n": 100000}, {"x": x})["y"]
        ok1 = np.allclose(y, 3 * x)
        y2 = d.run({"n": 100000}, {"x": x})["y"]
        ok2 = np.allclose(y2, 3 * x)
        print("choose (static):", dict(d.choose({"n": 100000})), "builds:", d.builds)
for w in caught:
    print("warning:", w.category.__name__, str(w.message)[:300])
print("outputs correct:", ok1, ok2, "warnings:", len(caught))
