"""IR types of dtypes and abstract values, memoized per MLIR context.

The dtype table follows XLA's conventions as JAX uses them: signless integers for signed
ints and bool (`i1`), unsigned integer types for unsigned ints, and `float0` (the tangent
type of integers) as `i1`. Abstract values map to IR types through `ir_type_rules`, keyed by
the aval's class, so an upper layer can lower its own kinds of value; core's `ShapedArray`
is a ranked tensor.

The functions here need an active MLIR context (`with context:`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Final

import numpy as np
from jaxlib.mlir import ir

from lamina_core import dtypes
from lamina_core.ir import AbstractValue, ShapedArray, is_symbolic_dim
from lamina_mlir._mlir_context import ContextCaches

_DTYPE_TYPES: Final[dict[np.dtype, Callable[[], ir.Type]]] = {
    dtypes.float0: partial(ir.IntegerType.get_signless, 1),
    dtypes.bool_: partial(ir.IntegerType.get_signless, 1),
    dtypes.int1: partial(ir.IntegerType.get_signless, 1),
    dtypes.int2: partial(ir.IntegerType.get_signless, 2),
    dtypes.int4: partial(ir.IntegerType.get_signless, 4),
    dtypes.int8: partial(ir.IntegerType.get_signless, 8),
    dtypes.int16: partial(ir.IntegerType.get_signless, 16),
    dtypes.int32: partial(ir.IntegerType.get_signless, 32),
    dtypes.int64: partial(ir.IntegerType.get_signless, 64),
    dtypes.uint1: partial(ir.IntegerType.get_unsigned, 1),
    dtypes.uint2: partial(ir.IntegerType.get_unsigned, 2),
    dtypes.uint4: partial(ir.IntegerType.get_unsigned, 4),
    dtypes.uint8: partial(ir.IntegerType.get_unsigned, 8),
    dtypes.uint16: partial(ir.IntegerType.get_unsigned, 16),
    dtypes.uint32: partial(ir.IntegerType.get_unsigned, 32),
    dtypes.uint64: partial(ir.IntegerType.get_unsigned, 64),
    dtypes.float8_e3m4: ir.Float8E3M4Type.get,
    dtypes.float8_e4m3: ir.Float8E4M3Type.get,
    dtypes.float8_e8m0fnu: ir.Float8E8M0FNUType.get,
    dtypes.float8_e4m3b11fnuz: ir.Float8E4M3B11FNUZType.get,
    dtypes.float8_e4m3fn: ir.Float8E4M3FNType.get,
    dtypes.float8_e4m3fnuz: ir.Float8E4M3FNUZType.get,
    dtypes.float8_e5m2: ir.Float8E5M2Type.get,
    dtypes.float8_e5m2fnuz: ir.Float8E5M2FNUZType.get,
    dtypes.float6_e2m3fn: ir.Float6E2M3FNType.get,
    dtypes.float6_e3m2fn: ir.Float6E3M2FNType.get,
    dtypes.float4_e2m1fn: ir.Float4E2M1FNType.get,
    dtypes.bfloat16: ir.BF16Type.get,
    dtypes.float16: ir.F16Type.get,
    dtypes.float32: ir.F32Type.get,
    dtypes.float64: ir.F64Type.get,
    dtypes.complex64: lambda: ir.ComplexType.get(ir.F32Type.get()),
    dtypes.complex128: lambda: ir.ComplexType.get(ir.F64Type.get()),
}


def dtype_to_ir_type(caches: ContextCaches, dtype: np.dtype) -> ir.Type:
    """The element type of `dtype`.

    Raises:
        TypeError: `dtype` has no IR element type.
    """
    found = caches.types.get(dtype)
    if found is None:
        try:
            factory = _DTYPE_TYPES[np.dtype(dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"lowering: no MLIR element type for dtype {dtype!r}") from None
        found = caches.types[dtype] = factory()
    return found


_INT_ONLY: Final = frozenset({int})


def tensor_type(caches: ContextCaches, shape: tuple[int, ...], dtype: np.dtype) -> ir.Type:
    """`tensor<shape x dtype>`; an extended dtype's is its physical array's type."""
    key = (shape, dtype)
    found = caches.types.get(key)
    if found is None:
        ext = dtypes.extended_dtype_of(dtype)
        if ext is not None:
            found = caches.types[key] = tensor_type(
                caches, (*shape, *ext.physical_shape), ext.physical_dtype
            )
            return found
        element = dtype_to_ir_type(caches, dtype)
        if not _INT_ONLY.issuperset(map(type, shape)):  # symbolic dimensions are dynamic: `?`
            dynamic = ir.ShapedType.get_dynamic_size()
            shape = tuple(dynamic if is_symbolic_dim(d) else d for d in shape)
        found = caches.types[key] = ir.RankedTensorType.get(shape, element)
    return found


IrTypeRule = Callable[[ContextCaches, AbstractValue], ir.Type]
"""`rule(caches, aval)`: the single IR type that values of `aval` lower to."""

ir_type_rules: Final[dict[type[AbstractValue], IrTypeRule]] = {}
"""IR types by aval class; written at import by the layer that defines the class."""


def _shaped_array_ir_type(caches: ContextCaches, aval: AbstractValue) -> ir.Type:
    assert isinstance(aval, ShapedArray)
    return tensor_type(caches, aval.shape, aval.dtype)


ir_type_rules[ShapedArray] = _shaped_array_ir_type


def aval_to_ir_type(caches: ContextCaches, aval: AbstractValue) -> ir.Type:
    """The IR type of values of `aval`.

    Raises:
        TypeError: no layer registered an IR type for `aval`'s class (hi types and Refs must
            be lowered to arrays first, by to-lojax and discharge).
    """
    if type(aval) is ShapedArray:  # the hot path: one dict probe keyed by the aval itself
        key = (aval.shape, aval.dtype)
        found = caches.types.get(key)
        if found is not None:
            return found
    rule = ir_type_rules.get(type(aval))
    if rule is None:
        raise TypeError(
            f"lowering: no MLIR type for abstract value {aval.str_short(True)} of type "
            f"{type(aval).__name__}; hi types and Refs must be lowered to arrays first "
            f"(to-lojax, discharge), or register a rule in lamina_mlir.ir_type_rules"
        )
    return rule(caches, aval)
