"""The daemon's request bodies (pydantic, from the 'serve' extra; imported only by
``create_app``, after the check that names the extra). Every field is bounded (string
lengths, integer ranges, list and map sizes), so a request costs bounded memory and every
value fits the store and the features; the published OpenAPI schema states the bounds."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

import pydantic

from perfport._core import Backend, DeviceInfo, DeviceType
from perfport._core.records import CLIENT_PREFIX
from perfport.kernels.stencil import MAX_BODY, MAX_BORDER
from perfport.kernels.stencils import STENCILS

INT32 = 2**31 - 1
BYTES = 2**52  # memory sizes: exact as floats in the features, far above any device
MAX_BODY_BYTES = 4 * MAX_BODY + 16_384  # the request body: the largest stencil, JSON-escaped


def _unicode(text: str) -> str:
    # A lone surrogate is valid in a JSON string but not in UTF-8: the store and every reply
    # would fail to encode it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return text


_UNICODE = pydantic.AfterValidator(_unicode)
Name: TypeAlias = Annotated[str, pydantic.StringConstraints(max_length=200), _UNICODE]
Identifier: TypeAlias = Annotated[
    str, pydantic.StringConstraints(max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"), _UNICODE
]
Body: TypeAlias = Annotated[str, pydantic.StringConstraints(max_length=MAX_BODY), _UNICODE]
# The built-in kernels a prediction can be about (stencils with work-group parameters); the
# schema lists them, so a client (or a fuzzer) sees which names exist.
STENCIL_NAMES = tuple(sorted({*STENCILS, "stencil"}))


def _stencil_name(name: str) -> str:
    if name not in STENCIL_NAMES:
        raise ValueError(f"not a built-in stencil; give one of {', '.join(STENCIL_NAMES)}")
    return name


KernelName: TypeAlias = Annotated[
    str,
    pydantic.AfterValidator(_stencil_name),
    pydantic.WithJsonSchema({"type": "string", "enum": list(STENCIL_NAMES)}),
]
Message: TypeAlias = Annotated[str, pydantic.StringConstraints(max_length=2000), _UNICODE]
ProblemValue = (
    Annotated[bool, pydantic.Field(strict=True)]
    | Annotated[int, pydantic.Field(ge=-(2**62), le=2**62, strict=True)]
    | Annotated[float, pydantic.Field(allow_inf_nan=False, strict=True)]
    | Name
)


def _one_of(enum: Any) -> Any:
    """A validator: the text is a value of ``enum`` (422 naming them, like any other field)."""

    def check(text: str) -> str:
        if text not in {e.value for e in enum}:
            raise ValueError(f"{text!r:.40} is not one of {', '.join(e.value for e in enum)}")
        return text

    return pydantic.AfterValidator(check)


DeviceTypeName: TypeAlias = Annotated[Name, _one_of(DeviceType)]
BackendName: TypeAlias = Annotated[Name, _one_of(Backend)]


class Device(pydantic.BaseModel):
    """The device's OpenCL (or CUDA) properties, as the launcher queried them."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: Name
    vendor: Name = ""
    type: DeviceTypeName = "gpu"
    backend: BackendName = "opencl"
    driver: Name = ""
    platform: Name = ""
    version: Name = ""
    compute_units: int = pydantic.Field(gt=0, le=INT32)
    max_work_group_size: int = pydantic.Field(gt=0, le=INT32)
    # One limit per dimension; the stencils are 2-D, so a limit for each of x and y.
    max_work_item_sizes: list[Annotated[int, pydantic.Field(gt=0, le=INT32)]] = pydantic.Field(
        min_length=2, max_length=3
    )
    local_mem_bytes: int = pydantic.Field(ge=0, le=BYTES)
    global_mem_bytes: int = pydantic.Field(default=0, ge=0, le=BYTES)
    subgroup_size: int | None = pydantic.Field(default=None, gt=0, le=INT32)
    # What ``DeviceInfo.to_json`` also says of a CPU (issue 31), so a launcher may send it whole.
    vector_width: int | None = pydantic.Field(default=None, gt=0, le=INT32)
    cache_bytes: int | None = pydantic.Field(default=None, ge=0, le=BYTES)
    cache_line_bytes: int | None = pydantic.Field(default=None, ge=0, le=INT32)

    def info(self) -> DeviceInfo:
        backend, kind = Backend(self.backend), DeviceType(self.type)  # checked by the schema
        return DeviceInfo(f"{CLIENT_PREFIX}{self.name}", backend, self.name, self.vendor, kind, self.driver,
                          self.platform, self.version, self.compute_units, self.max_work_group_size,
                          tuple(self.max_work_item_sizes), self.local_mem_bytes, self.global_mem_bytes,
                          self.subgroup_size, vector_width=self.vector_width,
                          cache_bytes=self.cache_bytes,
                          cache_line_bytes=self.cache_line_bytes)  # fmt: skip


class Stencil(pydantic.BaseModel):
    """A stencil of the client's own (``perfport.kernels.described_stencil``): its C body
    (plain C: no preprocessor) and border sizes."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: Identifier
    body: Body
    north: int = pydantic.Field(default=0, ge=0, le=MAX_BORDER, strict=True)
    south: int = pydantic.Field(default=0, ge=0, le=MAX_BORDER, strict=True)
    east: int = pydantic.Field(default=0, ge=0, le=MAX_BORDER, strict=True)
    west: int = pydantic.Field(default=0, ge=0, le=MAX_BORDER, strict=True)
    # Its element types (the problem can still override them); absent: float, 'same'.
    dtype: Literal["int", "float", "double"] | None = None
    out_dtype: Literal["int", "float", "double", "same"] | None = None


class PredictRequest(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    # A built-in stencil's name, or a stencil description.
    kernel: KernelName | Stencil
    problem: dict[Identifier, ProblemValue] = pydantic.Field(default_factory=dict, max_length=32)
    device: Device

    def kernel_given(self) -> str | dict[str, Any]:
        return (
            self.kernel
            if isinstance(self.kernel, str)
            else self.kernel.model_dump(exclude_none=True)
        )


class RefusedRequest(PredictRequest):
    wg: list[Annotated[int, pydantic.Field(gt=0, le=INT32)]] = pydantic.Field(
        min_length=2, max_length=2
    )
    message: Message = ""


class ErrorBody(pydantic.BaseModel):
    """Every 4xx and 5xx answer: one line naming the problem and what to do."""

    detail: str
