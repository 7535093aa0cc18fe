"""Layer 5: splitting one NDRange across devices (Erdem et al. 2018).

``pruning``: each device's legal configurations and those legal on all of them (Tables 1-2);
``plan``: split factors (Eq. 4), whole work-groups per device (Eqs. 5-9), the theoretical
time (Algorithm 1); ``execute``: the parts run concurrently, a queue per device;
``subbuffers``: CPU devices of one OpenCL context share sub-buffers of one parent per array;
``probe``: the first split planned from each device's overhead + cost line (``--plan
lines``); ``split``: what ``perfport split`` does, end to end. A kernel splits as its KernelSpec's
``split`` declares (``perfport._core.splitting``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfport._core.lazy import lazy_exports

if TYPE_CHECKING:
    from perfport.split.execute import Part, run_parts
    from perfport.split.plan import SplitPlan, plan_split
    from perfport.split.probe import plan_from_lines, probe_plan
    from perfport.split.rebalance import device_line
    from perfport.split.reserve import cpu_opening
    from perfport.split.split import split_run
    from perfport.split.stepping import split_steps
    from perfport.split.steps import run_steps
    from perfport.split.times import roofline_ms

# What docs/split.md presents as the Python API, imported on first use: importing the package
# stays free of pyopencl and numpy until a name is asked for.
_EXPORTS = {
    "Part": "perfport.split.execute",
    "SplitPlan": "perfport.split.plan",
    "cpu_opening": "perfport.split.reserve",
    "device_line": "perfport.split.rebalance",
    "plan_from_lines": "perfport.split.probe",
    "plan_split": "perfport.split.plan",
    "probe_plan": "perfport.split.probe",
    "roofline_ms": "perfport.split.times",
    "run_parts": "perfport.split.execute",
    "run_steps": "perfport.split.steps",
    "split_run": "perfport.split.split",
    "split_steps": "perfport.split.stepping",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "Part",
    "SplitPlan",
    "cpu_opening",
    "device_line",
    "plan_from_lines",
    "plan_split",
    "probe_plan",
    "roofline_ms",
    "run_parts",
    "run_steps",
    "split_run",
    "split_steps",
]
