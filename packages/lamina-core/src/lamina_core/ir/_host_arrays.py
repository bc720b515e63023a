"""Host arrays of float0, the tangent type of integers and booleans.

float0 has no device representation, so JAX hands such values back as host NumPy arrays of
its own `TypedNdArray` subclass (what `grad(..., allow_int=True)` returns for an integer input,
eagerly and from `jit`). `TypedNdArray` here is that type as users see it: a NumPy array that
prints under that name and whose operations give plain NumPy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core.ir import dtypes


class TypedNdArray(np.ndarray):
    """A host array as JAX returns float0 values: prints as `TypedNdArray(...)`."""

    __slots__ = ()

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # Operations see plain arrays, so their results are plain NumPy arrays (as JAX's).
        inputs = tuple(np.asarray(x) if isinstance(x, TypedNdArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(
                np.asarray(x) if isinstance(x, TypedNdArray) else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __repr__(self) -> str:
        prefix = "TypedNdArray("
        dtype_text = f"dtype={self.dtype.name})"
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(
                np.asarray(self),
                prefix=prefix,
                suffix=",",
                separator=", ",
                max_line_width=np.get_printoptions()["linewidth"],
            )
        # The dtype goes on the last line if it fits there, else on a line of its own,
        # aligned with the elements, as NumPy places it in an array's repr.
        last_line = len(body) - body.rfind("\n") + 1
        fits = last_line + len(dtype_text) + 1 <= np.get_printoptions()["linewidth"]
        gap = " " if fits else " " * len(prefix)
        return f"{prefix}{body},{gap}{dtype_text}"


def float0_zeros(shape: tuple[int, ...]) -> TypedNdArray:
    """The float0 value of `shape` (there is only one), as a host array."""
    return np.zeros(shape, dtypes.float0).view(TypedNdArray)
