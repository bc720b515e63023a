"""Lowering of foreign function calls: `ffi_call` to a `stablehlo.custom_call`, as JAX 0.10.2.

`ir_attribute` converts Python and NumPy values to MLIR attributes as JAX's does (Python ints
i64, floats f64, bools i1; NumPy scalars their own type; arrays dense elements; dtypes type
attributes; dicts, lists and tuples nested). `custom_call` builds the op from its parts as
JAX's helper does: a dictionary backend config travels as the `mhlo.backend_config`
attribute with API version 1 on the op, which is how the typed FFI (version 4) reads it.
`build_ffi_lowering_function` and `ffi_lowering` make lowering rules for a target, and
`ffi_call`'s rule is `ffi_lowering` with the equation's params. Shapes are static here, so
no rule passes result shape operands.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from lamina_core.callbacks import LayoutOption, attribute_values, ffi_call_p, minor_to_major
from lamina_core.ir import dtypes
from lamina_core.lax import HashableArray
from lamina_mlir._context import LoweringRuleContext
from lamina_mlir._ir_types import dtype_to_ir_type
from lamina_mlir._mlir_context import ContextCaches, IrValue
from lamina_mlir._rules_util import register


def _element_type(dtype: np.dtype) -> ir.Type:
    # Attributes are made in whatever context is active: a fresh memo each time.
    return dtype_to_ir_type(ContextCaches(ir.Context.current), np.dtype(dtype))


def _scalar_attribute(val: Any) -> ir.Attribute:
    element = _element_type(val.dtype)
    if isinstance(element, ir.IntegerType):
        return ir.IntegerAttr.get(element, int(val))
    if isinstance(element, ir.FloatType):
        return ir.FloatAttr.get(element, float(val))
    raise TypeError(f"Unsupported scalar attribute type: {type(val)}")


def _array_attribute(val: np.ndarray | np.generic) -> ir.Attribute:
    if isinstance(val, np.ndarray) and 0 in val.strides and val.size > 0:
        raise ValueError("NumPy arrays with zero strides are not supported as MLIR attributes")
    if val.dtype == dtypes.float0:
        val = np.zeros(np.shape(val), dtype=np.bool_)
    if np.isscalar(val):
        return _scalar_attribute(val)
    shape = np.shape(val)  # before `ascontiguousarray`, which makes a 0-d array 1-d
    array = np.ascontiguousarray(val)
    attr: ir.Attribute = ir.DenseElementsAttr.get(  # type: ignore[call-overload]  # ndarray is a buffer
        array, type=_element_type(array.dtype), shape=shape
    )
    return attr


def _python_scalar(dtype: np.dtype) -> Callable[[Any], ir.Attribute]:
    return lambda val: _scalar_attribute(np.array(val, dtype))


def _numpy_scalar(val: np.generic) -> ir.Attribute:
    # As JAX's table: a NumPy scalar of a numeric type is a value, any other names a type.
    if isinstance(val, np.number | np.bool_) or val.dtype == dtypes.bfloat16:
        return _array_attribute(val)
    return ir.TypeAttr.get(_element_type(val.dtype))


_ATTRIBUTE_RULES: dict[type, Callable[[Any], ir.Attribute]] = {
    ir.Attribute: lambda val: val,
    ir.Type: ir.TypeAttr.get,
    HashableArray: lambda val: _array_attribute(val.value),
    np.ndarray: _array_attribute,
    np.generic: _numpy_scalar,
    np.dtype: lambda val: ir.TypeAttr.get(_element_type(val)),
    bool: _python_scalar(np.dtype(np.bool_)),
    int: _python_scalar(np.dtype(np.int64)),
    float: _python_scalar(np.dtype(np.float64)),
    complex: _python_scalar(np.dtype(np.complex128)),
    str: ir.StringAttr.get,
    bytes: ir.StringAttr.get,
    dict: lambda val: ir.DictAttr.get({k: ir_attribute(v) for k, v in val.items()}),
    list: lambda val: ir.ArrayAttr.get([ir_attribute(v) for v in val]),
    tuple: lambda val: ir.ArrayAttr.get([ir_attribute(v) for v in val]),
}
"""How a value of each type becomes an attribute; a value takes its nearest class's rule."""


def ir_attribute(val: Any) -> ir.Attribute:
    """`val` as an MLIR attribute in the active context, as JAX's `mlir.ir_attribute`.

    Raises:
        TypeError: no conversion for `val`'s type (or a complex scalar).
    """
    for t in type(val).__mro__:
        rule = _ATTRIBUTE_RULES.get(t)
        if rule is not None:
            return rule(val)
    array = getattr(val, "__jax_array__", None)
    if array is not None:
        return ir_attribute(array())
    raise TypeError(f"No attribute handler defined for type: {type(val)}")


def _layouts_attr(layouts: Sequence[Sequence[int]]) -> ir.Attribute:
    return ir.ArrayAttr.get(
        [
            ir.DenseIntElementsAttr.get(  # type: ignore[call-overload]  # ndarray is a buffer
                np.atleast_1d(np.asarray(layout, dtype=np.int64)), type=ir.IndexType.get()
            )
            for layout in layouts
        ]
    )


def custom_call(
    call_target_name: str,
    *,
    result_types: Sequence[ir.Type],
    operands: Sequence[IrValue],
    backend_config: str | bytes | dict[str, ir.Attribute] | None = "",
    has_side_effect: bool = False,
    called_computations: Sequence[str] = (),
    api_version: int = 2,
    operand_output_aliases: Mapping[int, int] | None = None,
    operand_layouts: Sequence[Sequence[int]] | None = None,
    result_layouts: Sequence[Sequence[int]] | None = None,
    extra_attributes: Mapping[str, ir.Attribute] | None = None,
) -> Any:
    """A `stablehlo.custom_call` of `call_target_name` at the insertion point (JAX's
    `mlir.custom_call`): layouts are minor to major; `operand_output_aliases` maps operand
    indices to result indices; a dict `backend_config` goes to `mhlo.backend_config`."""
    if backend_config is None:
        config: ir.Attribute = ir.StringAttr.get("")
    elif isinstance(backend_config, str | bytes):
        config = ir.StringAttr.get(backend_config)
    elif isinstance(backend_config, dict):
        # The op's own attribute must be a string: the dictionary rides beside it, and only
        # API version 1 makes XLA read it from there.
        config = ir.StringAttr.get("")
        api_version = 1
    else:
        raise ValueError("custom_call backend_config unexpected type: " + str(backend_config))
    attributes: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get(call_target_name),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": config,
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        "called_computations": ir.ArrayAttr.get(
            [ir.FlatSymbolRefAttr.get(name) for name in called_computations]
        ),
    }
    if operand_output_aliases is not None:
        many = len(result_types) > 1
        attributes["output_operand_aliases"] = ir.ArrayAttr.get(
            [
                hlo.OutputOperandAlias.get(
                    output_tuple_indices=[o] if many else [],
                    operand_index=i,
                    operand_tuple_indices=[],
                )
                for i, o in operand_output_aliases.items()
            ]
        )
    if extra_attributes is not None:
        attributes.update(extra_attributes)
    if operand_layouts is not None:
        attributes["operand_layouts"] = _layouts_attr(operand_layouts)
    if result_layouts is not None:
        if len(result_layouts) != len(result_types):
            raise ValueError(
                f"custom_call: {len(result_layouts)} result layouts for {len(result_types)} results"
            )
        attributes["result_layouts"] = _layouts_attr(result_layouts)
    op = hlo.CustomCallOp.build_generic(
        results=list(result_types), operands=list(operands), attributes=attributes
    )
    if isinstance(backend_config, dict):
        op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(backend_config)
    return op


def build_ffi_lowering_function(
    call_target_name: str,
    *,
    operand_layouts: Sequence[LayoutOption] | None = None,
    result_layouts: Sequence[LayoutOption] | None = None,
    backend_config: Mapping[str, ir.Attribute] | str | None = None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
) -> Callable[..., Any]:
    """A function `(ctx, *operands, **attributes) -> op` emitting the custom call of FFI
    target `call_target_name` (JAX's `jax.ffi.build_ffi_lowering_function`).

    Layouts given as sequences are minor to major (XLA's order); by default row-major from
    the equation's types. With API version 4 (the default) the keyword attributes join
    `backend_config` (a dict) through `ir_attribute`; `lowering_args` go to `custom_call`.
    """

    def lowering_op(ctx: LoweringRuleContext, *operands: IrValue, **params: Any) -> Any:
        kwargs = dict(lowering_args)
        kwargs.setdefault("api_version", 4)
        if kwargs["api_version"] >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            kwargs["backend_config"] = dict(
                backend_config or {}, **{k: ir_attribute(v) for k, v in params.items()}
            )
        else:
            if params:
                raise ValueError(
                    "The use of ffi_call attributes requires a custom call API version "
                    f"of at least 4; got api_version={kwargs['api_version']}."
                )
            kwargs["backend_config"] = backend_config
        if "result_types" not in kwargs:
            kwargs["result_types"] = [ctx.module_context.ir_type(a) for a in ctx.avals_out]
        if not skip_ffi_layout_processing:
            kwargs["operand_layouts"] = _rule_layouts(ctx.avals_in, operand_layouts)
            kwargs["result_layouts"] = _rule_layouts(ctx.avals_out, result_layouts)
        return custom_call(call_target_name, operands=operands, **kwargs)

    return lowering_op


def _rule_layouts(avals: Sequence[Any], layouts: Sequence[LayoutOption] | None) -> list[Any]:
    if layouts is None:
        return [minor_to_major(a) for a in avals]
    return [minor_to_major(a, layout) for a, layout in zip(avals, layouts, strict=False)]


def ffi_lowering(
    call_target_name: str,
    *,
    operand_layouts: Sequence[LayoutOption] | None = None,
    result_layouts: Sequence[LayoutOption] | None = None,
    backend_config: Mapping[str, ir.Attribute] | str | None = None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
) -> Callable[..., Sequence[IrValue]]:
    """A lowering rule `(ctx, *operands, **attributes) -> results` calling FFI target
    `call_target_name`, for `register_lowering` (JAX's `jax.ffi.ffi_lowering`); the
    arguments are `build_ffi_lowering_function`'s."""

    def rule(ctx: LoweringRuleContext, *operands: IrValue, **params: Any) -> Sequence[IrValue]:
        op = build_ffi_lowering_function(
            call_target_name,
            operand_layouts=operand_layouts,
            result_layouts=result_layouts,
            backend_config=backend_config,
            skip_ffi_layout_processing=skip_ffi_layout_processing,
            **lowering_args,
        )(ctx, *operands, **params)
        return list(op.results)

    return rule


@register(ffi_call_p)
def _ffi_call_lowering(
    ctx: LoweringRuleContext,
    *operands: IrValue,
    target_name: str,
    has_side_effect: bool,
    input_layouts: Sequence[Sequence[int]],
    output_layouts: Sequence[Sequence[int]],
    input_output_aliases: Sequence[tuple[int, int]],
    custom_call_api_version: int,
    legacy_backend_config: str | None,
    attributes: Sequence[tuple[str, Any]],
    **params: Any,
) -> Sequence[IrValue]:
    rule = ffi_lowering(
        target_name,
        has_side_effect=has_side_effect,
        operand_layouts=input_layouts,
        result_layouts=output_layouts,
        operand_output_aliases=dict(input_output_aliases),
        api_version=custom_call_api_version,
        backend_config=legacy_backend_config,
    )
    return rule(ctx, *operands, **attribute_values(attributes))


__all__ = ["build_ffi_lowering_function", "custom_call", "ffi_lowering", "ir_attribute"]
