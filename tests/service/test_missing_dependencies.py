"""What the daemon lacks to answer (llvmlite, PoCL's device, its web stack) is the server's
problem: 'perfport serve' refuses to start in one line naming perfport[serve], and a daemon
running without it says so as a 503 (health included), never a client's 400."""

import importlib
import multiprocessing
import sys

import pytest

from conftest import BOX_STENCIL
from perfport._core import DeviceError, MissingExtra
from perfport.cli import main
from perfport.kernels import builtin

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

import perfport.service.app as app_module
from perfport.service import compiler
from perfport.service.app import create_app

DEVICE = {"name": "Client GPU", "type": "gpu", "compute_units": 40, "max_work_group_size": 256,
          "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152}  # fmt: skip
FIX = "pip install 'perfport[serve]'"


def test_without_llvmlite_health_and_predict_are_503_naming_the_extra(
    daemon_model, tmp_path, monkeypatch
):
    # It started, said ok, and answered every question with a 400 asking for perfport[features].
    monkeypatch.setitem(sys.modules, "llvmlite", None)  # as if llvmlite were not installed
    client = TestClient(create_app(daemon_model, tmp_path / "d.db"))
    health = client.get("/v1/health")
    assert health.status_code == 503 and health.json()["status"] == "unavailable"
    assert (
        "'llvmlite' is not installed" in health.json()["detail"] and FIX in health.json()["detail"]
    )
    kernel = {**BOX_STENCIL, "name": "unseen", "body": "return GET(0, 0) * (OUT)3;"}
    answer = client.post("/v1/wg/predict", json={"kernel": kernel, "device": DEVICE})
    assert answer.status_code == 503 and FIX in answer.json()["detail"], answer.text


def test_a_build_without_pocl_is_the_daemons_problem(monkeypatch):
    def no_device():
        raise DeviceError("no OpenCL platform")

    # A forked child keeps these replacements: as if this host had no PoCL device.
    for module in ("perfport.devices", "perfport.features.ir"):
        monkeypatch.setattr(importlib.import_module(module), "list_devices", no_device)
    pool = compiler.CompilePool(compiler.CompileLimits(time_s=20.0))
    pool._ctx = multiprocessing.get_context("fork")
    spec = builtin("heat")
    defines = {"PERFPORT_UNSEEN": "1"}  # features no other test has counted
    with pytest.raises(MissingExtra, match=r"no PoCL CPU device.*perfport\[serve\]"):
        pool.counts(spec, defines)
    assert pool.missing is not None
    with pytest.raises(MissingExtra):  # known now: no process is started for it
        pool.counts(spec, {"PERFPORT_UNSEEN": "2"})


def test_a_one_off_device_failure_does_not_mark_the_daemon_unavailable(monkeypatch):
    """A build's DeviceError was taken for a missing installation: every later build was
    refused and health said unavailable until a restart (review)."""

    def refused(device):
        raise DeviceError("context refused under the memory limit")

    monkeypatch.setattr(importlib.import_module("perfport.devices"), "open_session", refused)
    pool = compiler.CompilePool(compiler.CompileLimits(time_s=20.0))
    pool._ctx = multiprocessing.get_context("fork")
    with pytest.raises(Exception, match="context refused") as raised:
        pool.counts(builtin("heat"), {"PERFPORT_ONE_OFF": "1"})
    assert not isinstance(raised.value, MissingExtra) and pool.missing is None


def test_a_missing_dependency_is_a_503(monkeypatch):
    status, text, _ = app_module._error(MissingExtra(f"x needs y; {FIX}"))
    assert status == 503 and FIX in text


def test_serve_refuses_to_start_without_what_compiling_needs(
    daemon_model, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(
        app_module, "probe_features", lambda limits=None: compiler.features_missing("why")
    )
    argv = ["serve", "--model", str(daemon_model), "--db", str(tmp_path / "d.db"), "--port", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and FIX in err and "http://" not in err


def test_the_probe_finds_what_this_installation_has(monkeypatch):
    pytest.importorskip("llvmlite")
    assert compiler.probe_features() is None  # PoCL and llvmlite are here
    monkeypatch.setitem(sys.modules, "llvmlite.binding", None)
    assert "'llvmlite' is not installed" in compiler.features_problem()


@pytest.mark.parametrize("module", ["fastapi", "uvicorn", "sklearn"])
def test_serve_names_its_own_extra(module, tmp_path, capsys, monkeypatch):
    # Without scikit-learn it asked for perfport[models], which does not make serve work.
    monkeypatch.setitem(sys.modules, module, None)
    assert main(["serve", "--db", str(tmp_path / "d.db"), "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'{module}'" in err and FIX in err
