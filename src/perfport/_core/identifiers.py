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
