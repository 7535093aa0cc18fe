"""perfport's side and the side-by-side re-timing (README.md of this folder).

python run.py KT.json OUT.json: tunes the five examples with `perfport tune` (the CLI's
defaults, so its reported best is the re-timed winner of --confirm), then re-times perfport's
and Kernel Tuner's bests (KT.json, from kt_tune.py) in interleaved rounds, each round in a
fresh random order, with perfport's Runner (device-event times), and reports each median
with its 95% interval and whether perfport's best lies within Kernel Tuner's interval."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import perfport
from perfport._core.stats import summarize
from perfport.measure import Runner, RunSettings
from perfport.tune.tune import resolve_problem

HERE = Path(__file__).resolve().parent
EX = HERE.parents[1] / "examples" / "kernel_tuner"
SPECS = {"vector_add": "vector_add.py", "stencil": "stencil.toml", "matmul": "matmul.py",
         "convolution": "convolution.toml", "reduction": "reduction.toml"}  # fmt: skip
ROUNDS = 15


def tune(name: str, sizes: dict, db: Path) -> dict:
    problem = [f"{k}={v}" for k, v in sizes.items() if k != "budget"]
    budget = ["--strategy", "brute_force"] if sizes["budget"] is None else [
        "--strategy", "random", "--budget", str(sizes["budget"])]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "perfport", "tune", str(EX / SPECS[name]), "--problem", *problem,
         *budget, "--db", str(db), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def retime(name: str, sizes: dict, configs: dict[str, dict]) -> dict:
    spec = perfport.load_kernel(EX / SPECS[name])
    problem = resolve_problem(spec, {k: v for k, v in sizes.items() if k != "budget"})
    samples: dict[str, list[float]] = {who: [] for who in configs}
    rng = random.Random(0)
    with Runner(spec, problem, perfport.get_device(None), RunSettings()) as runner:
        for _ in range(ROUNDS):
            order = list(configs)
            rng.shuffle(order)
            for who in order:
                m = runner.measure(perfport.Config.of(configs[who]))
                assert m.ok, (name, who, m.outcome, m.message)
                samples[who] += m.times_ms
    out = {}
    for who, times in samples.items():
        s = summarize(times)
        out[who] = {"config": configs[who], "median_ms": s.median,
                    "interval_ms": [s.ci_low, s.ci_high], "n": s.n}  # fmt: skip
    pp, kt = out["perfport"], out["kernel_tuner"]
    out["ratio_pp_over_kt"] = pp["median_ms"] / kt["median_ms"]
    out["pp_within_kt_interval"] = kt["interval_ms"][0] <= pp["median_ms"] <= kt["interval_ms"][1]
    out["pp_at_most_kt_high"] = pp["median_ms"] <= kt["interval_ms"][1]
    out["intervals_overlap"] = (
        pp["interval_ms"][0] <= kt["interval_ms"][1]
        and kt["interval_ms"][0] <= pp["interval_ms"][1]
    )
    return out


def main() -> None:
    kt = json.loads(Path(sys.argv[1]).read_text())
    sizes = json.loads((HERE / "sizes.json").read_text())
    db = Path(sys.argv[2]).with_suffix(".db")
    report = {}
    for name in SPECS:
        ours = tune(name, sizes[name], db)
        configs = {"perfport": ours["best"]["config"], "kernel_tuner": kt[name]["best"]}
        report[name] = {"perfport_tune": {"best": ours["best"]["config"],
                                          "configs": ours.get("configs_total")},
                        "kt_tune": kt[name], **retime(name, sizes[name], configs)}  # fmt: skip
        r = report[name]
        print(f"{name}: perfport {configs['perfport']} {r['perfport']['median_ms']:.4g} ms "
              f"{r['perfport']['interval_ms']}, Kernel Tuner {configs['kernel_tuner']} "
              f"{r['kernel_tuner']['median_ms']:.4g} ms {r['kernel_tuner']['interval_ms']}, "
              f"ratio {r['ratio_pp_over_kt']:.3f}, within {r['pp_within_kt_interval']}, "
              f"at most KT's high end {r['pp_at_most_kt_high']}", flush=True)  # fmt: skip
    Path(sys.argv[2]).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
