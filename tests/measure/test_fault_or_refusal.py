"""A kernel fault is not a launch refusal: only the driver refusing to start a shape is
launch_refused; a fault during execution is crashed, with the driver's message and no hint
about work-group limits. The classifier is a pure function of the code and the phase, so both
backends' codes are tested here without their drivers."""

import pytest

from perfport._core import Config, LaunchError, Outcome, Problem
from perfport.devices import open_session
from perfport.devices.failures import LaunchPhase, cuda_error_code, is_refusal, normalise_code
from perfport.kernels import described_stencil
from perfport.measure import Runner, RunSettings, Timing, TrialEngine
from perfport.measure import trial as trial_module

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))
ENQUEUE, EXECUTION = LaunchPhase.ENQUEUE, LaunchPhase.EXECUTION


@pytest.mark.parametrize(
    "code",
    [
        "INVALID_WORK_GROUP_SIZE",  # pyopencl's name
        "CL_INVALID_WORK_GROUP_SIZE",
        "CL_INVALID_WORK_ITEM_SIZE",
        "CL_OUT_OF_RESOURCES",
        "cudaErrorInvalidConfiguration",
        "cudaErrorLaunchOutOfResources",
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        "CUDA_ERROR_INVALID_VALUE",
    ],
)
def test_refusals_before_execution(code):
    assert is_refusal(code, ENQUEUE)
    assert not is_refusal(code, EXECUTION)  # the same code once the kernel ran is a fault


@pytest.mark.parametrize(
    "code",
    [
        "INVALID_COMMAND_QUEUE",
        "CL_INVALID_COMMAND_QUEUE",
        "OUT_OF_HOST_MEMORY",
        "INVALID_KERNEL_ARGS",
        "cudaErrorIllegalAddress",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_LAUNCH_FAILED",
        "cudaErrorMisalignedAddress",
        "CUDARuntimeError",  # no code in the message at all
    ],
)
def test_faults_are_never_refusals(code):
    assert not is_refusal(code, ENQUEUE) and not is_refusal(code, EXECUTION)


def test_codes_of_both_apis_read_alike():
    assert normalise_code("cudaErrorLaunchOutOfResources") == "LAUNCH_OUT_OF_RESOURCES"
    assert normalise_code("CUDA_ERROR_ILLEGAL_ADDRESS") == "ILLEGAL_ADDRESS"
    assert normalise_code("CL_INVALID_WORK_GROUP_SIZE") == "INVALID_WORK_GROUP_SIZE"
    text = "cudaErrorIllegalAddress: an illegal memory access was encountered"
    assert cuda_error_code(text, "CUDARuntimeError") == "cudaErrorIllegalAddress"
    assert cuda_error_code("something else: x", "CUDARuntimeError") == "CUDARuntimeError"


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (LaunchError("INVALID_WORK_GROUP_SIZE", "clEnqueueNDRangeKernel failed"), Outcome.LAUNCH_REFUSED),
        (LaunchError("INVALID_COMMAND_QUEUE", "clFinish failed", refused=False), Outcome.CRASHED),
        (LaunchError("cudaErrorIllegalAddress", "an illegal memory access", refused=False), Outcome.CRASHED),
    ],
)  # fmt: skip
def test_the_trial_files_a_fault_as_crashed_without_the_limit_hint(
    cpu, monkeypatch, error, outcome
):
    spec = described_stencil({"name": "centre", "body": "return (OUT)GET(0, 0);"})
    engine = TrialEngine(open_session(cpu), spec, Problem.of({"width": 16, "height": 8}), QUICK)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(engine.session, "launch", fail)
    monkeypatch.setattr(trial_module, "_over_limit", lambda *a: " (per-kernel limit hint)")
    m = engine.run(Config.of(wc=8, wr=4))
    assert m.outcome is outcome and error.code in m.message
    assert ("per-kernel limit hint" in m.message) == (outcome is Outcome.LAUNCH_REFUSED)


def test_a_described_stencil_that_segfaults_the_worker_is_crashed(cpu):
    # Reading the local tile by hand, far outside it, bypasses GET's checks: the fault kills
    # the PoCL worker, and the result is the kernel's fault, not a refusal of the size.
    body = "return (OUT)tile[(long)lx << 38];"
    spec = described_stencil({"name": "wild_read", "body": body})
    problem = Problem.of({"width": 64, "height": 8})
    with Runner(spec, problem, cpu, QUICK) as runner:
        m = runner.measure(Config.of(wc=32, wr=4))
    assert m.outcome is Outcome.CRASHED, m
    assert "SIGSEGV" in m.message or "SIGBUS" in m.message or "killed" in m.message
