"""``ModelRanker``: predictions from a calibration on measurement kernels, refitted with the
configurations measured, so a cost the microbenchmarks got wrong moves to the kernel's."""

from __future__ import annotations

import numpy as np
import pytest

from perfport.model import Measurement, Model

pytest.importorskip("scipy", reason="calibration needs scipy: pip install 'perfport[model]'")

MODEL = Model(
    "f_cl_wall_time",
    "p_launch * f_sync_kernel_launch + p_madd * f_op_float32_madd "
    "+ p_gload * f_mem_access_global_float32_load",
)


def _row(name: str, madds: float, loads: float, gload: float) -> tuple[dict, float]:
    f = {"f_sync_kernel_launch": 1.0, "f_op_float32_madd": madds,
         "f_mem_access_global_float32_load": loads}  # fmt: skip
    return f, 1e-5 + 1e-9 * madds + gload * loads


def test_refits_move_predictions_to_the_kernels_costs():
    from perfport.model.guided import ModelRanker

    # Microbenchmarks: loads cost 1e-9 s; in the kernel's configurations they cost 1e-10
    # (cached re-reads), so the first ranking is wrong and refitting must fix it.
    base = [Measurement(f"mk{i}", {}, *_row("mk", m, ld, 1e-9))
            for i, (m, ld) in enumerate([(1e5, 0), (1e6, 0), (0, 1e5), (0, 1e6), (1e5, 1e5)])]  # fmt: skip
    configs = [
        _row("c", m, ld, 1e-10) for m, ld in [(4e6, 1e5), (1e6, 1e7), (2e6, 5e6), (3e6, 1e6)]
    ]
    ranker = ModelRanker(MODEL, base, [f for f, _ in configs])
    truth = np.array([t for _, t in configs])
    first = ranker.predict()
    assert np.argmin(first) != np.argmin(truth)
    ranker.refit({1: truth[1] * 1e3, 2: truth[2] * 1e3})
    assert ranker.refits == 1 and np.argmin(ranker.predict()) == np.argmin(truth)
    assert ranker.calibration_.parameters["p_gload"] < 1e-9


def test_a_refit_that_cannot_calibrate_keeps_the_last_fit():
    from perfport.model.guided import ModelRanker

    base = [Measurement(f"mk{i}", {}, *_row("mk", m, ld, 1e-9))
            for i, (m, ld) in enumerate([(1e5, 0), (1e6, 0), (0, 1e5), (0, 1e6)])]  # fmt: skip
    ranker = ModelRanker(MODEL, base, [_row("c", 1e6, 1e6, 1e-9)[0]])
    before = ranker.predict()
    ranker.refit({0: float("inf")})
    assert ranker.refits == 0 and ranker.predict() == pytest.approx(before)
