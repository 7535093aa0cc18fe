"""The prediction daemon: answers, remembers refusals, rejects malformed requests with 4xx."""

import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import BOX_STENCIL
from perfport.store import Store

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from perfport.service.app import create_app


@pytest.fixture
def model(daemon_model):
    return daemon_model


DEVICE = {"name": "Client GPU", "type": "gpu", "compute_units": 40, "max_work_group_size": 256,
          "max_work_item_sizes": [256, 256, 64], "local_mem_bytes": 49152, "subgroup_size": 32}  # fmt: skip


def test_predict_refuse_and_predict_again(model, tmp_path):
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    assert client.get("/v1/health").json()["status"] == "ok"
    request = {"kernel": "sobel", "problem": {"width": 2048, "height": 2048}, "device": DEVICE}
    first = client.post("/v1/wg/predict", json=request)
    assert first.status_code == 200, first.text
    wg = first.json()["wg"]
    assert wg[0] * wg[1] <= 256 and first.json()["method"] == "performance_forest+novel"
    assert first.json()["novel"] is True  # a device the model has never seen
    again = client.post("/v1/wg/predict", json=request).json()  # the launcher asks again
    assert again["wg"] == wg and again["cached"] is True and first.json()["cached"] is False
    told = client.post(
        "/v1/wg/refused", json={**request, "wg": wg, "message": "CL_OUT_OF_RESOURCES"}
    )
    assert told.status_code == 200 and told.json()["stored"] is True
    second = client.post("/v1/wg/predict", json=request).json()
    assert second["wg"] != wg and second["refused_known"] == 1  # remembered, in the store
    assert second["cached"] is False  # a refusal changes the answer


def test_a_device_described_whole_is_accepted(model, tmp_path, cpu):
    """A launcher may send everything ``DeviceInfo.to_json`` says of its device (the example
    client does), the CPU's vector width and caches included."""
    whole = {k: v for k, v in cpu.to_json().items() if k not in ("id", "fingerprint")}
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    request = {"kernel": "sobel", "problem": {"width": 256, "height": 256}, "device": whole}
    answer = client.post("/v1/wg/predict", json=request)
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"kernel": "sobel"},
        {"kernel": "sobel", "device": {**DEVICE, "compute_units": -1}},
        {"kernel": "sobel", "device": {**DEVICE, "bogus": 1}},
        {"kernel": "nosuch", "device": DEVICE},
        {"kernel": "../../etc/passwd.py", "device": DEVICE},
        {"kernel": "sobel", "device": DEVICE, "problem": {"widht": 3}},
        {"kernel": "matmul", "device": DEVICE},
        {"kernel": "sobel", "device": {**DEVICE, "type": "toaster"}},
        {"kernel": "blur.json", "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "radius": 2}, "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "name": "two words"}, "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "north": 65}, "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "west": "2"}, "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "body": ""}, "device": DEVICE},
        {"kernel": {**BOX_STENCIL, "body": "return nonsense(;"}, "device": DEVICE},
        {"kernel": [1, 2], "device": DEVICE},
        {"kernel": "sobel", "device": DEVICE, "problem": {"width": "abc"}},
        {"kernel": "sobel", "device": DEVICE, "problem": {"width": 1e308}},
        {"kernel": "sobel", "device": DEVICE, "problem": {"width": 10**200}},
        {"kernel": "sobel", "device": DEVICE, "problem": {"width": -5}},
    ],
)
def test_malformed_requests_get_4xx(model, tmp_path, body):
    client = TestClient(create_app(model, tmp_path / "daemon.db"), raise_server_exceptions=False)
    answer = client.post("/v1/wg/predict", json=body)
    assert 400 <= answer.status_code < 500, answer.text
    assert answer.json()["detail"]
    bad_refusal = client.post(
        "/v1/wg/refused", json={"kernel": "sobel", "device": DEVICE, "wg": [3, 3]}
    )
    assert 400 <= bad_refusal.status_code < 500


def test_a_malformed_refusal_stores_nothing_and_errors_do_not_echo_the_input(model, tmp_path):
    db = tmp_path / "daemon.db"
    client = TestClient(create_app(model, db), raise_server_exceptions=False)
    refusal = {"kernel": "sobel", "device": DEVICE, "wg": [32, 8], "problem": {"width": "abc"}}
    assert client.post("/v1/wg/refused", json=refusal).status_code == 400
    assert not db.exists()  # nothing was stored, not even an empty store
    # A number JSON cannot hold (1e400 is infinity to the parser) and a large body: a short
    # 4xx naming the field, not a 500 and not the body echoed back.
    raw = json.dumps({"kernel": "sobel", "device": DEVICE}).replace(
        '"compute_units": 40', '"compute_units": 1e400'
    )
    answer = client.post(
        "/v1/wg/predict", content=raw, headers={"content-type": "application/json"}
    )
    assert answer.status_code == 422 and "compute_units" in answer.json()["detail"]
    big = {"kernel": "sobel", "device": {**DEVICE, "name": ["x" * 1000] * 50}}
    answer = client.post("/v1/wg/predict", json=big)
    assert answer.status_code == 422 and len(answer.text) < 3000
    huge = {"kernel": "sobel", "device": {**DEVICE, "name": ["x" * 1000] * 1000}}
    answer = client.post("/v1/wg/predict", json=huge)  # over the body limit: never parsed
    assert answer.status_code == 413 and len(answer.text) < 3000


def test_a_store_that_is_not_perfports_is_refused_at_start(model, tmp_path):
    from perfport._core import PerfportError

    other = tmp_path / "other.db"
    other.write_text("not a database")
    with pytest.raises(PerfportError, match="cannot use"):
        create_app(model, other)


def test_a_model_or_database_no_request_can_use_is_refused_at_start(model, tmp_path):
    # Both started and reported healthy; then every question was a 400 (a model trained on
    # other features) or every refusal a 503 (a database in a folder that does not exist).
    from conftest import tiny_wg_dataset
    from perfport._core import PerfportError
    from perfport.wg.model import train

    with pytest.raises(PerfportError, match=r"folder .* does not exist; create it or give another"):
        create_app(model, tmp_path / "no such folder" / "d.db")
    data = tiny_wg_dataset([(4, 4), (8, 4)], [[1.0, 2.0], [2.0, 1.0]],
                           [("d", "heat", "x"), ("d", "gol", "x")], [[1, 2], [3, 4]])  # fmt: skip
    other = tmp_path / "other.model"
    train(data, "performance_knn").save(other)
    with pytest.raises(PerfportError, match="expects other features"):
        create_app(other, tmp_path / "d.db")


def test_a_port_in_use_is_one_line_before_any_url(model, tmp_path, capsys):
    # One process printed the URL as if serving, then uvicorn's "address already in use".
    from perfport._core import PerfportError
    from perfport.service.app import serve

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            PerfportError, match=f"cannot listen on 127.0.0.1:{port} .*another --port"
        ):
            serve(model, tmp_path / "d.db", port=port, workers=1)
    assert "http://" not in capsys.readouterr().err


@contextlib.contextmanager
def serving(model, db, workers=1, pids=None):
    """``perfport serve`` in a subprocess on a free loopback port, once healthy: yields the port
    (and appends the daemon's process id to ``pids``)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "perfport", "serve", "--model", str(model), "--db",
                             str(db), "--port", str(port), "--workers", str(workers)],
                            stderr=subprocess.PIPE)  # fmt: skip
    if pids is not None:
        pids.append(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (
                    proc.stderr.read().decode()
                )
                time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def two_workers(daemon_model, tmp_path_factory):
    """One real ``perfport serve --workers 2`` for this module's tests of the process (a start
    costs seconds): (port, the daemon's process id). The test that kills its manager comes
    last; the others pass either way (the daemon starts the manager and workers again)."""
    pids: list[int] = []
    db = tmp_path_factory.mktemp("two_workers") / "daemon.db"
    with serving(daemon_model, db, workers=2, pids=pids) as port:
        yield port, pids[0]


def _proc_listening(port: int) -> list[str] | None:
    """The addresses listening on TCP ``port``, from Linux's /proc/net/tcp{,6} (no tool
    needed); None where the files do not exist."""
    tables = [Path(f"/proc/net/{name}") for name in ("tcp", "tcp6")]
    if not tables[0].is_file():
        return None
    found = []
    for table, family in zip(tables, (socket.AF_INET, socket.AF_INET6), strict=True):
        if not table.is_file():
            continue
        for line in table.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                # Each 32-bit word of the address is printed in the host's byte order.
                words = [int(address[i : i + 8], 16) for i in range(0, len(address), 8)]
                found.append(socket.inet_ntop(family, struct.pack(f"={len(words)}I", *words)))
    return found


def _ss_listening(port: int) -> list[str] | None:
    if not shutil.which("ss"):
        return None
    out = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True, check=True).stdout
    local = [line.split()[3] for line in out.splitlines() if line.split()]
    return [a.rsplit(":", 1)[0].strip("[]") for a in local if a.endswith(f":{port}")]


def test_serve_binds_loopback_by_default(two_workers):
    # No --host given (one worker binds as two do: perfport.service.workers.bind).
    port, _ = two_workers
    listening = _proc_listening(port)
    if listening is None:
        listening = _ss_listening(port)
    # A check that sees nothing must fail, not pass: no table and no ss is a failure too.
    assert listening is not None, "cannot see listening sockets: no /proc/net/tcp and no ss"
    assert listening and set(listening) == {"127.0.0.1"}, listening


def test_listening_addresses_are_read_right():
    """Both readers against a socket this test binds, on loopback and on every address."""
    for host in ("127.0.0.1", "0.0.0.0"):
        with socket.socket() as s:
            s.bind((host, 0))
            s.listen()
            port = s.getsockname()[1]
            seen = [r(port) for r in (_proc_listening, _ss_listening)]
            assert any(v is not None for v in seen)
            assert all(v == [host] for v in seen if v is not None), seen


@pytest.mark.slow
def test_example_launcher_asks_and_launches(model, tmp_path):
    own = tmp_path / "box.json"
    own.write_text(json.dumps(BOX_STENCIL))
    example = Path(__file__).parents[2] / "examples" / "wg_client.py"
    with serving(model, tmp_path / "d.db") as port:
        env = {**os.environ, "PERFPORT_DAEMON": f"http://127.0.0.1:{port}"}
        for kernel, name in (("heat", "heat"), (str(own), "box5x3")):
            done = subprocess.run([sys.executable, str(example), kernel, "96"], env=env,
                                  capture_output=True, text=True, timeout=120)  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith(f"{name} 96x96: work-group ") and ", ok, " in done.stdout


def test_kernel_spec_built_once_per_name(model, tmp_path, monkeypatch):
    # First-time questions about new problem sizes must not rebuild the kernel's spec (several
    # ms of expression parsing), the main cost of a first-time answer before.
    import perfport.service.service as app_module

    calls: list[str] = []
    real = app_module.builtin

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(app_module, "builtin", counting)
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    for width in (512, 640, 768):
        request = {"kernel": "heat", "problem": {"width": width, "height": 512}, "device": DEVICE}
        answer = client.post("/v1/wg/predict", json=request)
        assert answer.status_code == 200 and answer.json()["cached"] is False, answer.text
    assert calls == ["heat"]


def test_refusals_stored_by_another_process_count_at_once(model, tmp_path):
    # The daemon keeps its read connection open; a refusal committed through another
    # connection (another launcher, another daemon) must still change the next answer.
    from perfport import Measurement, Outcome, builtin
    from perfport._core import Backend, Config, DeviceInfo, DeviceType
    from perfport.space import PruningReport

    db = tmp_path / "daemon.db"
    client = TestClient(create_app(model, db))
    request = {"kernel": "sobel", "problem": {"width": 1024, "height": 1024}, "device": DEVICE}
    spec = builtin("sobel")
    seen = []
    # Four rounds: the daemon keeps the refused sizes it read while the store's data_version
    # stands still, so the later rounds check that another connection's write moves it.
    for round_ in range(4):
        answer = client.post("/v1/wg/predict", json=request).json()
        assert answer["wg"] not in seen and answer["refused_known"] == round_, answer
        seen.append(answer["wg"])
        # The record the daemon builds from DEVICE (so the same fingerprint).
        info = DeviceInfo(f"client:{DEVICE['name']}", Backend.OPENCL, DEVICE["name"], "",
                          DeviceType.GPU, "", "", "", 40, 256, (256, 256, 64), 49152, 0, 32)  # fmt: skip
        with Store(db) as store:
            problem = spec.problem.merged(request["problem"])
            ids = (store.device_id(info), store.kernel_id(spec), store.problem_id(problem))
            campaign = store.open_campaign(f"other-{round_}", ids, "reported", 0, {},
                                           PruningReport(0, 0, ()))  # fmt: skip
            wc, wr = answer["wg"]
            store.record(
                campaign, Measurement(Config.of(wc=wc, wr=wr), Outcome.LAUNCH_REFUSED, "x")
            )


def test_a_described_stencil_is_predicted_and_its_refusals_stored(model, tmp_path):
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    request = {"kernel": BOX_STENCIL, "problem": {"width": 1000, "height": 700}, "device": DEVICE}
    first = client.post("/v1/wg/predict", json=request)
    assert first.status_code == 200, first.text
    wg = first.json()["wg"]
    assert wg[0] * wg[1] <= 256
    told = client.post("/v1/wg/refused", json={**request, "wg": wg})
    assert told.status_code == 200 and told.json()["stored"] is True
    again = client.post("/v1/wg/predict", json=request).json()
    assert again["wg"] != wg and again["refused_known"] == 1
    # Another body is another kernel: the refusal of the first does not carry over.
    other = {**BOX_STENCIL, "body": BOX_STENCIL["body"].replace("(OUT)s", "(OUT)(s / 15)")}
    answer = client.post("/v1/wg/predict", json={**request, "kernel": other}).json()
    assert answer["refused_known"] == 0


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree in /proc")
def test_workers_share_the_port_and_agree_on_refusals(two_workers):
    # Every request on a connection of its own, so questions and refusals land on either of
    # the two workers: a refusal must be plausible (asked before) and count in both.
    port, pid = two_workers
    request = {"kernel": "heat", "problem": {"width": 1024, "height": 1024}, "device": DEVICE}

    def post(path, body):
        ask = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(ask, timeout=30) as answer:
            return json.loads(answer.read())

    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert len(children) >= 3  # two workers and the gate's manager
    seen = []
    for round_ in range(4):
        answers = [post("/v1/wg/predict", request) for _ in range(4)]
        assert all(a["refused_known"] == round_ and a["wg"] == answers[0]["wg"] for a in answers)
        assert answers[0]["wg"] not in seen
        seen.append(answers[0]["wg"])
        told = post("/v1/wg/refused", {**request, "wg": answers[0]["wg"]})
        assert told["stored"] is True


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree in /proc")
def test_a_killed_manager_is_started_again_with_the_workers(two_workers):
    # kill -9 of the gate's manager left the daemon answering 500 to every question for good.
    request = {"kernel": "heat", "problem": {"width": 512, "height": 512}, "device": DEVICE}
    port, pid = two_workers
    manager = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0]
    os.kill(int(manager), 9)
    deadline, status = time.monotonic() + 30, None
    while status != 200:
        assert time.monotonic() < deadline, "the daemon never answered again"
        time.sleep(0.2)
        ask = urllib.request.Request(f"http://127.0.0.1:{port}/v1/wg/predict",
                                     json.dumps(request).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(ask, timeout=10) as answer:
                status = answer.status
        except urllib.error.HTTPError as exc:
            assert exc.code == 503, exc.read()  # while it restarts: never a 500
        except OSError:
            pass  # between the old workers and the new


def test_a_body_not_sent_as_json_or_nested_too_deep_is_named(model, tmp_path):
    # text/plain got "body: Input should be a valid dictionary"; 5,000 nested lists got
    # "There was an error parsing the body".
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    request = json.dumps({"kernel": "sobel", "device": DEVICE})
    plain = client.post("/v1/wg/predict", content=request, headers={"Content-Type": "text/plain"})
    assert plain.status_code == 422 and "Content-Type: application/json" in plain.json()["detail"]
    deep = '{"kernel": "sobel", "device": ' + "[" * 5000 + "]" * 5000 + "}"
    for path in ("/v1/wg/predict", "/v1/wg/refused"):
        answer = client.post(path, content=deep, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400 and "nested too deeply" in answer.json()["detail"]
    assert client.get("/nowhere").status_code == 404  # other HTTP errors stay the framework's


@pytest.mark.parametrize(
    ("kernel", "detail"),
    [
        ("nope", "kernel: not a built-in stencil; give one of "),
        ({"name": "x"}, "kernel.body: Field required"),
        ({**BOX_STENCIL, "north": 65}, "kernel.north: Input should be less than or equal to 64"),
        (5, "kernel: Input should be a valid string or "),
    ],
)
def test_a_malformed_kernel_is_named_by_the_branch_it_meant(model, tmp_path, kernel, detail):
    # Pydantic reports the kernel union once per branch under internal names
    # ("function-after[_stencil_name(), str]", "Stencil"): the client gets its own field.
    client = TestClient(create_app(model, tmp_path / "daemon.db"), raise_server_exceptions=False)
    answer = client.post("/v1/wg/predict", json={"kernel": kernel, "device": DEVICE})
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(detail), answer.json()["detail"]
    assert "function-after" not in answer.json()["detail"]
    assert "Stencil" not in answer.json()["detail"]


def test_a_device_type_out_of_its_schema_is_422_naming_the_types(model, tmp_path):
    # It was a 400 ('toaster' is not a valid DeviceType), unlike every other schema violation.
    client = TestClient(create_app(model, tmp_path / "daemon.db"), raise_server_exceptions=False)
    answer = client.post(
        "/v1/wg/predict", json={"kernel": "sobel", "device": {**DEVICE, "type": "toaster"}}
    )
    assert answer.status_code == 422
    assert "device.type" in answer.json()["detail"] and "gpu" in answer.json()["detail"]


def test_a_device_with_one_work_item_limit_is_refused(model, tmp_path):
    """A 2-D stencil needs the device's work-item limit in x and y: with one given, the
    daemon answered a 2-D size against a limit it did not have."""
    client = TestClient(create_app(model, tmp_path / "daemon.db"), raise_server_exceptions=False)
    device = {**DEVICE, "max_work_item_sizes": [1024]}
    request = {"kernel": "sobel", "problem": {"width": 512, "height": 512}, "device": device}
    answer = client.post("/v1/wg/predict", json=request)
    assert answer.status_code == 422, answer.text
    assert "max_work_item_sizes" in answer.json()["detail"]
    assert "\n" not in answer.json()["detail"]


def test_an_answer_fits_the_data_and_says_what_it_replaced(model, tmp_path):
    """A 3 x 3000 stencil got a work-group many columns wide (most of each group idle), and
    no answer said when a fallback replaced the model's choice."""
    client = TestClient(create_app(model, tmp_path / "daemon.db"))
    request = {"kernel": "sobel", "problem": {"width": 2048, "height": 2048}, "device": DEVICE}
    square = client.post("/v1/wg/predict", json=request).json()
    assert square["fallback"] is None and square["wg"][0] > 4
    thin = {**request, "problem": {"width": 3, "height": 3000}}
    answer = client.post("/v1/wg/predict", json=thin).json()
    assert answer["wg"][0] == 4  # the narrowest of this model's sizes, 4 to 64 wide
    assert answer["fallback"]["reason"] == "shape"
    assert answer["fallback"]["model_wg"] == square["wg"]
