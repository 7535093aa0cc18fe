"""The generated selectors check the kernel's restrictions as perfport does: C's
``NAME_legal``/``NAME_select_legal`` (compiled with gcc) and Python's ``legal``/
``select_legal`` answer what ``Legality`` and ``legal_choice`` answer without a device."""

from __future__ import annotations

import ctypes
import json
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from conftest import compile_shared
from perfport._core import KernelSpec, Param
from perfport.select import SelectError
from perfport.select.bundle import TRAIN_PERFORMANCE, load_bundle, write_bundle
from perfport.select.legality import Legality, legal_choice
from perfport.select.tree import SelectorTree

tree_module = pytest.importorskip("sklearn.tree", reason="scikit-learn (the models extra)")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

FEATURES = ("K", "M", "N", "alpha")  # alpha: fractional, a double in C
RESTRICTIONS = [
    "K % TS == 0",
    "M // WPT >= TS",
    "round_up(N, WG) <= 2 * N",
    "(K % 8 == 0) if TS > 4 else (K > -30 or M < 0)",  # a conditional on a parameter
    "1 <= WPT <= M + 100 < 10000",  # a chained comparison
    "alpha * TS <= 64.0",
    "alpha / (K - 32) < 40",  # a zero divisor at K = 32: illegal there
    "K == 16 or ceil_div(M, K - 16) >= -100",  # guarded by 'or'
    "tiles * WPT >= M",  # a derived value that reads an input
    "per >= -1000",  # one that divides by zero at K = 64
    "log2(alpha + 1) < 6 or sqrt(M) >= 0",  # raise for alpha <= -1, M < 0
    "is_pow2(K) or K % 3 == 0 or TS <= 2",
    "(M or 64) >= max(TS, -5) - 40",  # 'or' gives the operand that decides
    "alpha ** 2 < 1000 and alpha // 0.25 != 3 and alpha % 0.5 != 0.25",
    "(K << 1) > 0 or K <= 0",
    "K >= alpha - 10",  # an exact mixed comparison
    "dtype in ('float', 'double')",  # decided at generation time
]
SPEC = KernelSpec(
    name="toy", source="__kernel void toy() {}", entry="toy",
    params=[Param("TS", (1, 2, 4, 8)), Param("WPT", (1, 4)), Param("WG", (1, 8))],
    global_size=["N", "round_up(M, WG)"], local_size=["WG", "WG"],
    problem={"K": 64, "M": 64, "N": 64, "alpha": 1.5, "dtype": "float"},
    restrictions=RESTRICTIONS, derived={"tiles": "ceil_div(M, WPT)", "per": "N // (K - 64)"},
)  # fmt: skip
CONFIGS = [{"TS": t, "WPT": w, "WG": g} for t in (1, 2, 4, 8) for w in (1, 4) for g in (1, 8)]


def random_problems(rng: np.random.Generator, n: int) -> list[dict[str, float]]:
    """Sizes of either sign, the zero divisors and the edges the rules have."""
    out = []
    for _ in range(n):
        k = int(rng.choice([rng.integers(-40, 300), 8 * rng.integers(1, 40), 16, 32, 64, 0, -1]))
        n = int(rng.choice([rng.integers(-20, 300), 8 * rng.integers(1, 40)]))
        alpha = rng.choice([rng.integers(-8, 40) / 4, 0.0, -0.5, -1.0, 0.75, 1e300, rng.normal()])
        out.append({"K": k, "M": int(rng.integers(-20, 300)), "N": n, "alpha": float(alpha)})
    return out


def toy_bundle(tmp_path: Path, spec: KernelSpec | None = SPEC) -> Path:
    """A bundle whose tree picks among all 16 configurations by region (random labels)."""
    rng = np.random.default_rng(0)
    rows = np.clip([list(p.values()) for p in random_problems(rng, 400)], -1e6, 1e6)
    labels = rng.integers(0, len(CONFIGS), len(rows))
    model = tree_module.DecisionTreeClassifier(max_depth=6, random_state=0).fit(rows, labels)
    scores = [float(s) for s in rng.random(len(CONFIGS))]
    out = tmp_path / "bundle"
    write_bundle(out, "toy", ("TS", "WPT", "WG"), CONFIGS, FEATURES,
                 _tree(model), metadata={TRAIN_PERFORMANCE: scores},
                 real_features=["alpha"], spec=spec)  # fmt: skip
    return out


def _tree(model: object) -> SelectorTree:
    return SelectorTree.from_sklearn(model, FEATURES)


def python_selector(bundle: Path) -> types.ModuleType:
    module = types.ModuleType("generated_selector")
    code = (bundle / "selector.py").read_text()
    exec(compile(code, "selector.py", "exec"), module.__dict__)
    return module


def c_selector(bundle: Path) -> ctypes.CDLL:
    dll = compile_shared(bundle / "selector.c", bundle / "libselector.so")
    inputs = [ctypes.c_long] * 3 + [ctypes.c_double]
    dll.toy_legal.argtypes = [ctypes.c_int, *inputs]
    dll.toy_select_legal.argtypes = inputs
    dll.toy_select.argtypes = inputs
    return dll


class RememberedLegality(Legality):
    """Legality that answers each (configuration, problem) once: legal_choice asks again
    what the test has just asked for every configuration (5 ms an answer)."""

    def __init__(self, spec: KernelSpec) -> None:
        super().__init__(spec)
        self._answers: dict[tuple, str] = {}

    def reason(self, config, problem) -> str:
        key = (tuple(config.items()), tuple(problem.items()))
        if key not in self._answers:
            self._answers[key] = super().reason(config, problem)
        return self._answers[key]


def expected(bundle, legality: Legality, problem: dict[str, float]) -> int:
    try:
        return legal_choice(bundle, legality, {**dict(SPEC.problem), **problem}).index
    except SelectError:
        return -1


@needs_gcc
def test_c_and_python_check_the_rules_as_legality_does(tmp_path):
    path = toy_bundle(tmp_path)
    bundle, legality = load_bundle(path), RememberedLegality(SPEC)
    assert bundle.unchecked_rules == ()
    dll, module = c_selector(path), python_selector(path)
    picks = {"legal": 0, "fell back": 0, "none": 0}
    for problem in random_problems(np.random.default_rng(1), 300):
        args = list(problem.values())
        full = {**dict(SPEC.problem), **problem}
        for j, config in enumerate(bundle.configs):
            holds = not legality.reason(config, full)
            assert dll.toy_legal(j, *args) == holds, (j, problem)
            assert module.legal(j, **problem) is holds, (j, problem)
        want = expected(bundle, legality, problem)
        assert dll.toy_select_legal(*args) == want == module.select_legal(**problem), problem
        assert dll.toy_select(*args) == bundle.choose(problem) == module.select(**problem)
        kind = "none" if want < 0 else "legal" if want == bundle.choose(problem) else "fell back"
        picks[kind] += 1
    assert min(picks.values()) >= 20, picks  # each way of answering was met


@needs_gcc
def test_a_float_power_past_256_is_checked_as_legality_does(tmp_path):
    """A float power's exponent is not capped (1.5 ** 300 is a float); one that overflows
    fails, as Python's does. The generators refused every exponent past 256."""
    rules = ["alpha ** (TS * 100) < 1e300", "2 ** -(TS * 100) > 0"]
    spec = KernelSpec(name="toy", source=SPEC.source, entry="toy", params=SPEC.params,
                      global_size=["N"], local_size=["1"], problem=dict(SPEC.problem),
                      restrictions=rules)  # fmt: skip
    path = toy_bundle(tmp_path, spec)
    assert load_bundle(path).unchecked_rules == ()
    dll, module, legality = c_selector(path), python_selector(path), Legality(spec)
    seen = set()
    for problem in [*random_problems(np.random.default_rng(2), 100), {"alpha": 3.0}]:
        problem = {"K": 64, "M": 64, "N": 64, **problem}
        for j, config in enumerate(CONFIGS):
            holds = not legality.reason(config, {**dict(spec.problem), **problem})
            assert dll.toy_legal(j, *problem.values()) == holds, (j, problem)
            assert module.legal(j, **problem) is holds, (j, problem)
            seen.add(holds)
    assert seen == {True, False}
    ts = {c["TS"]: j for j, c in enumerate(CONFIGS)}
    problem = {"K": 64, "M": 64, "N": 64, "alpha": 3.0}
    assert module.legal(ts[4], **problem) and dll.toy_legal(ts[4], *problem.values())  # 3.0**400
    assert not module.legal(ts[8], **problem)  # 3.0 ** 800 overflows


def test_the_generated_files_say_what_they_check(tmp_path):
    path = toy_bundle(tmp_path)
    header = (path / "selector.h").read_text()
    assert "int toy_legal(int index, long K, long M, long N, double alpha);" in header
    assert "int toy_select_legal(long K, long M, long N, double alpha);" in header
    assert "Every rule of the kernel is checked." in (path / "selector.c").read_text()
    assert "wraps past 2^63" in header


def test_a_rule_c_cannot_state_is_left_unchecked_and_listed(tmp_path):
    mixed = "(K if K > 0 else 0.5) * TS > 0"  # an int or a float, by the input
    spec = KernelSpec(name="toy", source=SPEC.source, entry="toy", params=SPEC.params,
                      global_size=["N"], local_size=["1"], problem=dict(SPEC.problem),
                      restrictions=["K % TS == 0", mixed])  # fmt: skip
    path = toy_bundle(tmp_path, spec)
    unchecked = load_bundle(path).unchecked_rules
    assert len(unchecked) == 1 and unchecked[0].startswith(mixed)
    for name in ("selector.c", "selector.h", "selector.py"):
        assert "NOT checked" in (path / name).read_text() and mixed in (path / name).read_text()
    module = python_selector(path)
    j = next(i for i, c in enumerate(CONFIGS) if c["TS"] == 4)
    assert module.legal(j, K=-4, M=1, N=1, alpha=0.0)  # the mixed rule fails here, unchecked
    assert not module.legal(j, K=6, M=1, N=1, alpha=0.0)  # K % TS == 0 is checked


def test_a_kernel_of_unknown_spec_checks_nothing_and_says_so(tmp_path):
    path = toy_bundle(tmp_path, spec=None)
    assert "spec is unknown" in load_bundle(path).unchecked_rules[0]
    assert "spec is unknown" in (path / "selector.h").read_text()
    module = python_selector(path)
    problem = {"K": 32, "M": -5, "N": 0, "alpha": 0.0}
    assert module.select_legal(**problem) == module.select(**problem)


@needs_gcc
def test_the_builtin_matmul_bundle_checks_its_rules(tmp_path):
    configs = [
        {"row_tile": 1, "acc_tile": 2, "col_tile": 4, "wg_rows": 8, "wg_cols": 8},
        {"row_tile": 4, "acc_tile": 4, "col_tile": 4, "wg_rows": 16, "wg_cols": 3},  # forbidden
    ]
    features = ("M", "N", "K", "batch", "trans_a", "trans_b")
    tree = SelectorTree.constant(features, 1)
    path = tmp_path / "gemm"
    write_bundle(path, "matmul", tuple(configs[0]), configs, features, tree)
    assert load_bundle(path).unchecked_rules == ()
    assert "case 1: /* never: (wg_rows, wg_cols) in" in (path / "selector.c").read_text()
    dll = compile_shared(path / "selector.c", path / "lib.so")
    dll.matmul_select_legal.argtypes = [ctypes.c_long] * 6
    assert dll.matmul_select_legal(64, 64, 64, 1, 0, 0) == 0  # the pick is never legal
    assert python_selector(path).select_legal(M=64, N=64, K=64, batch=1, trans_a=0, trans_b=0) == 0


TOML = """name = "toy"
entry = "toy"
source_file = "toy.cl"
global_size = ["K"]
local_size = ["1"]
restrictions = ["K % TS == 0", "(K if K > 0 else 0.5) > 0"]
default = { TS = 1 }
params = [{ name = "TS", values = [1, 2] }]

[problem]
K = 64
"""


def test_select_fit_names_the_unchecked_rules(tmp_path, capsys):
    from perfport.cli import main
    from perfport.select.table import PerfTable
    from perfport.select.table_file import save_csv

    (tmp_path / "toy.cl").write_text(SPEC.source)
    (tmp_path / "toy.toml").write_text(TOML)
    times = np.array([[1.0, 2.0], [2.0, 1.0]])
    save_csv(PerfTable(("K",), np.array([[8.0], [16.0]]), ("TS",), ((1,), (2,)), times,
                       "GPU", "toy"), tmp_path / "t.csv.gz")  # fmt: skip
    argv = ["select", "fit", "--data", str(tmp_path / "t.csv.gz"), "--kernels", "2", "--out",
            str(tmp_path / "b"), "--spec", str(tmp_path / "toy.toml"), "--json"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr()
    unchecked = json.loads(out.out)["unchecked_rules"]
    assert len(unchecked) == 1 and unchecked[0].startswith("(K if K > 0 else 0.5) > 0 (")
    assert len(out.err.splitlines()) == 1 and "does not check: (K if K > 0" in out.err
    module = python_selector(tmp_path / "b")
    assert [module.legal(j, K=6) for j in (0, 1)] == [True, True]  # K % TS checked: 6 % 2
    assert [module.legal(j, K=7) for j in (0, 1)] == [True, False]


def _matmul_store(path: Path, source: str | None) -> None:
    """A store of two GEMM shapes timed for two configurations of a kernel named matmul: the
    built-in, or (``source``) a kernel of your own under that name."""
    import dataclasses

    from perfport import Config, Measurement, Outcome, builtin
    from perfport._core import Backend, DeviceInfo, DeviceType
    from perfport.space import PruningReport
    from perfport.store import Store

    spec = builtin("matmul")
    spec = dataclasses.replace(spec, source=source) if source else spec
    device = DeviceInfo(id="opencl:9:0", backend=Backend.OPENCL, name="GPU", vendor="Fake",
                        type=DeviceType.GPU, driver="1", platform="CL", version="OpenCL 3.0",
                        compute_units=8, max_work_group_size=256, max_work_item_sizes=(256, 256, 64),
                        local_mem_bytes=65536, global_mem_bytes=1 << 30)  # fmt: skip
    configs = [{"row_tile": 1, "acc_tile": 1, "col_tile": 1, "wg_rows": r, "wg_cols": r}
               for r in (8, 16)]  # fmt: skip
    with Store(path) as store:
        for size, times in ((64, (1.0, 2.0)), (128, (2.0, 1.0))):
            full = spec.problem.merged({"M": size, "N": size, "K": size})
            ids = (store.device_id(device), store.kernel_id(spec), store.problem_id(full))
            campaign = store.open_campaign(f"c{size}", ids, "brute_force", 0, {},
                                           PruningReport(1, 1, ()))  # fmt: skip
            for config, ms in zip(configs, times, strict=True):
                store.record(
                    campaign, Measurement(Config.of(config), Outcome.OK, times_ms=(ms, ms))
                )


def builtin_source() -> str:
    from perfport import builtin

    return builtin("matmul").source


def test_fit_says_whose_rules_it_checked_and_not_a_built_in_for_other_source(tmp_path, capsys):
    # A kernel of your own named matmul got the built-in's rules in legal(), silently.
    pytest.importorskip("sklearn", reason="scikit-learn (the models extra)")
    from perfport.cli import main
    from perfport.select import fit_bundle, from_store, load_csv, save_csv
    from perfport.select.emit_rules import UNKNOWN_SPEC

    _matmul_store(tmp_path / "builtin.db", None)
    argv = ["select", "fit", "--kernels", "2", "--json", "--out"]
    assert main([*argv, str(tmp_path / "b"), "--data", str(tmp_path / "builtin.db")]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["metadata"]["rules_from"] == "built-in matmul"
    assert out.err == ("perfport: note: checked the rules of the built-in matmul (no --spec "
                       "given); give --spec FILE if this is a kernel of your own\n")  # fmt: skip
    _matmul_store(tmp_path / "own.db", builtin_source() + "// my own\n")
    own = from_store(tmp_path / "own.db")
    save_csv(own, tmp_path / "own.csv.gz")  # the source hash goes with an export
    for table in (own, load_csv(tmp_path / "own.csv.gz")):
        bundle = fit_bundle(table, 2, tmp_path / "own")
        assert bundle.unchecked_rules == (UNKNOWN_SPEC,)
        assert bundle.metadata["rules_from"].startswith("none (the data's matmul has other source")


@needs_gcc
def test_a_derived_value_read_twice_by_one_rule(tmp_path):
    """Each occurrence of a derived value is its own code: the Python once renamed a shared
    call twice (``_pp__pp_ceil_div``) and raised NameError."""
    spec = KernelSpec(
        name="dk", source="__kernel void dk() {}", entry="dk",
        params=[Param("ITEMS", (1, 4))], global_size=["n"], local_size=["1"],
        problem={"n": 64}, restrictions=["(c if n > 0 else -c) >= 1"],
        derived={"c": "ceil_div(n, ITEMS)"},
    )  # fmt: skip
    out = tmp_path / "dk"
    write_bundle(out, "dk", ("ITEMS",), [{"ITEMS": 1}, {"ITEMS": 4}], ("n",),
                 SelectorTree.constant(("n",), 1), spec=spec)  # fmt: skip
    bundle, legality, module = load_bundle(out), Legality(spec), python_selector(out)
    dll = compile_shared(out / "selector.c", out / "libselector.so")
    dll.dk_legal.argtypes = [ctypes.c_int, ctypes.c_long]
    dll.dk_select_legal.argtypes = [ctypes.c_long]
    for n in (1000, 3, 1, 0, -1, -5):
        for j, config in enumerate(bundle.configs):
            holds = not legality.reason(config, {"n": n})
            assert module.legal(j, n=n) is holds and dll.dk_legal(j, n) == holds, (j, n)
        want = expected_choice(bundle, legality, {"n": n})
        assert module.select_legal(n=n) == dll.dk_select_legal(n) == want, n


@needs_gcc
def test_inputs_may_take_the_names_of_the_generated_codes_locals(tmp_path):
    """Problem values named like the generated functions' locals, arguments and the Python's
    globals and builtins work in both selectors; names that cannot are refused in one line."""
    names = ("index", "order", "pick", "i", "_other", "len", "CONFIGS", "select", "problem", "j")
    spec = KernelSpec(
        name="toy", source="__kernel void toy() {}", entry="toy",
        params=[Param("WG", (1, 8))], global_size=["len"], local_size=["WG"],
        problem=dict.fromkeys(names, 8),
        restrictions=["index + order + pick + i + _other >= CONFIGS - select * problem * j"],
    )  # fmt: skip
    rng = np.random.default_rng(0)
    rows = rng.integers(-20, 20, (200, len(names)))
    model = tree_module.DecisionTreeClassifier(max_depth=4, random_state=0)
    tree = SelectorTree.from_sklearn(model.fit(rows, rng.integers(0, 2, 200)), names)
    out = tmp_path / "b"
    write_bundle(out, "toy", ("WG",), [{"WG": 1}, {"WG": 8}], names, tree, spec=spec)
    bundle, legality, module = load_bundle(out), Legality(spec), python_selector(out)
    dll = compile_shared(out / "selector.c", out / "libselector.so")
    dll.toy_select_legal.argtypes = [ctypes.c_long] * len(names)
    for row in rng.integers(-20, 20, (100, len(names))):
        problem = dict(zip(names, (int(x) for x in row), strict=True))
        want = expected_choice(bundle, legality, problem)
        assert module.select_legal(**problem) == dll.toy_select_legal(*problem.values()) == want
        assert module.legal(1, **problem) is not legality.reason(bundle.configs[1], problem)
    for bad in ("NAN", "M_PI", "floor", "perfport_err", "_pp_x", "toy_select"):
        with pytest.raises(SelectError, match=f"problem value '{bad}' is a name"):
            write_bundle(tmp_path / bad, "toy", ("WG",), [{"WG": 1}], (bad,),
                         SelectorTree.constant((bad,)))  # fmt: skip


def expected_choice(bundle, legality: Legality, problem: dict[str, float]) -> int:
    try:
        return legal_choice(bundle, legality, problem).index
    except SelectError:
        return -1


def test_predict_and_a_dispatcher_take_no_rules_a_fit_did_not(tmp_path, capsys):
    # select predict checked the built-in matmul's rules on a bundle whose fit said the
    # data's matmul had other source (legal: false, a fallback) while selector.c checked none.
    pytest.importorskip("sklearn", reason="scikit-learn (the models extra)")
    from perfport.cli import main
    from perfport.select import fit_bundle, from_store
    from perfport.select.dispatch import bundle_spec

    _matmul_store(tmp_path / "own.db", builtin_source() + "// my own\n")
    bundle = fit_bundle(from_store(tmp_path / "own.db"), 2, tmp_path / "own")
    with pytest.raises(SelectError, match=r"other source than the built-in.*give the kernel"):
        bundle_spec(bundle)
    problem = ["K=494587", "M=1099511627776", "N=3363104", "trans_a=0", "trans_b=0"]
    argv = ["select", "predict", "--bundle", str(tmp_path / "own"), "--json", "--problem"]
    assert main([*argv, *problem]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["legal"] is None and "give --spec FILE" in out.err
