"""The rules a shipped configuration keeps to launch, partially evaluated for the generated
selectors' ``legal`` (``emit_c_rules``, ``emit_python``).

The rules are those a device-less ``Legality`` checks: the kernel's restrictions and each
global size a multiple of its local size. For each configuration its parameter values, and
every problem value the selector does not take (the spec's defaults, or a value the table
fixed at fit time), are substituted at generation time; a subexpression that reads only
those is evaluated then, with perfport's own expression rules (``Expr``, never ``eval``). A
rule that becomes a constant is decided here; the rest are expressions over the selector's
inputs only. Evaluating a rule may fail (a division by zero): then, as for ``Legality``, the
configuration is illegal at that problem.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from perfport._core import ExpressionError, KernelSpec
from perfport._core.expr import FUNCTIONS, Expr, parse
from perfport._core.restrictions import restriction_text
from perfport.space.kernel_space import divisible_sizes

FAIL = "__fail__"  # a call that stands for an evaluation that raises wherever it is reached
UNKNOWN_SPEC = "every rule (the kernel's spec is unknown; fit with --spec FILE)"


@dataclass(frozen=True)
class Check:
    """One rule of one configuration over the selector's inputs. ``truth``: it must hold;
    else it is a derived value the rule reads, evaluated only for its errors (as perfport
    computes the derived values a rule reads before the rule)."""

    node: ast.expr
    label: str
    truth: bool = True


@dataclass(frozen=True)
class ConfigRules:
    """What one configuration must keep: ``checks``, or ``never`` (the rule it breaks at
    every problem, "" when none does)."""

    checks: tuple[Check, ...] = ()
    never: str = ""


@dataclass(frozen=True)
class LegalRules:
    """Every shipped configuration's rules, the order the selectors fall back in, and the
    rules left unchecked (each "RULE (why)")."""

    configs: tuple[ConfigRules, ...]
    order: tuple[int, ...]
    unchecked: tuple[str, ...] = ()

    def without(self, label: str, why: str) -> LegalRules:
        """These rules with ``label`` left unchecked in every configuration, for ``why``."""
        configs = tuple(
            replace(c, checks=tuple(k for k in c.checks if k.label != label)) for c in self.configs
        )
        note = f"{label} ({why})"
        unchecked = self.unchecked if note in self.unchecked else (*self.unchecked, note)
        return LegalRules(configs, self.order, unchecked)


def preference(scores: Any, n: int) -> tuple[int, ...]:
    """Configurations best first by their training performance ``scores`` where given (ties
    and else: in their own order)."""
    if not isinstance(scores, list) or len(scores) != n:
        return tuple(range(n))
    if not all(isinstance(s, int | float) and not isinstance(s, bool) for s in scores):
        return tuple(range(n))
    return tuple(sorted(range(n), key=lambda j: -float(scores[j])))


def divisibility_rules(spec: KernelSpec) -> list[tuple[str, str]]:
    """(label, expression) of each launch rule that holds on every device: each global size a
    multiple of its local size."""
    return [
        (f"{g} % {lo} == 0", f"({g}) % ({lo}) == 0")
        for g, lo in divisible_sizes(spec.global_size, spec.local_size)
    ]


def unknown_rules(n: int) -> LegalRules:
    """A kernel whose spec is unknown: nothing is checked, and that is said."""
    return LegalRules(tuple(ConfigRules() for _ in range(n)), tuple(range(n)), (UNKNOWN_SPEC,))


def legal_rules(
    spec: KernelSpec,
    configs: Sequence[Mapping[str, Any]],
    inputs: Sequence[str],
    fixed: Mapping[str, Any],
    order: Sequence[int],
) -> LegalRules:
    """Each configuration's rules over ``inputs`` (the selector's features); the other
    problem values are ``fixed`` (fit time) over the spec's defaults."""
    rules: list[tuple[str, ast.expr]] = []
    unchecked: list[str] = []
    for r in spec.restrictions:
        if isinstance(r, str):
            rules.append((r, parse(r, "restriction").body))
        else:
            unchecked.append(f"{restriction_text(r)} (a Python function)")
    rules += [(label, parse(text, "launch rule").body) for label, text in divisibility_rules(spec)]
    derived = [(name, parse(text, "derived").body) for name, text in spec.derived]
    problem = {k: v for k, v in {**dict(spec.problem), **dict(fixed)}.items() if k not in inputs}
    out = [_config_rules({**problem, **c}, set(inputs), rules, derived) for c in configs]
    return LegalRules(tuple(out), tuple(order), tuple(unchecked))


def _config_rules(
    env: dict[str, Any],
    inputs: set[str],
    rules: Sequence[tuple[str, ast.expr]],
    derived: Sequence[tuple[str, ast.expr]],
) -> ConfigRules:
    residual: dict[str, ast.expr] = {}  # derived values that read an input
    failed: set[str] = set()  # derived values that raise for this configuration
    reads: dict[str, set[str]] = {}  # derived name -> derived names it reads, transitively
    for name, node in derived:
        names = _names(node)
        reads[name] = {n for n in names if n in reads}.union(
            *(reads[n] for n in names & reads.keys())
        )
        partial = _Partial(env, inputs, residual)
        if names & (inputs | residual.keys() | failed):
            if names & failed:
                failed.add(name)
            else:
                residual[name] = partial(node)
            continue
        value = partial(node)
        if isinstance(value, ast.Constant):
            env[name] = value.value
        else:
            failed.add(name)
    checks: list[Check] = []
    for label, node in rules:
        names = _names(node)
        read = {n for n in names if n in reads}.union(*(reads[n] for n in names & reads.keys()))
        if read & failed:
            return ConfigRules(never=label)
        guards = [
            Check(residual[n], label, False) for n, _ in derived if n in read & residual.keys()
        ]
        value = _Partial(env, inputs, residual)(node)
        if is_fail(value) or (isinstance(value, ast.Constant) and not _truth(value.value)):
            return ConfigRules(never=label)
        if isinstance(value, ast.Constant) and not guards:
            continue  # holds at every problem
        checks += guards
        if not isinstance(value, ast.Constant):
            checks.append(Check(value, label))
    return ConfigRules(tuple(checks))


def _truth(value: Any) -> bool:
    try:
        return bool(value)
    except Exception:
        return False


def is_fail(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == FAIL


def fail_node() -> ast.expr:
    return ast.Call(func=ast.Name(id=FAIL, ctx=ast.Load()), args=[], keywords=[])


def _names(node: ast.AST) -> set[str]:
    """The values an expression reads (not the functions it calls)."""
    calls = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and id(n) not in calls and n.id not in FUNCTIONS
    }


class _Partial:
    """An expression with every value but the inputs substituted: what reads no input is
    evaluated (a failure becomes a ``FAIL`` call), ``and``/``or``/``if`` with a decided
    test keep only the side Python would evaluate."""

    def __init__(self, env: Mapping[str, Any], inputs: set[str], residual: Mapping[str, ast.expr]):
        self.env = env
        self.open = inputs | residual.keys()
        self.residual = residual

    def __call__(self, node: ast.expr) -> ast.expr:
        if not _names(node) & self.open:
            try:
                return ast.Constant(Expr(ast.unparse(node), "rule").value(self.env))
            except ExpressionError:
                return fail_node()
        if isinstance(node, ast.Name):
            if node.id in self.residual:  # a copy per occurrence: emitters rewrite in place
                return copy.deepcopy(self.residual[node.id])
            return ast.Name(id=node.id, ctx=ast.Load())
        if isinstance(node, ast.BoolOp):
            return self._bool(node)
        if isinstance(node, ast.IfExp):
            test = self(node.test)
            if isinstance(test, ast.Constant):
                return self(node.body if _truth(test.value) else node.orelse)
            return ast.IfExp(test=test, body=self(node.body), orelse=self(node.orelse))
        if isinstance(node, ast.BinOp):
            return ast.BinOp(left=self(node.left), op=node.op, right=self(node.right))
        if isinstance(node, ast.UnaryOp):
            return ast.UnaryOp(op=node.op, operand=self(node.operand))
        if isinstance(node, ast.Compare):
            return ast.Compare(
                left=self(node.left), ops=node.ops, comparators=[self(c) for c in node.comparators]
            )
        if isinstance(node, ast.Call):
            return ast.Call(func=node.func, args=[self(a) for a in node.args], keywords=[])
        if isinstance(node, ast.Tuple | ast.List):
            return ast.Tuple(elts=[self(e) for e in node.elts], ctx=ast.Load())
        return fail_node()  # not reached: the expression machinery allows nothing else

    def _bool(self, node: ast.BoolOp) -> ast.expr:
        is_and = isinstance(node.op, ast.And)
        rest = [self(v) for v in node.values]
        while len(rest) > 1 and isinstance(rest[0], ast.Constant):
            if _truth(rest[0].value) is not is_and:
                return rest[0]  # it decides, and is the value
            rest.pop(0)
        return rest[0] if len(rest) == 1 else ast.BoolOp(op=node.op, values=rest)
