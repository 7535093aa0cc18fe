"""Identifiers: what a name in kernel source or generated code may be, and which words it
must not take. The one home of these lists (kernel specs and the selector code generator
share them)."""

from __future__ import annotations

import keyword
import re

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Words of OpenCL C and CUDA C++ that a -D macro of the same name would rewrite.
KERNEL_WORDS = frozenset((
    "auto", "bool", "break", "case", "char", "const", "constant", "continue", "default", "do",
    "double", "else", "enum", "extern", "false", "float", "for", "global", "goto", "half", "if",
    "inline", "int", "kernel", "local", "long", "NULL", "private", "read_only", "read_write",
    "register", "restrict", "return", "short", "signed", "size_t", "sizeof", "static", "struct",
    "switch", "true", "typedef", "union", "unsigned", "void", "volatile", "while", "write_only",
))  # fmt: skip

# Built-in functions of OpenCL C (1.2 and 2.0) and CUDA device code: a kernel or function of
# the same name conflicts with them on strict compilers (NVIDIA's OpenCL rejects a kernel
# named ``barrier``, PoCL accepts it). Families with a common stem are in BUILTIN_PREFIXES.
KERNEL_BUILTINS = frozenset((
    # work-items and synchronisation
    "get_work_dim", "get_global_size", "get_global_id", "get_local_size", "get_local_id",
    "get_num_groups", "get_group_id", "get_global_offset", "get_enqueued_local_size",
    "get_global_linear_id", "get_local_linear_id", "barrier", "work_group_barrier",
    "mem_fence", "read_mem_fence", "write_mem_fence", "async_work_group_copy",
    "async_work_group_strided_copy", "wait_group_events", "prefetch", "printf",
    "enqueue_kernel", "enqueue_marker", "ndrange_1D", "ndrange_2D", "ndrange_3D",
    # maths
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atan2", "atanh", "atanpi",
    "atan2pi", "cbrt", "ceil", "copysign", "cos", "cosh", "cospi", "erfc", "erf", "exp",
    "exp2", "exp10", "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "fract",
    "frexp", "hypot", "ilogb", "ldexp", "lgamma", "lgamma_r", "log", "log2", "log10", "log1p",
    "logb", "mad", "maxmag", "minmag", "modf", "nan", "nextafter", "pow", "pown", "powr",
    "remainder", "remquo", "rint", "rootn", "round", "rsqrt", "sin", "sincos", "sinh", "sinpi",
    "sqrt", "tan", "tanh", "tanpi", "tgamma", "trunc",
    # integer, common, geometric and relational
    "abs", "abs_diff", "add_sat", "hadd", "rhadd", "clamp", "clz", "ctz", "mad_hi", "mad_sat",
    "max", "min", "mul_hi", "rotate", "sub_sat", "upsample", "popcount", "mad24", "mul24",
    "degrees", "mix", "radians", "step", "smoothstep", "sign", "cross", "dot", "distance",
    "length", "normalize", "fast_distance", "fast_length", "fast_normalize", "isequal",
    "isnotequal", "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater",
    "isfinite", "isinf", "isnan", "isnormal", "isordered", "isunordered", "signbit", "any",
    "all", "bitselect", "select", "shuffle", "shuffle2",
    # images and work-group functions
    "read_imagef", "read_imagei", "read_imageui", "write_imagef", "write_imagei",
    "write_imageui", "get_image_width", "get_image_height", "get_image_depth",
    "work_group_all", "work_group_any", "work_group_broadcast",
    # CUDA device built-ins without a leading __
    "atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc",
    "atomicDec", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "clock", "clock64",
    "assert", "malloc", "free", "memcpy", "memset",
))  # fmt: skip
BUILTIN_PREFIXES = (
    "native_",
    "half_",
    "convert_",
    "as_",
    "atomic_",
    "atom_",
    "vload",
    "vstore",
    "sub_group_",
    "work_group_",
    "get_sub_group",
    "get_image_",
    "read_image",
    "write_image",
)

# Keywords of C and C++ (a generated header is read by both).
C_CPP_KEYWORDS = frozenset((
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "class",
    "namespace", "template", "this", "new", "delete", "operator", "private", "public",
    "protected", "virtual", "friend",
))  # fmt: skip


def is_identifier(name: object) -> bool:
    """A C-style identifier: a letter or _, then letters, digits or _."""
    return isinstance(name, str) and IDENT.match(name) is not None


def is_kernel_word(name: str) -> bool:
    """A word of OpenCL C or CUDA, or a name reserved to the implementation (leading __)."""
    return name in KERNEL_WORDS or name.startswith("__")


def is_code_keyword(name: str) -> bool:
    """A C, C++ or Python keyword: no generated name may be one."""
    return name in C_CPP_KEYWORDS or keyword.iskeyword(name)


def is_builtin_name(name: str) -> bool:
    """A keyword or built-in function of OpenCL C or CUDA, or a name of a built-in family
    (``convert_float4``, ``vload4``): no kernel or function may take it."""
    return is_kernel_word(name) or name in KERNEL_BUILTINS or name.startswith(BUILTIN_PREFIXES)


def is_printable_name(name: object) -> bool:
    """A name fit for tables: 1-200 characters, none blank-only or a control character (an
    escape sequence in a name would drive the terminal; a very long one stalls rich's wrap)."""
    return isinstance(name, str) and bool(name.strip()) and len(name) <= 200 and name.isprintable()
