"""Layer 5: kernel-subset selection (Lawson, "Performance portability through machine learning
guided kernel selection in SYCL libraries").

A library can ship only a few compiled configurations of a kernel but must serve every input
size. From times of every configuration at many problems (``PerfTable``): normalise each
problem's times (``normalise``), choose k configurations (``choose``), train a cheap runtime
selector among them (``Selector``), and score the whole pipeline on held-out problems
(``evaluate``); then deploy: ``fit_bundle`` writes the chosen configurations and the selector
as dependency-free C and Python, ``load_bundle`` reads one without scikit-learn, and a
``Dispatcher`` launches a bundle's configurations. scikit-learn (the ``models`` extra) is imported only when a method needs it.
Derived features (``derive``: products and divisibility of problem sizes) let tree selectors
split on quantities such as a GEMM's output size; generated code computes them exactly.
"""

from perfport.select.across_devices import PortableResult, portable
from perfport.select.across_devices_holdout import leave_one_out
from perfport.select.bundle import Bundle, load_bundle, write_bundle
from perfport.select.classify import (
    Classifier,
    Selector,
    best_in_set,
    fit_selector,
    log_features,
    problems_around,
    problems_recombined,
    regret_targets,
)
from perfport.select.deploy import fit_bundle
from perfport.select.derive import Derived, DerivedKind, default_derived, parse_derived
from perfport.select.device_caches import load_caches
from perfport.select.dispatch import Dispatcher
from perfport.select.emit_c import generate_c
from perfport.select.emit_python import generate_python
from perfport.select.errors import SelectError, UnknownNameError
from perfport.select.evaluate import (
    DEFAULT_KS,
    ORACLE,
    ResultTable,
    SelectResult,
    classifier_table,
    evaluate,
    geomean_fraction,
    pruning_table,
    split_problems,
    to_json,
)
from perfport.select.normalise import Normalisation, normalise, relative
from perfport.select.prune import Pruning, choose, set_score
from perfport.select.table import PerfTable, from_store
from perfport.select.table_file import load_csv, save_csv
from perfport.select.tree import SelectorTree, Transform

__all__ = [
    "DEFAULT_KS",
    "ORACLE",
    "Bundle",
    "Classifier",
    "Derived",
    "DerivedKind",
    "Dispatcher",
    "Normalisation",
    "PerfTable",
    "PortableResult",
    "Pruning",
    "ResultTable",
    "SelectError",
    "SelectResult",
    "Selector",
    "SelectorTree",
    "Transform",
    "UnknownNameError",
    "best_in_set",
    "choose",
    "classifier_table",
    "default_derived",
    "evaluate",
    "fit_bundle",
    "fit_selector",
    "from_store",
    "generate_c",
    "generate_python",
    "geomean_fraction",
    "leave_one_out",
    "load_bundle",
    "load_caches",
    "load_csv",
    "log_features",
    "normalise",
    "parse_derived",
    "portable",
    "problems_around",
    "problems_recombined",
    "pruning_table",
    "regret_targets",
    "relative",
    "save_csv",
    "set_score",
    "split_problems",
    "to_json",
    "write_bundle",
]
