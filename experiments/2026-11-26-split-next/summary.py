"""One line per ``perfport split`` JSON of gpu_run.sh: times against theory, the CPU's
compute units, the halo path and the exchange per step."""

from __future__ import annotations

import json
import pathlib
import sys


def line(name: str, o: dict) -> str:
    text = (
        f"{name}: measured {o['measured_ms']:.3f} ms, theoretical {o['theoretical_ms']:.3f} ms "
        f"({100 * (o['measured_ms'] / o['theoretical_ms'] - 1):+.1f}%), best single "
        f"{o['best_single']['device']} {o['best_single']['time_ms']:.3f} ms, verified "
        f"{o['verified']}, decision {o['decision']}"
    )
    if o.get("chosen_ms") is not None:
        text += f", best verified split {o['chosen_ms']:.3f} ms"
    for c in o.get("cpu_parts", []):
        text += f", cpu part {c['compute_units']}/{c['of']} units"
    if "halo_path" in o:
        text += (
            f", {o['step_ms']:.3f} ms a step, exchange {o['exchange_ms']:.3f} ms "
            f"({o['halo_path']})"
        )
    return text


def main(out: str) -> None:
    for f in sorted(pathlib.Path(out).glob("*.json")):
        if f.name == "devices.json":
            continue
        try:
            print(line(f.stem, json.loads(f.read_text())))
        except (ValueError, KeyError, ZeroDivisionError) as exc:
            print(f"{f.stem}: no result ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main(sys.argv[1])
