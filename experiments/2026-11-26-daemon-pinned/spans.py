"""Where a first-time answer's time goes, stage by stage, in one process (no HTTP, no client):
the daemon's own steps (validation, the request key, the scenario, the refused sizes, the
model, the reply's JSON) timed with perf_counter over 960 first-time questions, then the
model's steps over 400. Medians in ms; the machine's load average is printed first.

    PYTHONPATH=src python experiments/2026-11-26-daemon-pinned/spans.py
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import daemon_latency as dl
import perfport.wg.predict as wp
from perfport.cli.wg import wg_model
from perfport.features.vector import scenario_features
from perfport.service.app import _json
from perfport.service.schemas import PredictRequest
from perfport.service.service import WgService


def questions(n: int) -> list[bytes]:
    all_scenarios, out = dl.scenarios(), []
    for i in range(n):
        body = json.loads(all_scenarios[i % len(all_scenarios)].body)
        body["problem"] = {**body["problem"], "width": 4000 + 8 * i}
        out.append(json.dumps(body).encode())
    return out


def show(spans: dict[str, list[float]]) -> None:
    for name, values in spans.items():
        print(f"  {name:12} median {statistics.median(values):.3f} ms")


def daemon_steps(service: WgService) -> None:
    spans: dict[str, list[float]] = {k: [] for k in
             ("validate", "key", "scenario", "refused", "answer", "reply", "total")}  # fmt: skip
    for body in questions(960):
        t = [time.perf_counter()]
        request = PredictRequest.model_validate_json(body)
        t.append(time.perf_counter())
        key = request.model_dump_json()
        t.append(time.perf_counter())
        found = service.scenario(key, request.kernel_given(), request.problem, request.device)
        t.append(time.perf_counter())
        refused = service.refused_known(found)
        refused = service.refused(found) if refused is None else refused
        t.append(time.perf_counter())
        answer = service.answer(key, found, refused)
        t.append(time.perf_counter())
        _json({**answer.prediction.to_json(), "cached": answer.cached})
        t.append(time.perf_counter())
        for (name, values), a, b in zip(list(spans.items())[:-1], t[:-1], t[1:], strict=True):
            values.append((b - a) * 1e3)
        spans["total"].append((t[-1] - t[0]) * 1e3)
    print("the daemon's steps, per first-time question:")
    show(spans)


def model_steps(service: WgService) -> None:
    model, predictor = service.model, service.model.predictor
    names = tuple(model.feature_names)
    found = []
    for body in questions(400):
        request = PredictRequest.model_validate_json(body)
        key = request.model_dump_json()
        found.append(service.scenario(key, request.kernel_given(), request.problem, request.device))
    spans: dict[str, list[float]] = {k: [] for k in
             ("features", "legal sizes", "leaves", "neighbours", "propose", "predict_wg")}  # fmt: skip
    for f in found:
        t = [time.perf_counter()]
        x = scenario_features(f.spec, f.problem, f.device, None, names).as_array()
        t.append(time.perf_counter())
        wp._member(model.sizes, np.column_stack(f.legal))
        t.append(time.perf_counter())
        predictor.leaves(x)
        t.append(time.perf_counter())
        predictor.neighbours(x)
        t.append(time.perf_counter())
        predictor.propose(x, 1024, set())
        t.append(time.perf_counter())
        wp.predict_wg(model, f.spec, f.problem, f.device, checked=True, legal=f.legal)
        t.append(time.perf_counter())
        for (name, values), a, b in zip(spans.items(), t[:-1], t[1:], strict=True):
            values.append((b - a) * 1e3)
    print(f"the model's steps ({type(predictor).__name__}, {predictor.trees} trees, depth "
          f"{predictor.depth_}; propose includes neighbours, which includes leaves):")  # fmt: skip
    show(spans)


def main() -> None:
    print("load average", ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory() as tmp:
        service = WgService(wg_model(None), Path(tmp) / "spans.db")
        variants = {s.label: s for s in dl.scenarios()}
        for s in variants.values():  # compile each kernel once (the warm daemon's state)
            request = PredictRequest.model_validate_json(s.body)
            key = request.model_dump_json()
            service.prepare(service.scenario(key, request.kernel_given(), request.problem,
                                             request.device))  # fmt: skip
        gc.collect()
        gc.freeze()  # as perfport serve does
        daemon_steps(service)
        model_steps(service)


if __name__ == "__main__":
    main()
