"""Schemathesis against the daemon's published OpenAPI schema: whatever it generates, valid or
not, gets no 5xx, and every answer's status, content type and body match the schema."""

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("schemathesis")
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from perfport.service.app import create_app

TOKEN = "schemathesis-token-0123456789"


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]  # fmt: skip


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize(
    ("path", "method"),
    [("/v1/wg/predict", "POST"), ("/v1/wg/refused", "POST"), ("/v1/health", "GET")],
)
def test_every_generated_request_gets_a_documented_answer(
    daemon_model, tmp_path, path, method, mode
):
    app = create_app(daemon_model, tmp_path / "fuzz.db", token=TOKEN)
    operation = schemathesis.openapi.from_asgi("/openapi.json", app)[path][method]
    if mode is GenerationMode.NEGATIVE and path == "/v1/health":
        pytest.skip("GET /v1/health takes no input to get wrong")
    headers = {"Authorization": f"Bearer {TOKEN}"} if path == "/v1/wg/refused" else {}

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def answered(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    answered()
