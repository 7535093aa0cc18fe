"""Layer 7: the ``perfport`` command line, a thin layer over the Python API."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from rich.console import Console

from perfport._core import PerfportError, Value
from perfport._core.version import __version__

# perfport.select.across_devices.Method's values, spelled out so the CLI starts without importing
# the selection stack (tests/cli checks they agree).
PORTABLE_METHODS = ("portable", "greedy_geomean", "clustered", "most_often_best", "greedy_mean",
                    "maximin", "perturbed")  # fmt: skip


def parse_assignment(text: str) -> tuple[str, Value]:
    """``name=value`` with value read as bool (true/false), int, float or else string."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise PerfportError(f"--problem expects name=value, got {text!r}")
    raw = raw.strip()
    value: Value
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        try:
            value = int(raw)
        except ValueError:
            try:
                value = float(raw)
            except ValueError:
                value = raw
    return name.strip(), value


def _integer(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value}: must be at least {low}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return value


def _sizes(text: str) -> tuple[int, ...]:
    """An argparse type: comma-separated positive integers, e.g. 512,1024."""
    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give sizes like 512,1024") from None
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be positive")
    return sizes


_count, _natural = _integer(1), _integer(0)


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0-65535."""
    port = _natural(text)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0-65535)")
    return port


class _Parser(argparse.ArgumentParser):
    """Errors on one line, as every other perfport error, with where to look (argparse would
    print the whole usage first). Subcommands' parsers are of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see '{self.prog} --help'\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfport",
        description="Find the fastest launch configuration of OpenCL and CUDA kernels.",
    )
    parser.add_argument("--version", action="version", version=f"perfport {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("devices", help="list OpenCL and CUDA devices")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("kernels", help="list the built-in kernels")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("tune", help="tune a kernel and store every measurement")
    p.add_argument(
        "kernel",
        metavar="KERNEL",
        help="built-in name (see 'perfport kernels'), spec file (.py/.toml/.yaml) or stencil description (.json)",
    )
    _add_problem(p)
    p.add_argument(
        "--device", help="device id (see 'perfport devices'); default: a GPU if any, else the CPU"
    )
    p.add_argument("--strategy", help="search strategy (see 'perfport strategies')")
    p.add_argument(
        "--configs", metavar="FILE",
        help="measure exactly these configurations instead of searching: a JSON list of "
        "parameter dicts, or an object with 'configs' ('perfport select portable --json')",
    )  # fmt: skip
    p.add_argument("--budget", type=_count, help="at most this many configurations in the campaign")
    p.add_argument(
        "--max-time", type=_seconds, metavar="SECONDS", help="stop this session after this long"
    )
    p.add_argument("--db", default="perfport.db", help="results database (default: perfport.db)")
    p.add_argument(
        "--campaign", help="campaign key; the same key resumes (default: derived from the run)"
    )
    p.add_argument(
        "--build-jobs", type=_count, default=0, metavar="N",
        help="compile the builds the budget reaches ahead in N processes (fixed-order strategies, --configs)",
    )  # fmt: skip
    p.add_argument("--seed", type=_natural, default=0, help="seed for input data and the strategy")
    p.add_argument(
        "--repeats", type=_count, help="fixed number of timed launches (default: adaptive)"
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="kill a launch that runs longer than this (default 30)",
    )
    p.add_argument("--no-verify", action="store_true", help="do not check outputs")
    p.add_argument(
        "--min-work-groups", action="store_true", help="soft rule: work-groups >= compute units"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser(
        "sweep", help="measure every configuration at each of many problems (in process)"
    )
    p.add_argument("kernel", metavar="KERNEL", help="built-in name or spec file")
    p.add_argument(
        "--problems",
        required=True,
        metavar="FILE|SET",
        help="CSV with a header of problem names, or a shipped set: lawson-gemm",
    )
    p.add_argument("--device", help="device id; default: a GPU if any, else the CPU")
    p.add_argument("--db", default="perfport.db", help="results database (default: perfport.db)")
    p.add_argument(
        "--max-time", type=_seconds, metavar="SECONDS", help="start no problem after this"
    )
    p.add_argument("--first", type=_count, metavar="N", help="only the first N problems")
    p.add_argument(
        "--rounds",
        type=_count,
        default=1,
        help="measure every configuration this many times, interleaved (default 1)",
    )
    p.add_argument("--no-verify", action="store_true", help="do not check outputs")
    p.add_argument("--json", action="store_true", help="print JSON lines, one per problem")

    p = sub.add_parser("space", help="show a kernel's search space and how device limits prune it")
    p.add_argument("kernel", metavar="KERNEL")
    _add_problem(p)
    p.add_argument("--device", help="device id; default: the default device")
    p.add_argument(
        "--min-work-groups", action="store_true", help="soft rule: work-groups >= compute units"
    )
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("strategies", help="list search strategies")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser(
        "replay", help="run a strategy against stored measurements, no device needed"
    )
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--kernel", help="the kernel (name or source-hash prefix)")
    p.add_argument("--device", help="the device (fingerprint or name)")
    p.add_argument("--strategy", help="search strategy (default: the default strategy)")
    p.add_argument("--budget", type=_count, required=True, help="evaluations per run")
    p.add_argument("--repeats", type=_count, required=True, help="runs, each with its own seed")
    p.add_argument("--seed", type=_natural, default=0, help="seed of the first run")
    p.add_argument("--json", action="store_true", help="print JSON")

    wg = sub.add_parser("wg", help="work-group-size prediction (cummins2016)")
    wg_sub = wg.add_subparsers(dest="wg_command", required=True, metavar="COMMAND")
    p = wg_sub.add_parser("collect", help="measure every work-group size of many stencil scenarios")
    p.add_argument("--device", help="device id (default: the default device)")
    p.add_argument(
        "--scenarios", type=_count, default=60, help="how many scenarios (real-world first)"
    )
    p.add_argument(
        "--sizes", type=_sizes, default=(512, 1024, 2048, 4096), help="data sizes (square)"
    )
    p.add_argument(
        "--max-border",
        type=_natural,
        default=30,
        help="synthetic borders drawn from 0,1,2,3,5,10,20,30 up to this (default 30: the "
        "paper's range; 5 collects compact stencils like most real ones)",
    )
    p.add_argument(
        "--no-real-world",
        dest="real_world",
        action="store_false",
        help="synthetic scenarios only (the real-world kernels are the usual test set)",
    )
    p.add_argument("--repeats", type=_count, default=5, help="timed launches per size and round")
    p.add_argument(
        "--rounds",
        type=_count,
        default=1,
        help="measure every size this many times, interleaved in random order (default 1)",
    )
    p.add_argument(
        "--max-time", type=_seconds, metavar="SECONDS", help="start no scenario after this"
    )
    p.add_argument("--seed", type=_natural, default=0, help="seed of the synthetic scenarios")
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--json", action="store_true", help="print JSON lines, one per scenario")

    p = wg_sub.add_parser("dataset", help="write the stored stencil campaigns as a dataset (.npz)")
    p.add_argument(
        "--db", action="append", help="a store (repeat to merge several; default perfport.db)"
    )
    p.add_argument(
        "--merge",
        action="append",
        metavar="NPZ",
        help="a dataset already written (.npz) whose scenarios come first; repeatable",
    )
    p.add_argument(
        "--drop-device",
        action="append",
        metavar="DEVICE",
        help="leave out the --merge scenarios of this device label (to replace them); repeatable",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="a --db scenario that a --merge dataset has replaces its times (a re-measurement)",
    )
    p.add_argument(
        "--superseded", metavar="NPZ", help="with --replace: write the replaced rows here"
    )
    p.add_argument("--out", required=True, help="the .npz file to write")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = wg_sub.add_parser("train", help="train a predictor on a dataset and save it")
    p.add_argument("--data", required=True, help="a dataset (.npz from 'wg dataset')")
    p.add_argument(
        "--method", default="performance_forest+novel", help="see 'perfport wg evaluate --help'"
    )
    p.add_argument("--out", required=True, help="the model file to write")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = wg_sub.add_parser("predict", help="a work-group size for a stencil on a device")
    p.add_argument(
        "--kernel", required=True,
        help="a stencil kernel: built-in name, spec file or stencil description (.json)",
    )  # fmt: skip
    p.add_argument("--device", help="device id (default: the default device)")
    _add_problem(p)
    p.add_argument(
        "--model", help="a model from 'perfport wg train' (default: trained on the shipped data)"
    )
    p.add_argument("--db", default="perfport.db", help="sizes refused here before are avoided")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = wg_sub.add_parser("evaluate", help="evaluate the predictors on a work-group-size dataset")
    p.add_argument(
        "--data", help="a dataset (.npz from 'wg dataset', a runtimes.csv), or 'cummins-pilot'"
    )
    p.add_argument(
        "--methods",
        help="comma-separated methods, or 'all' (the paper's full grid, some 40 minutes); "
        "default: the default model, performance_forest+novel (see docs/wg.md)",
    )
    p.add_argument(
        "--partitions", help="comma-separated: 10-fold,synthetic-real,device,kernel,dataset"
    )
    p.add_argument(
        "--plots", metavar="DIR", help="also write the figures (oracle, refusals, violins)"
    )
    p.add_argument(
        "--by-device", action="store_true", help="also the performance per device set-up"
    )
    p.add_argument(
        "--seed", type=_natural, default=0, help="seed of the 10-fold split and of the forests"
    )
    p.add_argument("--json", action="store_true", help="print JSON")

    sel = sub.add_parser("select", help="deployable kernel subsets and runtime selectors (lawson)")
    sel_sub = sel.add_subparsers(dest="select_command", required=True, metavar="COMMAND")
    data_help = "a table (.csv.gz from 'select export') or a perfport store (.db); default: the shipped H100 GEMM data"
    p = sel_sub.add_parser(
        "evaluate", help="score normalisations x prunings x classifiers on held-out problems"
    )
    p.add_argument("--data", help=data_help)
    p.add_argument(
        "--kernels", default="4,6,8,15", metavar="K,K,...", help="set sizes (default 4,6,8,15)"
    )
    p.add_argument("--normalisations", help="comma-separated (default: all)")
    p.add_argument("--prunings", help="comma-separated (default: all)")
    p.add_argument("--classifiers", help="comma-separated (default: all)")
    p.add_argument("--seed", type=_natural, default=0, help="seed of the train/test split")
    p.add_argument("--plots", metavar="DIR", help="also write the paper's figures here")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sel_sub.add_parser("fit", help="choose k configurations and write a deployment bundle")
    p.add_argument("--data", required=True,
                   help="a table (.csv.gz from 'select export') or a perfport store (.db)")  # fmt: skip
    p.add_argument("--kernels", type=int, required=True, metavar="K", help="configurations to ship")
    p.add_argument("--out", required=True, metavar="DIR", help="the bundle directory")
    p.add_argument("--normalisation", default="relative")
    p.add_argument("--pruning", default="greedy", help="how the set is chosen (default: greedy)")
    p.add_argument("--classifier", default="decision_tree_distilled_derived",
                   help="a decision tree: decision_tree_a, _b, _c, a or b _derived, "
                   "decision_tree_regret_derived, or decision_tree_distilled_derived "
                   "(the default)")  # fmt: skip
    p.add_argument("--seed", type=_natural, default=0)
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sel_sub.add_parser("predict", help="the configuration a bundle picks for a problem")
    p.add_argument("--bundle", required=True, metavar="DIR")
    p.add_argument("--problem", nargs="+", action="extend", required=True, metavar="NAME=VALUE",
                   help="problem values, e.g. --problem M=128 N=3136 K=576")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sel_sub.add_parser("export", help="write a store's sweep results as a table (.csv.gz)")
    p.add_argument("--db", required=True)
    p.add_argument("--out", required=True, help="the .csv.gz to write")
    p.add_argument("--kernel", help="the kernel, when the store holds several")
    p.add_argument("--device", help="the device, when the store holds several")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = sel_sub.add_parser(
        "portable", help="k configurations for every GPU, from Kernel Tuner caches"
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="Kernel Tuner caches of one kernel")
    p.add_argument("--kernels", type=int, required=True, metavar="K", help="configurations to ship")
    p.add_argument("--holdout", metavar="FILE", help="choose without this device, then score it")
    p.add_argument("--method", choices=PORTABLE_METHODS, default="portable",
                   help="how the set is chosen (docs/select.md; default: portable)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("serve", help="run the work-group-size prediction daemon (HTTP, loopback)")
    p.add_argument(
        "--model", help="a model from 'perfport wg train' (default: trained on the shipped data)"
    )
    p.add_argument("--db", default="perfport.db", help="where refused sizes are stored")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    p.add_argument("--port", type=_port, default=8765)

    p = sub.add_parser("results", help="best configuration per device, kernel and problem")
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--kernel", help="only this kernel (name or source-hash prefix)")
    p.add_argument("--device", help="only this device (fingerprint or name)")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("import", help="import a Kernel Tuner cache (.json/.json.gz) or T4 file")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--device-name", help="the device, where the file does not name it")
    p.add_argument("--kernel-name", help="the kernel, where the file does not name it")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser(
        "export", help="write stored results as CSV, JSON, a Kernel Tuner cache or T4"
    )
    p.add_argument("--db", default="perfport.db")
    p.add_argument("--kernel", help="only this kernel (name or source-hash prefix)")
    p.add_argument("--device", help="only this device (fingerprint or name)")
    p.add_argument(
        "--format",
        choices=("csv", "json", "kt-cache", "t4"),
        default="csv",
        help="kt-cache and t4 hold one device/kernel/problem: narrow with --kernel/--device",
    )
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--output", "-o", help="file to write (default: standard output)")
    return parser


def _add_problem(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--problem", nargs="+", action="extend", default=[], metavar="NAME=VALUE",
        help="problem values, e.g. --problem width=1024 height=1024 dtype=double",
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    try:
        from perfport.cli import commands

        group = {"wg": "wg_command", "select": "select_command"}.get(args.command)
        command = args.command + (f"_{getattr(args, group)}" if group else "")
        handler = getattr(commands, f"cmd_{command}")
        return int(handler(args, console))
    except PerfportError as exc:
        print(f"perfport: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("perfport: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `perfport export | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a path the user gave cannot be read or written
        where = f"{exc.filename}: " if exc.filename else ""
        print(
            f"perfport: error: {where}{exc.strerror or exc}; check the path and its permissions",
            file=sys.stderr,
        )
        return 2
