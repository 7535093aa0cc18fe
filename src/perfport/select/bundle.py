"""A deployment bundle: the k configurations a library ships and the selector among them.

A bundle is a directory:

- ``bundle.json``: format and version, kernel, features (with their transforms), parameter
  names, configurations, the selector tree as plain arrays, and provenance (``metadata``:
  device, performance, data, ...). It is written last and atomically, so a directory whose
  writing was interrupted has no ``bundle.json`` and is refused rather than half read.
- ``selector.h`` / ``selector.c``: the selector as dependency-free C (``KERNEL_select``),
  and ``KERNEL_legal`` / ``KERNEL_select_legal``, which check the kernel's rules.
- ``selector.py``: the same selector as a standalone Python module (``legal``,
  ``select_legal`` too).

``load_bundle`` answers from ``bundle.json`` alone (walking the stored tree exactly as the
fitted model would), so serving a bundle needs neither scikit-learn nor the generated files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from perfport._core import Config, KernelSpec, SpecError, Value
from perfport._core.identifiers import is_code_keyword
from perfport.kernels import BUILTINS, builtin
from perfport.select.emit_c import generate_c
from perfport.select.emit_c_rules import Kind, checked
from perfport.select.emit_python import generate_python
from perfport.select.emit_rules import LegalRules, legal_rules, preference, unknown_rules
from perfport.select.errors import SelectError
from perfport.select.tree import SelectorTree, Transform, check_identifier, label_index

FORMAT = "perfport-selector-bundle"
VERSION = 2  # 2: the tree may read derived features ("derived"); version 1 has none
MANIFEST = "bundle.json"
# bundle.json metadata: the kernel's spec file as given at fit time (absolute), a hint for
# loading a kernel of your own; used only where it still loads a kernel of the bundle's name.
SPEC_FILE = "spec_file"
# bundle.json metadata: each shipped configuration's geometric-mean fraction of the optimum
# over the training problems, in the order of the configurations: the fallback order where
# the selector's pick is illegal at a problem (perfport.select.legality).
TRAIN_PERFORMANCE = "config_train_performance"
# bundle.json metadata: the problem values the table held at one value that are not features
# (dtype="float"): the problem the generated legal() checks the rules at, beyond its inputs.
FIXED_PROBLEM = "fixed_problem"
# bundle.json metadata (select fit): whose rules the generated legal() checks: "built-in
# NAME" (no --spec: the built-in of the kernel's name), the spec file's path, or "none (...)".
RULES_FROM = "rules_from"
C_HEADER, C_SOURCE, PYTHON = "selector.h", "selector.c", "selector.py"


@dataclass(frozen=True)
class Bundle:
    """A loaded bundle. ``predict`` needs only this record (no scikit-learn)."""

    path: Path
    kernel: str
    param_names: tuple[str, ...]
    configs: tuple[Config, ...]
    tree: SelectorTree
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # The rules the generated legal() does not check, each "RULE (why)" (emit_rules).
    unchecked_rules: tuple[str, ...] = field(default=(), compare=False)

    @property
    def features(self) -> tuple[str, ...]:
        return self.tree.features

    def choose(self, problem: Mapping[str, Any]) -> int:
        """The index into ``configs`` for this problem (values that are not features are
        ignored; a missing feature is a SelectError naming it)."""
        return self.tree.choose(problem)

    def predict(self, problem: Mapping[str, Any]) -> dict[str, Value]:
        """The configuration to launch for this problem, as parameter -> value."""
        config = self.configs[self.choose(problem)]
        return {p: config[p] for p in self.param_names}

    @property
    def fixed_problem(self) -> Mapping[str, Any]:
        """The problem values the data held at one value (``dtype``, ``batch``): no inputs of
        the selector, which was fitted only there."""
        fixed = self.metadata.get(FIXED_PROBLEM)
        return fixed if isinstance(fixed, Mapping) else {}

    def off_fitted(self, problem: Mapping[str, Any]) -> tuple[str, ...]:
        """A note for each value of ``problem`` that differs from the one it was fitted at
        (``fixed_problem``): the pick there is the one fitted elsewhere, never measured."""
        fixed = self.fixed_problem
        return tuple(
            f"the bundle was fitted only at {n}={_shown(fixed[n])}, not {n}={_shown(v)}: its "
            "pick there is not from measurements; fit it on data with that value"
            for n, v in problem.items()
            if n in fixed and n not in self.features and not _same_value(v, fixed[n])
        )


def _same_value(a: Any, b: Any) -> bool:
    # Numbers by value, a flag as 0/1 (the CLI's trans_a=0 is the data's false).
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def _shown(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def function_name(kernel: str) -> str:
    """The C prefix of a kernel's selector: its name made an identifier (``KERNEL_select``)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", kernel) or "kernel"
    name = f"_{name}" if name[0].isdigit() else name
    return f"{name}_" if is_code_keyword(name) else name


def write_bundle(
    directory: str | Path,
    kernel_name: str,
    param_names: Sequence[str],
    configs: Sequence[Mapping[str, Any]],
    feature_names: Sequence[str],
    selector_tree: Any,
    transforms: Sequence[Transform | str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    labels: Mapping[Any, int] | None = None,
    real_features: Collection[str] = (),
    spec: KernelSpec | None = None,
    fixed: Mapping[str, Any] | None = None,
    builtin_rules: bool = True,
) -> Bundle:
    """Write a bundle into ``directory`` (created if needed; its bundle files are replaced).

    ``selector_tree`` is a fitted ``DecisionTreeClassifier`` whose labels index ``configs``
    (or map through ``labels``), a perfport ``Selector`` with a tree (the regret tree included,
    or fitted on one class), a ``SelectorTree``, or None when one configuration is shipped.
    ``transforms`` says what the tree saw of each feature (default: raw values).
    ``real_features`` take fractional values: the C selector takes them as ``double``.
    ``spec`` (else, with ``builtin_rules``, the built-in of ``kernel_name``) gives the rules
    the generated ``legal`` checks, at ``fixed`` problem values (else its defaults) beyond them.
    """
    directory = Path(directory)
    param_names = tuple(param_names)
    try:
        plain = tuple(Config.of(c) for c in configs)
    except SpecError as exc:
        raise SelectError(f"{exc}; give numbers, strings or booleans") from None
    for i, c in enumerate(plain):
        if set(c) != set(param_names):
            raise SelectError(
                f"configuration {i} sets {sorted(c)}; each must set exactly {list(param_names)}"
            )
    tree = _tree(selector_tree, feature_names, transforms, labels, len(plain))
    try:
        info = json.loads(json.dumps(dict(metadata or {}), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise SelectError(f"bundle metadata is not plain JSON ({exc}); pass numbers, "
                          "strings, lists and dicts") from None  # fmt: skip
    rows = [{p: c[p] for p in param_names} for c in plain]
    name, title = function_name(kernel_name), f"of kernel {kernel_name}"
    rules = _rules(spec, kernel_name, builtin_rules, rows, tree, fixed or {}, info, real_features)
    c_code = generate_c(tree, name, param_names, rows, header_name=C_HEADER, title=title,
                        real=real_features, rules=rules)  # fmt: skip
    python = generate_python(tree, param_names, rows, title=title, rules=rules)
    manifest = {
        "format": FORMAT,
        # A reader of version 1 ignores "derived" and would answer wrongly: mark such bundles.
        "version": VERSION if tree.derived else 1,
        "kernel": kernel_name,
        "c_function": f"{name}_select",
        "files": {"c_header": C_HEADER, "c_source": C_SOURCE, "python": PYTHON},
        "params": list(param_names),
        "configurations": rows,
        **_tree_json(tree),
        "metadata": info,
        "unchecked_rules": list(rules.unchecked),
    }
    theirs = [f for f in (C_HEADER, C_SOURCE, PYTHON) if (directory / f).exists()]
    if theirs and not (directory / MANIFEST).is_file():
        # Files of these names, but no bundle: someone else's, which replacing would lose.
        raise SelectError(f"{directory} holds {', '.join(theirs)} but is not a selector bundle "
                          f"(no {MANIFEST}); choose another --out, or move those files")  # fmt: skip
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # An old manifest goes first: mid-rewrite the directory is no bundle, never a mix.
        (directory / MANIFEST).unlink(missing_ok=True)
        for file, text in ((C_HEADER, c_code.header), (C_SOURCE, c_code.source), (PYTHON, python)):
            (directory / file).write_text(text)
        staging = directory / f".{MANIFEST}.tmp"
        staging.write_text(json.dumps(manifest, indent=1) + "\n")
        os.replace(staging, directory / MANIFEST)
    except OSError as exc:
        raise SelectError(f"cannot write the bundle at {directory}: {exc.strerror}; "
                          "choose a writable directory") from None  # fmt: skip
    return Bundle(directory, kernel_name, param_names, plain, tree, MappingProxyType(info),
                  rules.unchecked)  # fmt: skip


def _rules(
    spec: KernelSpec | None,
    kernel_name: str,
    builtin_rules: bool,
    rows: Sequence[Mapping[str, Any]],
    tree: SelectorTree,
    fixed: Mapping[str, Any],
    info: Mapping[str, Any],
    real: Collection[str],
) -> LegalRules:
    """What the generated legal() checks: the spec's rules, as C can state them (without a
    spec, the built-in's of ``kernel_name`` where ``builtin_rules``)."""
    order = preference(info.get(TRAIN_PERFORMANCE), len(rows))
    if spec is None and builtin_rules and kernel_name in BUILTINS:
        spec = builtin(kernel_name)
    if spec is None:
        return unknown_rules(len(rows))
    kinds = {f: Kind.DOUBLE if f in real else Kind.LONG for f in tree.features}
    return checked(legal_rules(spec, rows, tree.features, fixed, order), kinds)


def _tree(
    given: Any,
    feature_names: Sequence[str],
    transforms: Sequence[Transform | str] | None,
    labels: Mapping[Any, int] | None,
    n_configs: int,
) -> SelectorTree:
    if given is None:
        if n_configs != 1:
            raise SelectError(
                f"no selector for {n_configs} configurations; pass a fitted decision tree"
            )
        return SelectorTree.constant(feature_names, 0, transforms)
    if isinstance(given, SelectorTree):
        wanted = SelectorTree.constant(feature_names, 0, transforms)
        if (given.features, given.transforms) != (wanted.features, wanted.transforms):
            raise SelectError(
                f"the selector tree reads {list(given.features)} "
                f"({', '.join(t.value for t in given.transforms)}); pass the same "
                "feature names and transforms"
            )
        return given
    # A perfport Selector (select.classify) holds its scikit-learn model in ``model_``, the
    # derived features it computes in ``derived_`` and its Classifier in ``classifier_``.
    model = getattr(given, "model_", given)
    derived = tuple(getattr(given, "derived_", ()))
    classes: Sequence[Any] = getattr(model, "classes_", ())
    if not hasattr(model, "tree_") and len(classes) == 1:
        # A one-class fit (e.g. a DummyClassifier): every problem gets that configuration.
        return SelectorTree.constant(feature_names, label_index(classes[0], labels), transforms)
    regret = bool(getattr(getattr(given, "classifier_", None), "regret", False))
    return SelectorTree.from_sklearn(model, feature_names, transforms, labels, derived, regret)


def _tree_json(tree: SelectorTree) -> dict[str, Any]:
    data = tree.to_json()
    return {"features": data.pop("features"), "tree": data}


def load_bundle(directory: str | Path) -> Bundle:
    """Read a bundle written by ``write_bundle``; SelectError (one line) if it is missing or
    malformed."""
    directory = Path(directory)
    path = directory / MANIFEST
    fix = "write it again (perfport select fit ... --out DIR)"
    if directory.is_file() and directory.name == MANIFEST:
        raise SelectError(f"{directory} is a bundle's manifest; give its directory, "
                          f"{directory.parent}")  # fmt: skip
    if not directory.is_dir():
        raise SelectError(f"no selector bundle at {directory}: not a directory; {fix}")
    if not path.is_file():
        raise SelectError(f"{directory} is not a selector bundle: it has no {MANIFEST}; {fix}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise SelectError(f"cannot read {path}: {exc}; {fix}") from None
    except json.JSONDecodeError as exc:
        raise SelectError(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); {fix}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SelectError(f"{path} is not a perfport selector bundle (no format {FORMAT!r}); {fix}")
    version = data.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise SelectError(
            f"{path} has format version {version!r}; this perfport reads up to {VERSION}: "
            "upgrade perfport or write the bundle again"
        )
    missing = [
        k for k in ("kernel", "params", "configurations", "features", "tree") if k not in data
    ]
    if missing:
        raise SelectError(f"{path} is malformed: it lacks {', '.join(missing)}; {fix}")
    try:
        tree = SelectorTree.from_json({**data["tree"], "features": data["features"]})
        params = tuple(str(p) for p in data["params"])
        for p in params:
            check_identifier(p, "parameter name")
        configs = tuple(Config.of(c) for c in data["configurations"])
        metadata = data.get("metadata", {})
        if not isinstance(metadata, dict):
            raise SelectError("metadata must be an object")
    except (SelectError, SpecError, TypeError, ValueError, AttributeError) as exc:
        raise SelectError(f"{path} is malformed ({exc}); {fix}") from None
    if not configs or any(set(c) != set(params) for c in configs):
        raise SelectError(
            f"{path} is malformed: each configuration must set exactly {list(params)}; {fix}"
        )
    if max(tree.choices) >= len(configs):
        raise SelectError(
            f"{path} is malformed: the selector picks configuration {max(tree.choices)} of "
            f"{len(configs)}; {fix}"
        )
    unchecked = data.get("unchecked_rules", [])
    unchecked = tuple(str(u) for u in unchecked) if isinstance(unchecked, list) else ()
    return Bundle(directory, str(data["kernel"]), params, configs, tree, MappingProxyType(metadata),
                  unchecked)  # fmt: skip
