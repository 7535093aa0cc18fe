"""From measurements to a deployment bundle: normalise, choose k configurations on every
problem of a table, train a decision-tree selector among them and write it as code."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from perfport._core import KernelSpec, SpecError
from perfport.kernels import BUILTINS, builtin, resolve_kernel
from perfport.select.bundle import (
    FIXED_PROBLEM,
    RULES_FROM,
    SPEC_FILE,
    TRAIN_PERFORMANCE,
    Bundle,
    write_bundle,
)
from perfport.select.classify import Classifier, fit_selector
from perfport.select.errors import SelectError, member
from perfport.select.evaluate import geomean_fraction
from perfport.select.normalise import Normalisation, normalise, relative
from perfport.select.prune import Pruning, choose
from perfport.select.table import PerfTable


def fit_bundle(
    table: PerfTable,
    k: int,
    out: str | Path,
    normalisation: Normalisation | str = Normalisation.RELATIVE,
    pruning: Pruning | str = Pruning.GREEDY,
    classifier: Classifier | str = Classifier.DECISION_TREE_DISTILLED_DERIVED,
    seed: int = 0,
    spec_file: str | Path | None = None,
) -> Bundle:
    """Choose ``k`` configurations of ``table`` and write the bundle (configurations, selector
    as C and Python, provenance) to ``out``. Only decision-tree classifiers become code. The
    defaults did best at k = 6 and 8 on held-out H100 GEMM shapes over forty splits, through
    NVIDIA OpenCL and CUDA (docs/results/2026-11-23-select-recombined.md). ``spec_file``,
    the kernel's spec, is recorded (absolute) as a hint for ``Dispatcher``; its rules (else
    the built-in's of the table's kernel name, where the store does not say its source
    differs) are what the generated ``legal`` checks, recorded as ``metadata.rules_from``."""
    classifier = member(Classifier, classifier, "classifier")
    normalisation = member(Normalisation, normalisation, "normalisation")
    pruning = member(Pruning, pruning, "pruning")
    if not table.problem_names:  # a selector needs a number to read
        shown = ", ".join(f"{n}={v!r}" for n, v in table.fixed.items()) or "none"
        raise SelectError(
            f"the problems have no numeric value for a selector to read (problem values: "
            f"{shown}); measure problems with numeric sizes (M=512, not a string)"
        )
    if not 1 <= k <= table.n_configs:
        raise SelectError(f"k = {k}: choose 1 to {table.n_configs} of the table's configurations")
    if not classifier.is_tree:
        trees = ", ".join(c.value for c in Classifier if c.is_tree)
        raise SelectError(
            f"only decision trees can be deployed as code, not {classifier.value}; use one of {trees}"
        )
    norm = normalise(table.times, normalisation)
    # In index order, as evaluate() fits them: the trees' tie-breaks follow the order, so the
    # bundle is then the very pipeline that was evaluated.
    perf = relative(table.times)
    chosen = np.sort(choose(norm, k, pruning, seed, features=table.problems, perf=perf))
    selector = fit_selector(table, chosen, classifier, seed=seed)
    picked = chosen[selector.predict(table.problems)]
    rows = range(table.n_problems)
    metadata = {
        "device": table.device,
        "problems": table.n_problems,
        "normalisation": Normalisation(normalisation).value,
        "pruning": Pruning(pruning).value,
        "classifier": classifier.value,
        "seed": seed,
        # On the training problems: what the selector gets, and the best the set could give.
        "train_performance": geomean_fraction(perf[rows, picked]),
        "train_max_achievable": geomean_fraction(perf[:, chosen].max(axis=1)),
        # Each shipped configuration alone: the order a Dispatcher falls back in.
        TRAIN_PERFORMANCE: [geomean_fraction(perf[:, j]) for j in chosen],
    }
    spec: KernelSpec | None
    if spec_file is not None:
        metadata[SPEC_FILE], spec = _spec_hint(spec_file, table.kernel)
        metadata[RULES_FROM] = metadata[SPEC_FILE]
    else:
        spec, metadata[RULES_FROM] = _builtin_rules(table)
    if table.fixed:  # the problem it was measured at, beyond the features (dtype)
        metadata[FIXED_PROBLEM] = dict(table.fixed)
    values = np.asarray(table.problems, dtype=np.float64)
    real = [f for j, f in enumerate(table.problem_names) if np.any(values[:, j] % 1 != 0)]
    return write_bundle(
        out, table.kernel or "kernel", table.param_names,
        [table.config_dict(int(j)) for j in chosen], table.problem_names, selector,
        metadata=metadata, real_features=real, spec=spec, fixed=table.fixed, builtin_rules=False,
    )  # fmt: skip


def _builtin_rules(table: PerfTable) -> tuple[KernelSpec | None, str]:
    """Without --spec, the built-in of the table's kernel name gives the rules, unless the
    store says the data's kernel has other source (a kernel of your own named like it)."""
    if table.kernel not in BUILTINS:
        return None, "none"
    spec = builtin(table.kernel)
    if table.kernel_hash and table.kernel_hash != spec.source_hash:
        return None, f"none (the data's {table.kernel} has other source than the built-in)"
    return spec, f"built-in {table.kernel}"


def _spec_hint(spec_file: str | Path, kernel: str) -> tuple[str, KernelSpec]:
    """The spec file's absolute path and its kernel, once it is known to be the table's."""
    try:
        spec = resolve_kernel(Path(spec_file))
    except SpecError as exc:
        raise SelectError(f"--spec: {exc}") from None
    if spec.name != kernel:
        raise SelectError(f"--spec {spec_file} is kernel {spec.name}, but the data is of "
                          f"{kernel or '(unnamed)'}; give that kernel's spec file")  # fmt: skip
    return str(Path(spec_file).resolve()), spec
