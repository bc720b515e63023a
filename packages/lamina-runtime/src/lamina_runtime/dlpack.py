"""DLPack import, as `jax.dlpack`: tensors of other libraries as Lamina arrays, shared when
no copy or transfer is asked for."""

from __future__ import annotations

from typing import Any

from lamina_runtime import _bridge_tools
from lamina_runtime.array import Array


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """A Lamina `Array` over `external_array` (anything with `__dlpack__` and
    `__dlpack_device__`), on `device` (a device or sharding) if given; `copy` as the
    Python array API says (None: copy only if needed)."""
    if isinstance(external_array, Array):
        external_array = external_array.jax_array
    return Array(_bridge_tools.device_array_from_dlpack(external_array, device, copy))


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can cross DLPack."""
    return _bridge_tools.is_supported_dlpack_dtype(dtype)


__all__ = ["from_dlpack", "is_supported_dtype"]
