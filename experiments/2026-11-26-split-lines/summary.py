"""One line per ``perfport split`` JSON of gpu_run.sh: the plan it came from, Eq. 4's parts
against those that ran, the probes and lines, and the measured time against Algorithm 1's."""

from __future__ import annotations

import json
import pathlib
import sys


def line(name: str, o: dict) -> str:
    over = 100 * (o["measured_ms"] / o["theoretical_ms"] - 1)
    text = (
        f"{name}: {o['planned_from']}, eq4 parts {o['eq4_parts']}, ran {o['parts']}, "
        f"measured {o['measured_ms']:.3f} ms (part kernels "
        f"{', '.join(f'{t:.3f}' for t in o['part_kernel_ms'])}), theoretical "
        f"{o['theoretical_ms']:.3f} ms ({over:+.1f}%), best single {o['best_single']['device']} "
        f"{o['best_single']['time_ms']:.3f} ms, verified {o['verified']}, decision {o['decision']}"
    )
    if o["planned_from"] == "lines":
        probes = ", ".join(f"{t:.3f}" if t is not None else "-" for t in o["probe_ms"])
        fits = ", ".join(f"{a:.3f} ms + {b * 1e6:.2f} ns/el" for a, b in o["lines"])
        text += f"; probes {probes} ms; lines {fits}; predicted {o['lines_predicted_ms']:.3f} ms"
    return text


def main(out: str) -> None:
    for f in sorted(pathlib.Path(out).glob("*.json")):
        if f.name == "devices.json":
            continue
        try:
            print(line(f.stem, json.loads(f.read_text())))
        except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
            print(f"{f.stem}: no result ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main(sys.argv[1])
