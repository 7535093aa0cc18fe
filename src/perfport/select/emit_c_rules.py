"""The rules of ``emit_rules`` as C with Python's semantics: ``NAME_legal`` and
``NAME_select_legal``.

Every value has one C type, known here: ``long`` for Python's ints (and bools in
arithmetic), ``double`` for its floats, ``int`` 0/1 for conditions. ``//`` and ``%`` follow
Python's signs, ``/`` is true division, mixed comparisons are exact, ``and``/``or`` give the
operand that decides, and where Python raises (a division by zero, the square root of a
negative) a helper sets an error flag that makes the configuration illegal. Integer
arithmetic wraps at 64 bits where Python's ints grow: the one difference. A rule that C
cannot state faithfully (a value that is an int or a float depending on the input, a string)
is left unchecked by both selectors and listed (``checked``).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from perfport._core.bounds import MAX_EXPONENT
from perfport.select.emit_rules import Check, LegalRules, is_fail

ERR = "&perfport_err"
LONG_MAX = (1 << 63) - 1


class Kind(Enum):
    BOOL = "int"
    LONG = "long"
    DOUBLE = "double"


class Untranslatable(Exception):
    """A rule C cannot state with Python's meaning; the message says why."""


# name -> (C definition, helpers it calls): emitted only where used.
HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "fail": ("static long perfport_fail(int *err) { *err = 1; return 0; }", ()),
    "add": ("static long perfport_add(long a, long b) { return (long)((unsigned long)a + (unsigned long)b); }", ()),
    "sub": ("static long perfport_sub(long a, long b) { return (long)((unsigned long)a - (unsigned long)b); }", ()),
    "mul": ("static long perfport_mul(long a, long b) { return (long)((unsigned long)a * (unsigned long)b); }", ()),
    "neg": ("static long perfport_neg(long a) { return (long)(0UL - (unsigned long)a); }", ()),
    "floordiv": ("static long perfport_floordiv(long a, long b, int *err)\n{\n    long q;\n"
                 "    if (b == 0) { *err = 1; return 0; }\n"
                 "    if (b == -1) return perfport_neg(a);\n    q = a / b;\n"
                 "    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n}", ("neg",)),
    "mod": ("static long perfport_mod(long a, long b, int *err)\n{\n    long r;\n"
            "    if (b == 0) { *err = 1; return 0; }\n    if (b == -1) return 0;\n    r = a % b;\n"
            "    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n}", ()),
    "fmod": ("static double perfport_fmod(double a, double b, int *err)\n{\n    double m;\n"
             "    if (b == 0.0) { *err = 1; return 0.0; }\n    m = fmod(a, b);\n"
             "    if (m != 0.0) { if ((b < 0) != (m < 0)) m += b; } else m = copysign(0.0, b);\n"
             "    return m;\n}", ()),
    "ffloordiv": ("static double perfport_ffloordiv(double a, double b, int *err)\n{\n"
                  "    double m, d, f;\n    if (b == 0.0) { *err = 1; return 0.0; }\n"
                  "    m = fmod(a, b);\n    d = (a - m) / b;\n"
                  "    if (m != 0.0 && (b < 0) != (m < 0)) d -= 1.0;\n"
                  "    if (d == 0.0) return copysign(0.0, a / b);\n"
                  "    f = floor(d);\n    return d - f > 0.5 ? f + 1.0 : f;\n}", ()),
    "div": ("static double perfport_div(double a, double b, int *err)\n"
            "{\n    if (b == 0.0) { *err = 1; return 0.0; }\n    return a / b;\n}", ()),
    "ipow": ("static long perfport_ipow(long a, long n)\n{\n    unsigned long r = 1, b = (unsigned long)a;\n"
             "    for (; n > 0; n >>= 1) { if (n & 1) r *= b; b *= b; }\n    return (long)r;\n}", ()),
    "pow": ("static double perfport_pow(double a, double b, int *err)\n{\n    double r;\n"
            "    if ((a == 0.0 && b < 0.0) || (a < 0.0 && isfinite(a) && b != floor(b))) {\n"
            "        *err = 1;\n        return 0.0;\n    }\n    r = pow(a, b);\n"
            "    if (isinf(r) && isfinite(a) && isfinite(b)) *err = 1;\n    return r;\n}", ()),
    "shl": ("static long perfport_shl(long a, long n, int *err)\n{\n"
            "    if (n < 0 || (a != 0 && n > 4096)) { *err = 1; return 0; }\n"
            "    return n >= 64 ? 0 : (long)((unsigned long)a << n);\n}", ()),
    "shr": ("static long perfport_shr(long a, long n, int *err)\n{\n    if (n < 0) { *err = 1; return 0; }\n"
            "    if (n >= 63) return a < 0 ? -1 : 0;\n    return a < 0 ? ~(~a >> n) : a >> n;\n}", ()),
    "cmp": ("static int perfport_cmp(long a, double b)\n{\n    double f;\n    long i;\n"
            "    if (b != b) return 2;\n    if (b >= 9223372036854775808.0) return -1;\n"
            "    if (b < -9223372036854775808.0) return 1;\n    f = floor(b);\n    i = (long)f;\n"
            "    if (a != i) return a < i ? -1 : 1;\n    return f < b ? -1 : 0;\n}", ()),
    "min": ("static long perfport_min(long a, long b) { return b < a ? b : a; }", ()),
    "max": ("static long perfport_max(long a, long b) { return b > a ? b : a; }", ()),
    "fmin": ("static double perfport_fmin(double a, double b) { return b < a ? b : a; }", ()),
    "fmax": ("static double perfport_fmax(double a, double b) { return b > a ? b : a; }", ()),
    "abs": ("static long perfport_abs(long a) { return a < 0 ? perfport_neg(a) : a; }", ("neg",)),
    "toint": ("static long perfport_toint(double x, int *err)\n{\n"
              "    if (!isfinite(x)) { *err = 1; return 0; }\n"
              "    if (x >= 9223372036854775808.0 || x < -9223372036854775808.0) return 0;\n"
              "    return (long)x;\n}", ()),
    "sqrt": ("static double perfport_sqrt(double x, int *err)\n"
             "{\n    if (x < 0.0) { *err = 1; return 0.0; }\n    return sqrt(x);\n}", ()),
    "log2": ("static double perfport_log2(double x, int *err)\n"
             "{\n    if (x <= 0.0) { *err = 1; return 0.0; }\n    return log2(x);\n}", ()),
}  # fmt: skip
_MATH = {"fmod", "ffloordiv", "pow", "cmp", "toint", "sqrt", "log2"}  # need <math.h>
_SWAP = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq,
         ast.NotEq: ast.NotEq}  # fmt: skip
_C_CMP = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
# perfport_cmp(a, b) is -1, 0, 1 (a <, ==, > b) or 2 (b is NaN): each comparison on it.
_ON_CMP = {ast.Lt: "{} == -1", ast.Gt: "{} == 1", ast.LtE: "{} <= 0", ast.GtE: "({} + 1) % 3 >= 1",
           ast.Eq: "{} == 0", ast.NotEq: "{} != 0"}  # fmt: skip


@dataclass
class _C:
    """Translates one expression; ``used`` collects the helpers it calls."""

    inputs: Mapping[str, Kind]
    used: set[str] = field(default_factory=set)

    def call(self, helper: str, *args: str, err: bool = False) -> str:
        self._use(helper)
        return f"perfport_{helper}({', '.join([*args, ERR] if err else args)})"

    def _use(self, helper: str) -> None:
        self.used.add(helper)
        for dep in HELPERS[helper][1]:
            self._use(dep)

    def fail(self) -> tuple[str, Kind]:
        return self.call("fail", ERR), Kind.LONG

    def value(self, node: ast.expr) -> tuple[str, Kind]:
        """C code of ``node``'s value and its C type."""
        if is_fail(node):
            return self.fail()
        method: Callable[[ast.expr], tuple[str, Kind]] | None = getattr(
            self, f"_{type(node).__name__}", None
        )
        if method is None:
            raise Untranslatable(f"{type(node).__name__.lower()} of an input")
        return method(node)

    def truth(self, node: ast.expr) -> str:
        """C code that is nonzero where Python's ``bool(node)`` is true."""
        if isinstance(node, ast.BoolOp):
            join = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + join.join(self.truth(v) for v in node.values) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"!{self.truth(node.operand)}"
        if isinstance(node, ast.IfExp):
            parts = (self.truth(n) for n in (node.test, node.body, node.orelse))
            return "({} ? {} : {})".format(*parts)
        code, kind = self.value(node)
        return code if kind is Kind.BOOL else f"({code} != 0)"

    def _Constant(self, node: ast.Constant) -> tuple[str, Kind]:
        v = node.value
        if isinstance(v, bool):
            return str(int(v)), Kind.BOOL
        if isinstance(v, int):
            if not -LONG_MAX - 1 <= v <= LONG_MAX:
                raise Untranslatable("an integer outside the range of long")
            return (f"{v}L" if v > -LONG_MAX - 1 else f"({-LONG_MAX}L - 1)"), Kind.LONG
        if isinstance(v, float):
            if math.isnan(v):
                return "NAN", Kind.DOUBLE
            if math.isinf(v):
                return ("HUGE_VAL" if v > 0 else "(-HUGE_VAL)"), Kind.DOUBLE
            text = repr(v)
            return (text if any(ch in text for ch in ".e") else text + ".0"), Kind.DOUBLE
        raise Untranslatable(f"the value {v!r} beside an input")

    def _Name(self, node: ast.Name) -> tuple[str, Kind]:
        return node.id, self.inputs[node.id]

    def _UnaryOp(self, node: ast.UnaryOp) -> tuple[str, Kind]:
        if isinstance(node.op, ast.Not):
            return f"!{self.truth(node.operand)}", Kind.BOOL
        code, kind = self.value(node.operand)
        if isinstance(node.op, ast.Invert):  # Python: ~ of a float fails; perfport: of a bool
            return (f"(~{code})", Kind.LONG) if kind is Kind.LONG else self._after(code)
        if kind is Kind.DOUBLE:
            return (f"(-{code})" if isinstance(node.op, ast.USub) else code), kind
        code = f"(long){code}" if kind is Kind.BOOL else code
        return (self.call("neg", code) if isinstance(node.op, ast.USub) else code), Kind.LONG

    def _after(self, *codes: str) -> tuple[str, Kind]:
        """Evaluate ``codes`` (their errors come first), then fail: Python raises there."""
        return "(" + "".join(f"(void){c}, " for c in codes) + self.fail()[0] + ")", Kind.LONG

    def _BinOp(self, node: ast.BinOp) -> tuple[str, Kind]:
        (a, ka), (b, kb) = self.value(node.left), self.value(node.right)
        op = type(node.op)
        if op is ast.Pow:
            return self._pow(a, ka, b, kb, node.right)
        if op in (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift):
            if Kind.DOUBLE in (ka, kb):
                return self._after(a, b)
            a, b = _cast(a, ka, Kind.LONG), _cast(b, kb, Kind.LONG)
            if op is ast.LShift:
                return self.call("shl", a, b, err=True), Kind.LONG
            if op is ast.RShift:
                return self.call("shr", a, b, err=True), Kind.LONG
            sign = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}[op]
            return f"({a} {sign} {b})", Kind.LONG
        if op is ast.Div:
            a, b = _cast(a, ka, Kind.DOUBLE), _cast(b, kb, Kind.DOUBLE)
            return self.call("div", a, b, err=True), Kind.DOUBLE
        if Kind.DOUBLE in (ka, kb):
            a, b = _cast(a, ka, Kind.DOUBLE), _cast(b, kb, Kind.DOUBLE)
            if op is ast.FloorDiv:
                return self.call("ffloordiv", a, b, err=True), Kind.DOUBLE
            if op is ast.Mod:
                return self.call("fmod", a, b, err=True), Kind.DOUBLE
            sign = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}[op]
            return f"({a} {sign} {b})", Kind.DOUBLE
        a, b = _cast(a, ka, Kind.LONG), _cast(b, kb, Kind.LONG)
        helper = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
                  ast.Mod: "mod"}[op]  # fmt: skip
        return self.call(helper, a, b, err=helper in ("floordiv", "mod")), Kind.LONG

    def _pow(self, a: str, ka: Kind, b: str, kb: Kind, exponent: ast.expr) -> tuple[str, Kind]:
        if Kind.DOUBLE not in (ka, kb):
            n = exponent.value if isinstance(exponent, ast.Constant) else None
            if isinstance(n, int) and n > MAX_EXPONENT:  # Python raises unless |a| <= 1
                raise Untranslatable(f"an integer power with an exponent above {MAX_EXPONENT}")
            if isinstance(n, int) and n >= 0:
                return self.call("ipow", _cast(a, ka, Kind.LONG), f"{int(n)}L"), Kind.LONG
            if not isinstance(n, int):  # Python: an int where it is >= 0, else a float
                raise Untranslatable("an integer power whose exponent depends on an input")
        a, b = _cast(a, ka, Kind.DOUBLE), _cast(b, kb, Kind.DOUBLE)
        return self.call("pow", a, b, err=True), Kind.DOUBLE

    def _Compare(self, node: ast.Compare) -> tuple[str, Kind]:
        left = self.value(node.left)
        parts = []
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                found = self._member(left, right_node)
                parts.append(found if isinstance(op, ast.In) else f"!{found}")
                left = self.value(right_node) if not isinstance(right_node, ast.Constant) else left
                continue
            right = self.value(right_node)
            parts.append(self._compare(type(op), left, right))
            left = right
        return "(" + " && ".join(parts) + ")", Kind.BOOL

    def _compare(self, op: type[ast.cmpop], left: tuple[str, Kind], right: tuple[str, Kind]) -> str:
        (a, ka), (b, kb) = left, right
        if (ka is Kind.DOUBLE) == (kb is Kind.DOUBLE):
            return f"({a} {_C_CMP[op]} {b})"
        if ka is Kind.DOUBLE:  # the long on the left
            (a, ka), (b, kb), op = (b, kb), (a, ka), _SWAP[op]
        cmp = self.call("cmp", _cast(a, ka, Kind.LONG), b)
        return "(" + _ON_CMP[op].format(cmp) + ")"

    def _member(self, left: tuple[str, Kind], node: ast.expr) -> str:
        if not isinstance(node, ast.Constant):
            raise Untranslatable("'in' a list that depends on an input")
        if not isinstance(node.value, tuple):
            return f"(int){self._after(left[0])[0]}"
        items = [v for v in node.value if isinstance(v, int | float)]  # others are never equal
        found = [self._compare(ast.Eq, left, self.value(ast.Constant(v))) for v in items]
        return "(" + (" || ".join(found) or f"((void){left[0]}, 0)") + ")"

    def _BoolOp(self, node: ast.BoolOp) -> tuple[str, Kind]:
        values = [self.value(v) for v in node.values]
        kind = _common({k for _, k in values})
        is_and = isinstance(node.op, ast.And)
        code = _cast(*values[-1], kind)
        for v, (c, k) in zip(node.values[-2::-1], values[-2::-1], strict=True):
            test = self.truth(v)
            code = f"({'!' if is_and else ''}{test} ? {_cast(c, k, kind)} : {code})"
        return code, kind

    def _IfExp(self, node: ast.IfExp) -> tuple[str, Kind]:
        body, orelse = self.value(node.body), self.value(node.orelse)
        kind = _common({body[1], orelse[1]})
        test = self.truth(node.test)
        return f"({test} ? {_cast(*body, kind)} : {_cast(*orelse, kind)})", kind

    def _Call(self, node: ast.Call) -> tuple[str, Kind]:
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name == "ceil_div" and len(node.args) == 2:
            return self.value(_ceil_div(*node.args))
        if name == "round_up" and len(node.args) == 2:
            return self.value(
                ast.BinOp(left=_ceil_div(*node.args), op=ast.Mult(), right=node.args[1])
            )
        args = [self.value(a) for a in node.args]
        kinds = {k for _, k in args}
        if name in ("min", "max") and len(args) >= 2:
            kind = _common(kinds)
            helper = name if kind is not Kind.DOUBLE else f"f{name}"
            code = _cast(*args[0], kind)
            for c, k in args[1:]:
                code = self.call(helper, code, _cast(c, k, kind))
            return code, (Kind.LONG if kind is Kind.BOOL else kind)
        if name in ("sizeof", "ctype"):
            raise Untranslatable(f"{name} of an input")
        if len(args) != 1 or name not in ("abs", "ceil", "floor", "sqrt", "log2", "is_pow2"):
            return self._after(*(c for c, _ in args))
        (x, kind), = args  # fmt: skip
        return self._one(name, x, kind)

    def _one(self, name: str, x: str, kind: Kind) -> tuple[str, Kind]:
        if name in ("sqrt", "log2"):
            return self.call(name, _cast(x, kind, Kind.DOUBLE), err=True), Kind.DOUBLE
        if name == "is_pow2":
            if kind is Kind.DOUBLE:  # Python's x & (x - 1) fails on a float
                return f"({x} > 0.0 ? (int){self.fail()[0]} : 0)", Kind.BOOL
            x = _cast(x, kind, Kind.LONG)
            return f"({x} > 0 && ({x} & ({x} - 1)) == 0)", Kind.BOOL
        if kind is Kind.DOUBLE:
            if name == "abs":
                self.used.add("fmath")
                return f"fabs({x})", Kind.DOUBLE
            self.used.add("fmath")
            return self.call("toint", f"{name}({x})", err=True), Kind.LONG
        x = _cast(x, kind, Kind.LONG)
        return (self.call("abs", x) if name == "abs" else x), Kind.LONG


def _ceil_div(a: ast.expr, b: ast.expr) -> ast.expr:
    """-(-a // b), as perfport computes it."""
    neg = ast.UnaryOp(op=ast.USub(), operand=a)
    return ast.UnaryOp(op=ast.USub(), operand=ast.BinOp(left=neg, op=ast.FloorDiv(), right=b))


def _cast(code: str, kind: Kind, to: Kind) -> str:
    if kind is to or to is Kind.BOOL:
        return code
    return f"({to.value}){code}"


def _common(kinds: set[Kind]) -> Kind:
    if Kind.DOUBLE in kinds and len(kinds) > 1:
        raise Untranslatable("a value that is an int or a float depending on the input")
    if kinds == {Kind.BOOL}:
        return Kind.BOOL
    return Kind.DOUBLE if Kind.DOUBLE in kinds else Kind.LONG


def checked(rules: LegalRules, inputs: Mapping[str, Kind]) -> LegalRules:
    """``rules`` less those C cannot state faithfully, which are listed as unchecked."""
    for config in rules.configs:
        for check in config.checks:
            try:
                _C(inputs).truth(check.node) if check.truth else _C(inputs).value(check.node)
            except Untranslatable as exc:
                return checked(rules.without(check.label, str(exc)), inputs)
    return rules


def _statement(c: _C, check: Check) -> str:
    if check.truth:
        return f"        if (!{c.truth(check.node)} || perfport_err) return 0; /* {_safe(check.label)} */\n"
    return f"        (void){c.value(check.node)[0]};\n        if (perfport_err) return 0;\n"


def _safe(text: str) -> str:
    return text.replace("*/", "* /").replace("\n", " ")


def legal_functions(
    rules: LegalRules, name: str, inputs: Mapping[str, Kind], args: str, call: str
) -> tuple[str, str]:
    """The helpers with ``NAME_legal`` and ``NAME_select_legal`` (C source), and whether
    <math.h> is needed ("#include <math.h>\\n" or "")."""
    index = legal_index_name(inputs)
    c = _C(inputs)
    cases = []
    for i, config in enumerate(rules.configs):
        if config.never:
            cases.append(f"    case {i}: /* never: {_safe(config.never)} */\n        return 0;\n")
        elif config.checks:
            body = "".join(_statement(c, k) for k in config.checks)
            cases.append(f"    case {i}:\n{body}        return 1;\n")
    unused = "".join(f"    (void){f};\n" for f in inputs)
    order = ", ".join(str(j) for j in rules.order)
    helpers = "".join(HELPERS[h][0] + "\n\n" for h in HELPERS if h in c.used)
    # Locals carry the perfport_ prefix, which no input may take: any other name works.
    source = f"""{helpers}int {name}_legal(int {index}{", " if args else ""}{args})
{{
    int perfport_err = 0;
{unused}    (void)perfport_err;
    if ({index} < 0 || {index} >= {name.upper()}_NUM_CONFIGS) return 0;
    switch ({index}) {{
{"".join(cases)}    default:
        return 1;
    }}
}}

int {name}_select_legal({args or "void"})
{{
    static const int perfport_order[{name.upper()}_NUM_CONFIGS] = {{{order}}};
    int perfport_pick = {name}_select({call});
    int perfport_i;
    if ({name}_legal(perfport_pick{", " if call else ""}{call})) return perfport_pick;
    for (perfport_i = 0; perfport_i < {name.upper()}_NUM_CONFIGS; perfport_i++) {{
        int perfport_j = perfport_order[perfport_i];
        if (perfport_j != perfport_pick && {name}_legal(perfport_j{", " if call else ""}{call})) {{
            return perfport_j;
        }}
    }}
    return -1;
}}
"""
    math_h = (
        "#include <math.h>\n"
        if c.used & (_MATH | {"fmath"}) or "NAN" in source or "HUGE_VAL" in source
        else ""
    )
    return source, math_h


def legal_index_name(inputs: Iterable[str]) -> str:
    """NAME_legal's first argument: ``index``, unless an input takes that name."""
    return "perfport_index" if "index" in inputs else "index"


def unchecked_comment(unchecked: Sequence[str], prefix: str) -> str:
    """The unchecked rules, one a line, for the top of a generated file."""
    if not unchecked:
        return f"{prefix}Every rule of the kernel is checked.\n"
    lines = "".join(f"{prefix}  - {_safe(u)}\n" for u in unchecked)
    return f"{prefix}NOT checked (legal() assumes they hold):\n{lines}"
