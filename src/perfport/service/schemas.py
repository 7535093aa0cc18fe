"""The daemon's request bodies (pydantic, from the 'serve' extra; imported only by
``create_app``, after the check that names the extra)."""

from __future__ import annotations

from typing import Any

import pydantic

from perfport._core import Backend, DeviceInfo, DeviceType, PerfportError


class Device(pydantic.BaseModel):
    """The device's OpenCL (or CUDA) properties, as the launcher queried them."""

    model_config = pydantic.ConfigDict(extra="forbid")
    name: str
    vendor: str = ""
    type: str = "gpu"
    backend: str = "opencl"
    driver: str = ""
    platform: str = ""
    version: str = ""
    compute_units: int = pydantic.Field(gt=0)
    max_work_group_size: int = pydantic.Field(gt=0)
    max_work_item_sizes: list[int] = pydantic.Field(min_length=1, max_length=3)
    local_mem_bytes: int = pydantic.Field(ge=0)
    global_mem_bytes: int = pydantic.Field(default=0, ge=0)
    subgroup_size: int | None = None

    def info(self) -> DeviceInfo:
        try:
            backend, kind = Backend(self.backend), DeviceType(self.type)
        except ValueError as exc:
            raise PerfportError(f"device: {exc}") from None
        return DeviceInfo(f"client:{self.name}", backend, self.name, self.vendor, kind, self.driver,
                          self.platform, self.version, self.compute_units, self.max_work_group_size,
                          tuple(self.max_work_item_sizes), self.local_mem_bytes, self.global_mem_bytes,
                          self.subgroup_size)  # fmt: skip


class PredictRequest(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    # A built-in stencil's name, or a stencil description (described_stencil checks it).
    kernel: str | dict[str, Any]
    problem: dict[str, int | float | str | bool] = pydantic.Field(default_factory=dict)
    device: Device


class RefusedRequest(PredictRequest):
    wg: list[int] = pydantic.Field(min_length=2, max_length=2)
    message: str = pydantic.Field(default="", max_length=2000)
