"""A tiled matrix transpose as a loopy kernel with a configuration space, for
``perfport tune examples/loopy_transpose.py`` (any strategy; ``--strategy model_guided
--calibration FILE`` ranks the configurations by a calibrated model). docs/model.md, "Your
own loopy kernel", describes each name this file defines.

Each work-group moves a wg_x x wg_y tile of ``a``. Unstaged, its work-items read ``a``
along rows (``coalesce="read"``: the writes stride by n) or write ``out`` along rows
(``"write"``: the reads do); staged, the tile goes through local memory, so both are along
rows, at the cost of a barrier.
"""

import loopy as lp
import numpy as np

params = {"staged": [0, 1], "coalesce": ["read", "write"], "wg_x": [16, 32], "wg_y": [4, 8]}
# Staged, the local tile fixes both directions: coalesce has nothing left to choose.
constraints = ["staged == 0 or coalesce == 'write'"]
sizes = {"n": 1024}  # perfport tune ... --problem n=2048
fits = "n % wg_x == 0 and n % wg_y == 0"  # whole tiles: no work-item idles at the edge


def program(config):
    knl = lp.make_kernel(
        "{[i, j]: 0 <= i, j < n}",
        "out[j, i] = a[i, j]",
        [
            lp.GlobalArg("a", np.float32, shape=("n", "n")),
            lp.GlobalArg("out", np.float32, shape=("n", "n")),
            lp.ValueArg("n", np.int32),
        ],
        assumptions="n >= 1",
        lang_version=(2018, 2),
    )
    wg_x, wg_y = config["wg_x"], config["wg_y"]
    if config["staged"]:
        # Work-items along i write out's rows; the fetch of a's tile reads a's rows.
        knl = lp.split_iname(knl, "i", wg_x, outer_tag="g.0", inner_tag="l.0")
        knl = lp.split_iname(knl, "j", wg_y, outer_tag="g.1", inner_tag="l.1")
        return lp.add_prefetch(knl, "a", ["i_inner", "j_inner"],
                               fetch_outer_inames="i_outer,j_outer", default_tag="l.auto")  # fmt: skip
    fast, slow = ("j", "i") if config["coalesce"] == "read" else ("i", "j")
    knl = lp.split_iname(knl, fast, wg_x, outer_tag="g.0", inner_tag="l.0")
    return lp.split_iname(knl, slow, wg_y, outer_tag="g.1", inner_tag="l.1")


def reference(problem, inputs):
    n = int(problem["n"])
    return {"out": inputs["a"].reshape(n, n).T.reshape(-1)}
