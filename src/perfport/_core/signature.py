"""A kernel's parameter list, read from its source, and the check that a spec's ``args``
match it (Kernel Tuner checks its argument list the same way).

A mismatch would otherwise be found one configuration at a time, each built, launched and
stored as a failure (``set_args() missing 1 required positional argument``, INVALID_ARG_SIZE),
or not at all (a ``double`` array read as ``float*``). The list is read only where it can be
read with certainty: a template, a ``##`` paste, a preprocessor line or a macro call inside the
list, a macro that may hold a comma, or an entry defined twice differently skips the whole
check, and a parameter whose type is a name this module does not know (a ``-D`` type macro, a
typedef) is counted but not typed. A false refusal would stop a kernel that works.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from perfport._core.args import Arg, ArrayArg, LocalArg, ScalarArg
from perfport._core.dtypes import DTYPE_NAMES, c_name, numpy_dtype
from perfport._core.errors import SpecError
from perfport._core.records import Language

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# The portable dialect's parameter macros, as its OpenCL prelude expands them (devices/dialect.py;
# that view passes every argument, local buffers and constant arrays included).
_PORTABLE = (
    (re.compile(r"\bLOCAL_PARAM\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)"), r", __local \1* \2"),
    (re.compile(r"\bCONSTANT_PARAM\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)"), r", __constant \1* \2"),
    (re.compile(r"\bKERNEL\b"), "__kernel"),
    (re.compile(r"\bGLOBAL\b"), "__global"),
    (re.compile(r"\bLOCAL(?:_PTR)?\b"), "__local"),
    (re.compile(r"\bRESTRICT\b"), "restrict"),
)
_WORD = re.compile(r"[A-Za-z_]\w*")
_KERNEL_WORD = re.compile(r"\b(?:__kernel|kernel|__global__)\b")
_ATTRIBUTE = r"(?:__attribute__\s*\(\([^;{}]*?\)\)|__launch_bounds__\s*\([^;{}]*?\))\s*"
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\b(?!\()[ \t]*(.*)$", re.M)

_SPACES = {"__global": "global", "__local": "local", "__constant": "constant",
           "__private": "private", "__generic": "generic"}  # fmt: skip
_OPENCL_SPACES = {**_SPACES, **{k.strip("_"): v for k, v in _SPACES.items()}}
_QUALIFIERS = frozenset(("const", "volatile", "restrict", "__restrict", "__restrict__",
                         "__read_only", "read_only", "__write_only", "write_only",
                         "__read_write", "read_write", "__grid_constant__"))  # fmt: skip
_TYPE_WORDS = frozenset(("signed", "unsigned", "char", "short", "int", "long", "float", "double"))
_NAMED = {"uchar": "uint8", "ushort": "uint16", "uint": "uint32", "ulong": "uint64",
          "half": "float16", "__half": "float16", "bool": "", "void": ""}  # fmt: skip
_NAMED |= {f"{u}int{b}_t": f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)}
_CUDA_NAMED = {"size_t": "uint64", "ptrdiff_t": "int64"}
# Vector types (OpenCL's float4, CUDA's float4, longlong2): the element is the scalar's.
_VECTOR = re.compile(r"(u?char|u?short|u?int|u?long|u?longlong|half|float|double)(1|2|3|4|8|16)\Z")
_VECTOR_BASE = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16",
                "int": "int32", "uint": "uint32", "long": "int64", "ulong": "uint64",
                "longlong": "int64", "ulonglong": "uint64", "half": "float16",
                "float": "float32", "double": "float64"}  # fmt: skip


class _Unreadable(Exception):
    """The parameter list cannot be read with certainty: skip the check."""


@dataclass(frozen=True)
class KernelParam:
    """One parameter as far as it is certain: ``None`` where a macro or an unknown type name
    leaves it open."""

    text: str
    pointer: bool | None
    space: str | None  # "global", "local", "constant", ... ("" for a scalar or none given)
    element: np.dtype | None  # the scalar (or pointee's) element type
    lanes: int = 1  # a vector type's width


@functools.lru_cache(maxsize=64)  # a spec is rebuilt by every dataclasses.replace
def read_signature(source: str, entry: str, language: Language) -> tuple[KernelParam, ...] | None:
    """The entry function's parameters, or None where they cannot be read with certainty."""
    text = _COMMENT.sub(" ", source.replace("\\\n", " "))
    comma_macros = _comma_macros(text)
    if language is Language.PORTABLE:
        for pattern, replacement in _PORTABLE:
            text = pattern.sub(replacement, text)
    try:
        lists = _parameter_lists(text, entry)
        found = {_parse_list(t, language, comma_macros) for t in set(lists)}
    except _Unreadable:
        return None
    if len({tuple((p.pointer, p.space, p.element, p.lanes) for p in f) for f in found}) != 1:
        return None  # not found, or defined differently under #if branches
    return found.pop()


def check_args(what: str, source: str, entry: str, language: Language, args: Sequence[Arg]) -> None:
    """Raise SpecError where ``args`` clearly do not match the entry's parameters: another
    number of them, an array for a scalar or the reverse, a local buffer for a parameter that
    is not ``__local``, or an element type of another kind or size."""
    params = read_signature(source, entry, language)
    if params is None:
        return
    passed = list(args)
    if language is Language.CUDA:  # dynamic shared memory and __constant__ arrays are no parameters
        passed = [a for a in args if not isinstance(a, LocalArg) and not _constant(a)]
    if len(params) != len(passed):
        takes = ", ".join(p.text for p in params) or "nothing"
        declared = ", ".join(a.name for a in passed) or "none"
        raise SpecError(
            f"{what}: {entry} takes {len(params)} parameter(s) ({takes}) but args declares "
            f"{len(passed)} ({declared}); declare each argument of the kernel, in order"
        )
    for number, (param, arg) in enumerate(zip(params, passed, strict=True), 1):
        problem = _mismatch(param, arg)
        if problem:
            raise SpecError(
                f"{what}: argument {arg.name} {problem[0]}, but parameter {number} of {entry} "
                f"is '{param.text}'; {problem[1]}"
            )


def _constant(arg: Arg) -> bool:
    return isinstance(arg, ArrayArg) and arg.constant


def _mismatch(param: KernelParam, arg: Arg) -> tuple[str, str] | None:
    """What is wrong with passing ``arg`` for ``param`` and the fix, or None."""
    kind = "a local buffer" if isinstance(arg, LocalArg) else "an array"
    if isinstance(arg, ScalarArg) and param.pointer:
        return "is a scalar", 'declare it kind = "array" (or "local"), or put args in order'
    if not isinstance(arg, ScalarArg) and param.pointer is False:
        return f"is {kind}", 'declare it kind = "scalar", or put args in order'
    if param.space is not None and param.pointer:
        if isinstance(arg, LocalArg) and param.space != "local":
            return "is a local buffer", 'the parameter is not __local: declare it kind = "array"'
        if isinstance(arg, ArrayArg) and param.space == "local":
            return "is an array", 'the parameter is __local: declare it kind = "local" with a count'
    if param.element is None or arg.dtype not in DTYPE_NAMES:
        return None  # a type by a name not known here, or a dtype that is an expression
    given = numpy_dtype(arg.dtype)
    fix = f"declare its dtype as {_c_name(param.element)}"
    if isinstance(arg, ScalarArg):
        if param.lanes > 1:
            return (
                f"is one {arg.dtype}",
                "perfport passes a scalar argument as one element: take a scalar",
            )
        if given.itemsize != param.element.itemsize or _floating(given) != _floating(param.element):
            return f"is {arg.dtype}", fix
        return None
    sizes = {given.itemsize, param.element.itemsize}
    # Same-size views (float data as uint*, half as ushort*, half2 as uint*) and byte views
    # are deliberate.
    whole = given.itemsize == param.element.itemsize * param.lanes
    if (_floating(given) or _floating(param.element)) and len(sizes) > 1 and 1 not in sizes:
        return None if whole else (f"holds {arg.dtype}", fix)
    return None


def _floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def _c_name(dtype: np.dtype) -> str:
    return c_name(str(dtype))


def _comma_macros(text: str) -> set[str]:
    """Object-like macros that may expand to a comma (in their body, or through a macro call
    or another such macro, a ``##`` paste among them): one in a parameter list may be several
    parameters."""
    bodies = dict(_DEFINE.findall(text))
    risky = {name for name, body in bodies.items() if "," in body or "(" in body}
    while grown := {
        n for n, b in bodies.items() if n not in risky and risky & set(_WORD.findall(b))
    }:
        risky |= grown
    return risky


def _parameter_lists(text: str, entry: str) -> list[str]:
    head = re.compile(rf"\bvoid\s+(?:{_ATTRIBUTE})*{re.escape(entry)}\s*\(")
    lists = []
    for match in head.finditer(text):
        line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
        if line.lstrip().startswith("#"):
            continue  # inside a macro's body
        prefix = text[max(text.rfind(c, 0, match.start()) for c in ";{}") + 1 : match.start()]
        if not _KERNEL_WORD.search(prefix) or re.search(r"\btemplate\b", prefix):
            raise _Unreadable  # a kernel made by a macro of its own, or a template
        end = text.find(")", match.end())
        if end < 0 or "(" in text[match.end() : end]:
            raise _Unreadable  # a macro call or an attribute inside the list
        lists.append(text[match.end() : end])
    return lists


def _parse_list(text: str, language: Language, comma_macros: set[str]) -> tuple[KernelParam, ...]:
    if "#" in text or "<" in text:
        raise _Unreadable  # a directive or a template argument inside the list
    parts = text.split(",")
    if len(parts) == 1 and parts[0].strip() in ("", "void"):
        return ()
    return tuple(_parse_param(p, language, comma_macros) for p in parts)


def _parse_param(text: str, language: Language, comma_macros: set[str]) -> KernelParam:
    tokens = re.findall(r"\w+|\S", text)
    shown = " ".join(text.split())
    if not tokens or any(t in comma_macros or t in ("=", ".", ">") for t in tokens):
        raise _Unreadable
    if any(not (re.fullmatch(r"[A-Za-z_]\w*", t) or t == "*") for t in tokens):
        return KernelParam(shown, None, None, None)  # an array declarator, a reference, ...
    cuda = language is Language.CUDA
    spaces = {} if cuda else _OPENCL_SPACES
    names = _NAMED | (_CUDA_NAMED if cuda else {})  # OpenCL takes no size_t parameter
    known = _QUALIFIERS | _TYPE_WORDS | set(names) | set(spaces)
    words = [t for t in tokens if t != "*"]
    named = words[-1] not in known and not _VECTOR.match(words[-1])
    if named and len(words) == 1 and "*" not in tokens:
        raise _Unreadable  # one name alone: a macro that may stand for several parameters
    body = tokens[:-1] if named else tokens
    stars = [i for i, t in enumerate(body) if t == "*"]
    if stars and any(t not in _QUALIFIERS for t in body[stars[-1] + 1 :]):
        raise _Unreadable  # a name after the declarator (a macro that may add parameters)
    head = body[: stars[0]] if stars else body
    space = next((spaces[t] for t in head if t in spaces), None)
    unknown = [t for t in head if t not in known and not _VECTOR.match(t)]
    typed = [t for t in head if t in _TYPE_WORDS or t in names or _VECTOR.match(t)]
    if unknown and typed and head.index(unknown[0]) > head.index(typed[0]):
        raise _Unreadable  # a type, then a name that is not the parameter's
    pointer = bool(stars) if stars or not unknown else None
    if unknown:  # a macro or typedef: its type is not known, and neither its space unless given
        return KernelParam(shown, pointer, space, None)
    if len(stars) > 1:
        return KernelParam(shown, True, space, None)
    element, lanes = _element(typed, names)
    return KernelParam(shown, pointer, space or ("" if not stars else "global"), element, lanes)


def _element(words: list[str], names: dict[str, str]) -> tuple[np.dtype | None, int]:
    """The element type of a parameter's type words (``unsigned long``, ``uint4``, ...)."""
    vector = next((m for w in words if (m := _VECTOR.match(w))), None)
    if vector:
        return np.dtype(_VECTOR_BASE[vector[1]]), int(vector[2])
    named = [names[w] for w in words if w in names]
    if named or {"long", "double"} <= set(words):  # long double: no dtype of ours
        return (np.dtype(named[0]) if named and named[0] else None), 1
    if "float" in words or "double" in words:
        return np.dtype("float32" if "float" in words else "float64"), 1
    bits = 8 if "char" in words else 16 if "short" in words else 64 if "long" in words else 32
    return np.dtype(f"{'u' if 'unsigned' in words else ''}int{bits}"), 1
