"""Shape polymorphism in the lowering: values of symbolic dimensions, and the dynamic ops
that make arrays whose shape depends on them.

A function lowered for symbolic argument shapes takes the dimension variables as leading
scalar arguments (`{jax.global_constant = "b"}`, as JAX's). While its body is lowered,
`dimension_values` holds them by name, and the builders of `_hlo` that make an array of a
symbolic shape (`broadcast_in_dim`, `reshape`, `iota`) emit the dynamic op of StableHLO
instead, with the shape computed from them (`stablehlo.dynamic_broadcast_in_dim`, ...), as
JAX computes it (`_dim_eval`).

A module that calls such a function with static shapes is refined when its lowering ends
(`refine_shapes`, jaxlib's shape refinement, as JAX does before compiling): every dynamic
type becomes static and the shape assertions are checked.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir

from lamina_core import dtypes
from lamina_core.ir import is_symbolic_dim
from lamina_mlir import _hlo
from lamina_mlir._context import ModuleContext
from lamina_mlir._ir_types import tensor_type
from lamina_mlir._mlir_context import ContextCaches, IrValue


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Mapping[str, IrValue], ModuleContext | None]] = []


_SCOPES: Final = _Scopes()
"""Per thread, the dimension variables of the functions being lowered (with the module
they are lowered in), innermost last."""


def dim_dtype() -> np.dtype:
    """The dtype of dimension values (JAX's: the default int, int32 unless x64)."""
    return dtypes.canonicalize_dtype(np.int64)


@contextlib.contextmanager
def dimension_values(
    values: Mapping[str, IrValue], mctx: ModuleContext | None = None
) -> Iterator[None]:
    """Lower with these values of the dimension variables (a function's leading args);
    expressions of them are computed with `mctx`'s functions (`@divmod`)."""
    _SCOPES.stack.append((values, mctx))
    try:
        yield
    finally:
        _SCOPES.stack.pop()


def current_values() -> Mapping[str, IrValue]:
    stack = _SCOPES.stack
    return stack[-1][0] if stack else {}


def dimension_variables(avals: Sequence[Any]) -> tuple[str, ...]:
    """The dimension variables of the avals' shapes, sorted (JAX's order of the arguments)."""
    found: set[str] = set()
    for aval in avals:
        for d in getattr(aval, "shape", ()):
            if is_symbolic_dim(d):
                found |= d.variables()
    return tuple(sorted(found))


def is_dynamic(shape: Sequence[Any]) -> bool:
    return any(is_symbolic_dim(d) for d in shape)


def eval_dims(caches: ContextCaches, dims: Sequence[Any]) -> list[IrValue]:
    """The values of dimensions `dims` (ints or expressions), scalars of `dim_dtype`: the
    expressions computed together first, as JAX's `eval_dynamic_shape`."""
    symbolic = [d for d in dims if is_symbolic_dim(d)]
    if not symbolic:
        return [_hlo.scalar_constant(caches, int(d), dim_dtype()) for d in dims]
    values, mctx = _SCOPES.stack[-1] if _SCOPES.stack else ({}, None)
    missing = set().union(*(d.variables() for d in symbolic)) - set(values)
    if missing or mctx is None:
        raise NotImplementedError(
            f"lowering: the dimension variable {sorted(missing or symbolic[0].variables())[0]!r} "
            "has no value here "
            "(the function being lowered does not take the dimension variables)"
        )
    from lamina_mlir._dim_eval import lower_values  # it lowers jaxprs, which use this

    # The static dimensions too: JAX's computation of a shape makes (unused) constants of
    # them.
    return lower_values(mctx, dims, values)


def eval_dim(caches: ContextCaches, d: Any) -> IrValue:
    """The value of dimension `d` (an int or an expression), a scalar of `dim_dtype`."""
    return eval_dims(caches, [d])[0]


def shape_tensor(caches: ContextCaches, shape: Sequence[Any]) -> IrValue:
    """`shape` as a 1-D tensor of `dim_dtype` (the shape operand of the dynamic ops)."""
    dtype = dim_dtype()
    vector = tensor_type(caches, (1,), dtype)
    values = eval_dims(caches, shape)
    parts = []
    for d, value in zip(shape, values, strict=True):
        if is_symbolic_dim(d):
            parts.append(_hlo.emit1("stablehlo.reshape", vector, value))
        else:
            parts.append(_hlo.constant(caches, np.array([d], dtype)))
    if len(parts) == 1:
        return parts[0]
    return _hlo.emit1(
        "stablehlo.concatenate",
        tensor_type(caches, (len(shape),), dtype),
        *parts,
        attributes={"dimension": _hlo.i64_attr(caches, 0)},
    )


def broadcast_in_dim(
    caches: ContextCaches,
    x: IrValue,
    shape: tuple[Any, ...],
    dtype: np.dtype,
    dimensions: Sequence[int],
) -> IrValue:
    return _hlo.emit1(
        "stablehlo.dynamic_broadcast_in_dim",
        tensor_type(caches, shape, dtype),
        x,
        shape_tensor(caches, shape),
        attributes={"broadcast_dimensions": _hlo.dense_i64_array(caches, dimensions)},
    )


def reshape(caches: ContextCaches, x: IrValue, shape: tuple[Any, ...], dtype: np.dtype) -> IrValue:
    return _hlo.emit1(
        "stablehlo.dynamic_reshape",
        tensor_type(caches, shape, dtype),
        x,
        shape_tensor(caches, shape),
    )


def iota(caches: ContextCaches, shape: tuple[Any, ...], dtype: np.dtype, dimension: int) -> IrValue:
    """An iota of `shape` along `dimension`; `stablehlo.dynamic_iota` if the shape is symbolic."""
    result = tensor_type(caches, shape, dtype)
    attributes = {"iota_dimension": _hlo.i64_attr(caches, dimension)}
    if not is_dynamic(shape):
        return _hlo.emit1("stablehlo.iota", result, attributes=attributes)
    return _hlo.emit1(
        "stablehlo.dynamic_iota", result, shape_tensor(caches, shape), attributes=attributes
    )


REFINE_ATTR: Final = "lamina.refine_shapes"
"""Marks a module that calls a shape-polymorphic function: its shapes are refined when the
lowering ends."""


def refine_shapes(module: ir.Module) -> ir.Module:
    """`module` with the dynamic shapes of the shape-polymorphic functions it calls resolved
    from its static argument shapes, and their shape assertions checked (JAX's refinement).

    Raises:
        ValueError: a shape assertion fails, or a shape stays dynamic.
    """
    del module.operation.attributes[REFINE_ATTR]
    out = io.BytesIO()
    module.operation.write_bytecode(out)
    try:
        refined = _jax.mlir.refine_polymorphic_shapes(
            out.getvalue(), enable_shape_assertions=True, validate_static_shapes=True
        )
    except Exception as err:  # jaxlib raises bare exceptions; the message is the error
        raise ValueError(f"Error refining shapes. {err}") from None
    return ir.Module.parse(refined, module.context)
