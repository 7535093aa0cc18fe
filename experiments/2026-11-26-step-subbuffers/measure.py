"""Time-stepping on PoCL's two sub-devices of one CPU, one context, a stencil with no halo
along its rows (north = south = 0): sub-buffers of one parent per array against copies per
part (two contexts), 12 steps with two re-splits. Prints each run's setup, gather and move
times and the bytes the moves carried."""

from __future__ import annotations

import argparse

from perfport._core import Config
from perfport.devices import get_device, open_sessions
from perfport.kernels import builtin
from perfport.split.execute import Part
from perfport.split.steps import run_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.size
    devices = get_device("opencl:0:0.0"), get_device("opencl:0:0.1")
    spec = builtin("stencil")
    full = spec.problem.merged({"width": n, "height": n, "north": 0, "south": 0})
    config = Config.of({"wc": 32, "wr": 4})
    moves = {4: [(0, n * 5 // 8), (n * 5 // 8, n)], 8: [(0, n * 3 // 8), (n * 3 // 8, n)]}
    for _ in range(args.repeats):
        for share in (True, False):
            parts = [Part(devices[0], config, 0, n // 2), Part(devices[1], config, n // 2, n)]
            r = run_steps(spec, full, parts, spec.split[1], 12,
                          replan=lambda done: moves.get(len(done)),
                          group=lambda d, share=share: open_sessions(d, share_context=share))  # fmt: skip
            print(
                f"{r.buffers.kind:11s} setup {r.setup_ms:6.1f} ms, gather {r.gather_ms:4.1f} ms, "
                f"moves {sum(s.moved_ms for s in r.steps):5.1f} ms "
                f"({sum(s.moved_bytes for s in r.steps)} B), median step {r.step_ms:5.1f} ms"
            )


if __name__ == "__main__":
    main()
