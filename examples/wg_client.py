"""A kernel launcher that asks perfport's daemon for a work-group size, as SkelCL asked
OmniTune in Cummins et al.: it sends the kernel, the problem and its device's properties, launches
the answer, and reports a refused size so that the daemon never proposes it again.

    perfport serve --model wg.model &          # a model from 'perfport wg train'
    python examples/wg_client.py sobel 2048    # kernel and size
    python examples/wg_client.py cross.json 2048   # a stencil of its own (docs/wg.md)

PERFPORT_DAEMON overrides the daemon's address (http://127.0.0.1:8765); PERFPORT_TOKEN is the
token a daemon off loopback needs for reports (``perfport serve`` prints it).
"""

import json
import os
import sys
import urllib.request
from pathlib import Path

import perfport
from perfport.kernels import described_stencil
from perfport.measure import Runner, RunSettings

DAEMON = os.environ.get("PERFPORT_DAEMON", "http://127.0.0.1:8765")
TOKEN = os.environ.get("PERFPORT_TOKEN")


def ask(path: str, body: dict) -> dict:
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = f"Bearer {TOKEN}"
    request = urllib.request.Request(DAEMON + path, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def main() -> None:
    name, size = sys.argv[1], int(sys.argv[2])
    if name.endswith(".json"):  # its own stencil: the daemon gets the description itself
        kernel = json.loads(Path(name).read_text())
        spec = described_stencil(kernel)
    else:
        kernel, spec = name, perfport.builtin(name)
    device = perfport.get_device()  # this launcher's device
    properties = {k: v for k, v in device.to_json().items() if k not in ("id", "fingerprint")}
    request = {"kernel": kernel, "problem": {"width": size, "height": size}, "device": properties}
    with Runner(spec, spec.problem.merged(request["problem"]), device, RunSettings()) as runner:
        for _ in range(5):
            wc, wr = ask("/v1/wg/predict", request)["wg"]
            result = runner.measure(perfport.Config.of(wc=wc, wr=wr))
            if result.outcome is not perfport.Outcome.LAUNCH_REFUSED:
                print(
                    f"{spec.name} {size}x{size}: work-group {wc}x{wr}, {result.outcome.value}, {result.time_ms} ms"
                )
                return
            print(f"work-group {wc}x{wr} refused ({result.message}); telling the daemon")
            ask("/v1/wg/refused", {**request, "wg": [wc, wr], "message": result.message})


if __name__ == "__main__":
    main()
