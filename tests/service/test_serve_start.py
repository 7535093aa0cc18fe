"""What 'perfport serve' prints as it starts: one line for a --host or --port it cannot use,
and the URL it really listens on."""

import re

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
import uvicorn

import perfport.service.app as app_module
from perfport.cli import main


@pytest.fixture
def no_probe(monkeypatch):
    monkeypatch.setattr(app_module, "probe_features", lambda limits=None: None)


def test_an_unresolvable_host_is_one_line_before_any_token(
    daemon_model, tmp_path, capsys, no_probe
):
    # The generated token was printed, then "Name or service not known; check the path and
    # its permissions".
    argv = ["serve", "--model", str(daemon_model), "--db", str(tmp_path / "d.db"),
            "--host", "no-such-host.invalid", "--port", "1"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--host 'no-such-host.invalid'" in err, err
    assert "Bearer" not in err and "path and its permissions" not in err


def test_port_0_prints_the_port_the_system_chose(
    daemon_model, tmp_path, capsys, monkeypatch, no_probe
):
    # It printed http://127.0.0.1:0/v1/health.
    bound = []

    def run(self, sockets=None):
        bound.extend(sockets)

    monkeypatch.setattr(uvicorn.Server, "run", run)
    app_module.serve(daemon_model, tmp_path / "d.db", port=0, workers=1)
    port = bound[0].getsockname()[1]
    bound[0].close()
    printed = re.search(r"http://127\.0\.0\.1:(\d+)/v1/health", capsys.readouterr().err)
    assert printed and int(printed.group(1)) == port != 0


def test_health_answers_head(daemon_model, tmp_path):
    # A HEAD probe got 405 Method Not Allowed.
    from fastapi.testclient import TestClient

    client = TestClient(app_module.create_app(daemon_model, tmp_path / "d.db"))
    answer = client.head("/v1/health")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"


@pytest.mark.parametrize("path", ["/v1/wg/predict", "/v1/wg/refused"])
def test_a_body_that_is_not_utf8_is_named(daemon_model, tmp_path, path):
    # It was 400 "There was an error parsing the body".
    from fastapi.testclient import TestClient

    client = TestClient(app_module.create_app(daemon_model, tmp_path / "d.db"))
    body = b'{"kernel": "sob\xffel", "device": {}}'
    answer = client.post(path, content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == (
        "body: not valid UTF-8 (at byte offset 15); send JSON encoded as UTF-8"
    )
