"""A worker killed from outside (kill -9, the OOM killer) is not the kernel crashing: the trial
is measured again on a fresh worker, a bounded number of times."""

from __future__ import annotations

import os
import signal

from perfport import builtin
from perfport._core import Outcome
from perfport.measure import Runner, RunSettings, Timing
from perfport.measure import runner as runner_module

QUICK = RunSettings(timing=Timing.fixed(1, warmup=0))


def _kill_worker(runner: Runner) -> None:
    proc = runner._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def test_a_trial_whose_worker_was_killed_is_measured_again(cpu):
    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 4096})
    config = spec.default
    assert config is not None
    with Runner(spec, problem, cpu, QUICK) as runner:
        assert runner.measure(config).ok
        _kill_worker(runner)
        again = runner.measure(config)
    assert again.ok, again


def test_a_worker_killed_at_every_try_is_crashed_in_the_end(cpu, monkeypatch):
    spec = builtin("vector_add")
    problem = spec.problem.merged({"n": 4096})
    config = spec.default
    assert config is not None
    tries = []
    real = Runner._trial

    def killed_first(self, *args, **kwargs):  # the worker is killed before each trial
        tries.append(1)
        _kill_worker(self)
        return real(self, *args, **kwargs)

    with Runner(spec, problem, cpu, QUICK) as runner:
        assert runner.measure(config).ok
        monkeypatch.setattr(Runner, "_trial", killed_first)
        m = runner.measure(config)
    assert m.outcome is Outcome.CRASHED and m.message == runner_module.KILLED
    assert len(tries) == runner_module.KILLED_RETRIES
