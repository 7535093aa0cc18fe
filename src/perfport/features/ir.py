"""Static instruction counts of a kernel, read from the LLVM IR that PoCL compiles.

PoCL's program binaries (``poclbin``) embed the kernel's LLVM bitcode after the marker
``/program.bc`` and a little-endian uint32 length; llvmlite parses it. This is Cummins et al.'s
method (LLVM statistics over the compiled kernel) with nothing but pip packages.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Iterator, Mapping

from perfport._core import BuildError, DeviceError, KernelSpec, Language, SpecError
from perfport._core.optional import require
from perfport.devices import list_devices, open_session
from perfport.features.cache import FeatureCache, feature_key

# LLVM opcode -> instruction class.
CLASSES: dict[str, tuple[str, ...]] = {
    "memory": ("load", "store", "alloca", "getelementptr", "atomicrmw", "cmpxchg", "fence"),
    "int_arith": ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem"),
    "bitwise": ("shl", "lshr", "ashr", "and", "or", "xor"),
    "float_arith": ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg"),
    "compare": ("icmp", "fcmp"),
    "branch": ("br", "switch", "indirectbr", "ret", "unreachable"),
    "phi_select": ("phi", "select"),
    "call": ("call", "invoke"),
    "conversion": (
        "trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
        "ptrtoint", "inttoptr", "bitcast", "addrspacecast",
    ),
    "vector": ("extractelement", "insertelement", "shufflevector", "extractvalue", "insertvalue"),
}  # fmt: skip
_CLASS_OF = {op: name for name, ops in CLASSES.items() for op in ops}
CLASS_NAMES: tuple[str, ...] = (*CLASSES, "other")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """LLVM warns on stderr about PoCL's debug-info version; the counts are unaffected."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def bitcode_of(binary: bytes) -> bytes:
    """The LLVM bitcode inside a PoCL program binary."""
    marker = binary.find(b"/program.bc")
    if not binary.startswith(b"poclbin") or marker < 0:
        raise ValueError("not a PoCL program binary with embedded bitcode")
    start = marker + len(b"/program.bc")
    length = int.from_bytes(binary[start : start + 4], "little")
    code = binary[start + 4 : start + 4 + length]
    if not code.startswith(b"BC\xc0\xde") or len(code) != length:
        raise ValueError("the embedded bitcode is truncated or not LLVM bitcode")
    return code


def opcode_counts(bitcode: bytes) -> Counter[str]:
    """How many instructions of each LLVM opcode the module's functions hold."""
    llvm = require("llvmlite.binding", "features", "Kernel features (LLVM instruction counts)")
    with _quiet_stderr():
        module = llvm.parse_bitcode(bitcode)
    counts: Counter[str] = Counter()
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                counts[instruction.opcode] += 1
    return counts


def class_counts(opcodes: Mapping[str, int]) -> dict[str, int]:
    """Opcode counts summed into the instruction classes of CLASS_NAMES."""
    out = dict.fromkeys(CLASS_NAMES, 0)
    for op, n in opcodes.items():
        out[_CLASS_OF.get(op, "other")] += n
    return out


def pocl_device_id() -> str:
    for d in list_devices():
        if "Portable Computing Language" in d.platform:
            return d.id
    raise DeviceError(
        "kernel features need PoCL's CPU device: pip install 'perfport[pocl,features]'"
    )


_CACHED = 4096
_CACHE: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, int]] = {}


def cached_classes(spec: KernelSpec, defines: Mapping[str, str]) -> dict[str, int] | None:
    """The counts ``instruction_classes`` remembers for ``spec`` and ``defines``, or None."""
    return _CACHE.get((spec.source_hash, tuple(sorted(defines.items()))))


def remember_classes(spec: KernelSpec, defines: Mapping[str, str], counts: dict[str, int]) -> None:
    """Store counts computed elsewhere (the daemon compiles in a separate, limited process)."""
    if len(_CACHE) >= _CACHED:
        _CACHE.clear()
    _CACHE[(spec.source_hash, tuple(sorted(defines.items())))] = dict(counts)


def instruction_classes(
    spec: KernelSpec, defines: Mapping[str, str], disk: FeatureCache | None = None
) -> dict[str, int]:
    """Instruction counts by class for ``spec`` compiled with ``defines`` (remembered in this
    process, and in ``disk`` across processes)."""
    key = (spec.source_hash, tuple(sorted(defines.items())))
    stored = feature_key(spec, defines, CLASS_NAMES) if disk is not None else ""
    if key not in _CACHE and disk is not None and (found := disk.get(stored, CLASS_NAMES)):
        remember_classes(spec, defines, found)
    if key not in _CACHE:
        if spec.language is Language.CUDA:
            raise SpecError(
                f"kernel {spec.name} is CUDA C; instruction counts come from OpenCL builds: "
                "write it in OpenCL C or the portable dialect"
            )
        device = next(d for d in list_devices() if d.id == pocl_device_id())
        session = open_session(device)
        try:
            compiled = session.compile(
                spec.source, spec.language, spec.entry, defines, spec.include_dirs
            )
        except BuildError as exc:
            raise SpecError(
                f"kernel {spec.name} does not compile for its features: {exc}; fix its source"
            ) from None
        binary = compiled.program.binaries[0]  # type: ignore[attr-defined]
        if len(_CACHE) >= _CACHED:  # a daemon compiles whatever stencils its clients describe
            _CACHE.clear()
        _CACHE[key] = class_counts(opcode_counts(bitcode_of(binary)))
        if disk is not None:
            disk.put(stored, _CACHE[key])
    return _CACHE[key]
