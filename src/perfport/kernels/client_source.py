"""Checks on kernel source that a client sends (the daemon's described stencils): the body is
compiled on the server, so nothing in it may reach the server's file system or stall the
compiler through the preprocessor."""

from __future__ import annotations

import re

from perfport._core import SpecError

# Line splices (backslash-newline) join tokens before the compiler sees them: check the text
# as the compiler will read it.
_SPLICE = re.compile(r"\\[ \t]*\r?\n")
# Identifiers that name or probe files (__FILE__, __has_include), run pragmas without a
# directive (_Pragma), or hand text to the assembler, whose .incbin reads a file.
_FORBIDDEN_NAMES = re.compile(
    r"\b(_Pragma|__pragma|__has_include|__has_include_next|__has_embed|__FILE__|__FILE_NAME__|"
    r"__BASE_FILE__|__builtin_FILE|__builtin_FILE_NAME|__TIMESTAMP__|__INCLUDE_LEVEL__|"
    r"asm|__asm|__asm__)\b"
)
# '#' starts every directive (#include, #import, #line, #pragma, #embed, #define); '%:' and
# '??=' are its digraph and trigraph spellings, and '??/' spells the splicing backslash.
_DIRECTIVE = re.compile(r"#|%:|\?\?[=/'()!<>-]")


def check_client_source(body: str, where: str = "kernel body") -> None:
    """SpecError (one line) unless ``body`` is plain C without preprocessor directives and
    without the names that reach files. A body needs no directive: the template defines
    ``ELEM``, ``OUT``, ``GET`` and the border sizes for it."""
    text = _SPLICE.sub("", body)
    directive = _DIRECTIVE.search(text)
    if directive:
        raise SpecError(
            f"{where}: preprocessor syntax ({directive.group()!r}) is not accepted in a kernel "
            "sent to the daemon; write plain C (ELEM, OUT, GET and the borders are defined)"
        )
    name = _FORBIDDEN_NAMES.search(text)
    if name:
        raise SpecError(
            f"{where}: {name.group()} is not accepted in a kernel sent to the daemon (it can "
            "reach the server's files); write plain C"
        )


_LOG_PATH = re.compile(r"^.*?(?=:\d+:\d+:)")  # '/tmp/pocl-xyz/program.cl' before 'line:col:'


def first_error_line(log: str, limit: int = 200) -> str:
    """The first line of a compiler log that reports an error, without the file's path and at
    most ``limit`` characters: what a client may see of a failed build."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    chosen = next((line for line in lines if "error" in line.lower()), "the build failed")
    chosen = _LOG_PATH.sub("", chosen, count=1).lstrip(":")
    return chosen[:limit]
