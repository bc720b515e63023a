"""Small builders for StableHLO ops and attributes, shared by the lowering rules.

Ops are made with `ir.Operation.create` and explicit result types: the dialects' generated
builders infer result types in C++ and cost about 4x as much per op (measured), and the
lowering always knows the result types from the avals. Attributes that repeat (dimension
lists, comparison kinds) are memoized in the context's `ContextCaches`.

Everything here needs an active MLIR context, location and insertion point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core import dtypes
from lamina_core.ir import is_symbolic_dim
from lamina_mlir._ir_types import dtype_to_ir_type, tensor_type
from lamina_mlir._mlir_context import ContextCaches, IrValue

_INT_ONLY = frozenset({int})


def emit(
    name: str,
    result_types: Sequence[ir.Type],
    operands: Sequence[IrValue],
    attributes: Mapping[str, ir.Attribute] | None = None,
    regions: int = 0,
) -> ir.Operation:
    """Create op `name` at the current insertion point and location."""
    return ir.Operation.create(
        name,
        results=list(result_types),
        operands=list(operands),
        attributes=dict(attributes) if attributes else None,
        regions=regions,
    )


def emit1(
    name: str,
    result_type: ir.Type,
    *operands: IrValue,
    attributes: Mapping[str, ir.Attribute] | None = None,
) -> IrValue:
    """Create a single-result op and return its result."""
    return ir.Operation.create(
        name,
        results=[result_type],
        operands=operands,
        attributes=attributes,  # type: ignore[arg-type]  # the bindings accept any mapping
    ).result


def dense_i64_array(caches: ContextCaches, values: Sequence[int]) -> ir.Attribute:
    key = ("i64[]", tuple(int(v) for v in values))
    found = caches.attributes.get(key)
    if found is None:
        found = caches.attributes[key] = ir.DenseI64ArrayAttr.get(list(key[1]))
    return found


def i64_attr(caches: ContextCaches, value: int) -> ir.Attribute:
    key = ("i64", int(value))
    found = caches.attributes.get(key)
    if found is None:
        found = caches.attributes[key] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(64), int(value)
        )
    return found


def i32_attr(caches: ContextCaches, value: int) -> ir.Attribute:
    key = ("i32", int(value))
    found = caches.attributes.get(key)
    if found is None:
        found = caches.attributes[key] = ir.IntegerAttr.get(
            ir.IntegerType.get_signless(32), int(value)
        )
    return found


def bool_attr(caches: ContextCaches, value: bool) -> ir.Attribute:
    key = ("bool", bool(value))
    found = caches.attributes.get(key)
    if found is None:
        found = caches.attributes[key] = ir.BoolAttr.get(bool(value))
    return found


_KINDS: dict[np.dtype, str] = {}
"""Memo of `kind`: NumPy's dtype kinds say nothing of ML dtypes (bfloat16 is kind `V`)."""


def kind(dtype: np.dtype) -> str:
    """`b` bool, `i` signed or `u` unsigned integer, `f` real or `c` complex floating."""
    found = _KINDS.get(dtype)
    if found is None:
        if dtypes.issubdtype(dtype, np.complexfloating):
            found = "c"
        elif dtypes.issubdtype(dtype, np.floating):
            found = "f"
        elif dtypes.issubdtype(dtype, np.signedinteger):
            found = "i"
        elif dtypes.issubdtype(dtype, np.unsignedinteger):
            found = "u"
        else:
            found = "b"
        _KINDS[dtype] = found
    return found


def compare_type(dtype: np.dtype) -> str:
    """XLA's comparison type for operands of `dtype`: FLOAT, SIGNED or UNSIGNED (bool too)."""
    k = kind(dtype)
    return "FLOAT" if k in "fc" else "SIGNED" if k == "i" else "UNSIGNED"


def _compare_attrs(caches: ContextCaches, direction: str, kind: str) -> dict[str, ir.Attribute]:
    key = ("cmp", direction, kind)
    found: Any = caches.attributes.get(key)
    if found is None:
        found = {
            "comparison_direction": hlo.ComparisonDirectionAttr.get(direction),
            "compare_type": hlo.ComparisonTypeAttr.get(kind),
        }
        caches.attributes[key] = found
    return found  # type: ignore[no-any-return]  # the cache holds this dict under this key


def compare(caches: ContextCaches, x: IrValue, y: IrValue, direction: str, kind: str) -> IrValue:
    """`stablehlo.compare direction, x, y, kind` with a boolean result of x's shape."""
    shape = tuple(ir.RankedTensorType(x.type).shape)
    result = tensor_type(caches, shape, np.dtype(bool))
    return emit1(
        "stablehlo.compare", result, x, y, attributes=_compare_attrs(caches, direction, kind)
    )


def select(pred: IrValue, on_true: IrValue, on_false: IrValue) -> IrValue:
    return emit1("stablehlo.select", on_true.type, pred, on_true, on_false)


def dense_elements(
    caches: ContextCaches, array: np.ndarray, shape: Sequence[int] | None = None
) -> ir.DenseElementsAttr:
    """A dense elements attribute holding `array`'s data (typed by its dtype)."""
    array = np.asarray(array)
    if shape is None:
        shape = array.shape  # before ascontiguousarray, which makes 0-d arrays 1-d
    array = np.ascontiguousarray(array)
    element = dtype_to_ir_type(caches, array.dtype)
    # ndarrays have the buffer protocol, which NumPy's stubs do not declare for Python 3.11.
    return ir.DenseElementsAttr.get(  # type: ignore[call-overload,no-any-return]
        array, type=element, shape=shape
    )


def constant(caches: ContextCaches, value: np.ndarray) -> IrValue:
    """`stablehlo.constant` holding a host array (or NumPy scalar) as it is."""
    attr = dense_elements(caches, value)
    return emit1("stablehlo.constant", attr.type, attributes={"value": attr})


def scalar_constant(caches: ContextCaches, value: Any, dtype: np.dtype) -> IrValue:
    """A rank-0 `stablehlo.constant` of `dtype` holding `value` converted to it."""
    array = np.array(value).astype(dtype) if np.ndim(value) == 0 else np.asarray(value)
    key = ("scalar", array.dtype, array.tobytes())
    attr = caches.attributes.get(key)
    if attr is None:
        attr = caches.attributes[key] = dense_elements(caches, array, ())
    return emit1("stablehlo.constant", attr.type, attributes={"value": attr})


def broadcast_in_dim(
    caches: ContextCaches,
    x: IrValue,
    shape: tuple[int, ...],
    dtype: np.dtype,
    dimensions: Sequence[int],
) -> IrValue:
    if not _INT_ONLY.issuperset(map(type, shape)) and any(map(is_symbolic_dim, shape)):
        # A symbolic shape (shape polymorphism): the dynamic op.
        from lamina_mlir import _dynamic

        return _dynamic.broadcast_in_dim(caches, x, shape, dtype, dimensions)
    return emit1(
        "stablehlo.broadcast_in_dim",
        tensor_type(caches, shape, dtype),
        x,
        attributes={"broadcast_dimensions": dense_i64_array(caches, dimensions)},
    )


def full(caches: ContextCaches, value: Any, shape: tuple[int, ...], dtype: np.dtype) -> IrValue:
    """An array of `shape` filled with `value`: a scalar constant, broadcast if not rank 0."""
    scalar = scalar_constant(caches, value, dtype)
    if not shape:
        return scalar
    return broadcast_in_dim(caches, scalar, shape, dtype, ())


def convert(caches: ContextCaches, x: IrValue, shape: tuple[int, ...], dtype: np.dtype) -> IrValue:
    return emit1("stablehlo.convert", tensor_type(caches, shape, dtype), x)


def convert_hlo(
    caches: ContextCaches,
    x: IrValue,
    shape: tuple[int, ...],
    dtype_in: np.dtype,
    dtype_out: np.dtype,
) -> IrValue:
    """XLA's convert, except that a cast to bool is `x != 0` rather than a truncation."""
    if dtype_out == np.dtype(bool):
        zero = full(caches, 0, shape, dtype_in)
        x = compare(caches, x, zero, "NE", compare_type(dtype_in))
    return convert(caches, x, shape, dtype_out)


def reshape(caches: ContextCaches, x: IrValue, shape: tuple[int, ...], dtype: np.dtype) -> IrValue:
    if not _INT_ONLY.issuperset(map(type, shape)) and any(map(is_symbolic_dim, shape)):
        # A symbolic shape (shape polymorphism): the dynamic op.
        from lamina_mlir import _dynamic

        return _dynamic.reshape(caches, x, shape, dtype)
    return emit1("stablehlo.reshape", tensor_type(caches, shape, dtype), x)


def transpose(caches: ContextCaches, x: IrValue, permutation: Sequence[int]) -> IrValue:
    in_type = ir.RankedTensorType(x.type)
    shape = [in_type.shape[p] for p in permutation]
    out_type = ir.RankedTensorType.get(shape, in_type.element_type)
    return emit1(
        "stablehlo.transpose",
        out_type,
        x,
        attributes={"permutation": dense_i64_array(caches, permutation)},
    )


def slice_op(
    caches: ContextCaches,
    x: IrValue,
    shape: tuple[int, ...],
    dtype: np.dtype,
    start: Sequence[int],
    limit: Sequence[int],
    strides: Sequence[int],
) -> IrValue:
    return emit1(
        "stablehlo.slice",
        tensor_type(caches, shape, dtype),
        x,
        attributes={
            "start_indices": dense_i64_array(caches, start),
            "limit_indices": dense_i64_array(caches, limit),
            "strides": dense_i64_array(caches, strides),
        },
    )


def is_complex(x: IrValue) -> bool:
    return isinstance(ir.RankedTensorType(x.type).element_type, ir.ComplexType)


def real_part(x: IrValue) -> IrValue:
    in_type = ir.RankedTensorType(x.type)
    element = ir.ComplexType(in_type.element_type).element_type
    return emit1("stablehlo.real", ir.RankedTensorType.get(in_type.shape, element), x)


def imag_part(x: IrValue) -> IrValue:
    in_type = ir.RankedTensorType(x.type)
    element = ir.ComplexType(in_type.element_type).element_type
    return emit1("stablehlo.imag", ir.RankedTensorType.get(in_type.shape, element), x)


def min_or_max(caches: ContextCaches, name: str, x: IrValue, y: IrValue) -> IrValue:
    """`stablehlo.minimum`/`maximum`; complex values compare lexicographically (real, imag)."""
    if not is_complex(x):
        return emit1(name, x.type, x, y)
    direction = "LT" if name == "stablehlo.minimum" else "GT"
    rx, ry = real_part(x), real_part(y)
    real_eq = compare(caches, rx, ry, "EQ", "FLOAT")
    real_cmp = compare(caches, rx, ry, direction, "FLOAT")
    imag_cmp = compare(caches, imag_part(x), imag_part(y), direction, "FLOAT")
    which = select(real_eq, imag_cmp, real_cmp)
    return select(which, x, y)


def return_(values: Sequence[IrValue], name: str = "stablehlo.return") -> None:
    emit(name, (), values)


def block_with_scalar_args(region: ir.Region, types: Sequence[ir.Type]) -> ir.Block:
    return region.blocks.append(*types)
