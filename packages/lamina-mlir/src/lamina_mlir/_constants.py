"""Constants in the IR: the value of a literal, from a const arg or as a `stablehlo.constant`.

`ir_constant` first looks the value up in the function's `const_lowering` (by identity, the
way `jaxpr_const_args` made it unique); only values that are not const args are emitted into
the module. Those are scalars, arrays at most `jax_embedded_constants_max_bytes` large,
constants the lowering itself makes, and, with `hoist_constants_as_args=False`, all of them.
Values of a type with a handler in `constant_handlers` (or a base class with one) are emitted by
that handler, which an upper layer or a user registers for their own type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

import numpy as np
from jaxlib.mlir import ir

from lamina_core import dtypes
from lamina_core.ir import AbstractValue, ShapedArray
from lamina_core.trace import is_registered_value, to_numpy
from lamina_mlir import _hlo
from lamina_mlir._mlir_context import ContextCaches, IrValue


def host_array(value: Any, aval: AbstractValue | None) -> np.ndarray:
    """`value` as a host NumPy array of the aval's dtype (device arrays are fetched)."""
    array = np.asarray(to_numpy(value) if is_registered_value(value) else value)
    if isinstance(aval, ShapedArray):
        if aval.dtype == dtypes.float0:
            return np.zeros(aval.shape, np.bool_)
        if array.dtype != aval.dtype:
            with np.errstate(invalid="ignore", over="ignore"):
                array = array.astype(aval.dtype)
    elif array.dtype == dtypes.float0:
        return np.zeros(array.shape, np.bool_)
    ext = dtypes.extended_dtype_of(array.dtype)
    if ext is not None:  # a key array (a structured array): its physical data
        data = np.ascontiguousarray(array).reshape(-1).view(ext.physical_dtype)
        return data.reshape(*array.shape, *ext.physical_shape)
    return array


ConstantHandler: TypeAlias = Callable[[Any, AbstractValue | None], "IrValue | Sequence[IrValue]"]
"""`handler(value, aval)`: the IR values of constant `value` (one, or a sequence of them), built
at the current insertion point; `aval` is the constant's abstract value when it is known."""

constant_handlers: Final[dict[type, ConstantHandler]] = {}
"""Constant handlers by the Python type of the value; written at import, or by a user for their
own type (JAX's `register_constant_handler`)."""


def handled_constant(value: Any, aval: AbstractValue | None) -> tuple[IrValue, ...] | None:
    """The IR values the handler registered for `value`'s type (or its nearest base class with
    one) makes of it, or None when no handler applies."""
    for cls in type(value).__mro__:
        handler = constant_handlers.get(cls)
        if handler is not None:
            out = handler(value, aval)
            return (out,) if isinstance(out, ir.Value) else tuple(out)
    return None


def _array_constant(caches: ContextCaches, array: np.ndarray) -> IrValue:
    if array.ndim and array.size and 0 in array.strides:
        # A broadcast array (np.broadcast_to, np.zeros_like of one): emit the data once and
        # broadcast it, instead of materializing every element in the module.
        zero_stride = {i for i, s in enumerate(array.strides) if s == 0}
        collapsed = array[tuple(0 if i in zero_stride else slice(None) for i in range(array.ndim))]
        kept = [i for i in range(array.ndim) if i not in zero_stride]
        return _hlo.broadcast_in_dim(
            caches, _hlo.constant(caches, collapsed), array.shape, array.dtype, kept
        )
    if array.ndim == 0:
        return _hlo.scalar_constant(caches, array, array.dtype)
    return _hlo.constant(caches, array)


def ir_constant(
    caches: ContextCaches,
    value: Any,
    aval: AbstractValue | None = None,
    const_lowering: Mapping[int, IrValue] | None = None,
) -> IrValue:
    """The IR value of constant `value` (of type `aval`) in the current function.

    Args:
        caches: the module's MLIR context caches.
        value: a Python or NumPy scalar, a NumPy array, or a registered device array.
        aval: its abstract value; needed for Python scalars, whose dtype it gives.
        const_lowering: the current function's const args by `id` of their value.

    Returns:
        The const arg that carries `value`, what a registered handler makes of it, or a new
        `stablehlo.constant` (broadcast when the array has zero strides).

    Raises:
        ValueError: a registered handler made other than one IR value of `value`.
    """
    if const_lowering:
        found = const_lowering.get(id(value))
        if found is not None:
            return found
    if constant_handlers:  # empty unless a handler was registered: literals skip the walk
        handled = handled_constant(value, aval)
        if handled is not None:
            if len(handled) != 1:
                raise ValueError(f"Expected a constant to produce a single ir.Value, got {handled}")
            return handled[0]
    return _array_constant(caches, host_array(value, aval))
