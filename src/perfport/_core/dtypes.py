"""Element types by name: the C name used in kernels and the numpy dtype used on the host."""

from __future__ import annotations

import numpy as np

from perfport._core.errors import SpecError

# C name -> numpy dtype. numpy names (float32, ...) are accepted as aliases.
_C_TYPES: dict[str, np.dtype] = {
    "char": np.dtype(np.int8),
    "uchar": np.dtype(np.uint8),
    "short": np.dtype(np.int16),
    "ushort": np.dtype(np.uint16),
    "int": np.dtype(np.int32),
    "uint": np.dtype(np.uint32),
    "long": np.dtype(np.int64),
    "ulong": np.dtype(np.uint64),
    "half": np.dtype(np.float16),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
}
_ALIASES = {str(dt): c for c, dt in _C_TYPES.items()}

DTYPE_NAMES: tuple[str, ...] = tuple(_C_TYPES) + tuple(_ALIASES)


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype of a C or numpy type name ('float', 'float32', 'int', ...)."""
    c = _ALIASES.get(name, name)
    try:
        return _C_TYPES[c]
    except KeyError:
        raise SpecError(
            f"unknown element type {name!r}: use one of {', '.join(sorted(_C_TYPES))}"
        ) from None


def c_name(name: str) -> str:
    """The C type name of a C or numpy type name."""
    numpy_dtype(name)
    return _ALIASES.get(name, name)


def sizeof(name: str) -> int:
    """Bytes per element."""
    return numpy_dtype(name).itemsize
