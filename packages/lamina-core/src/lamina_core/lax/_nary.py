"""Factories for elementwise primitives, and the dtype and shape rules they share.

`unary` and `binary` make a primitive from its name, the dtype families each operand accepts
and a NumPy reference, and register its abstract evaluation and reference rules. The rules
follow JAX's standard elementwise primitives: shapes are checked before dtypes, operands
broadcast size-1 dims and rank-0 operands, and a result is weakly typed only when every
operand is. Error messages are JAX's, word for word, so users can search for them.

This module knows nothing about any particular operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    context_mesh_primitives,
    dtypes,
    elementwise_rule,
    hide_default_params,
    impl_rules,
    sharding_rules,
)
from lamina_core.lax import _checks as c

_FAMILY_KINDS: Final = {
    "bool": "b",
    "integer": "iu",
    "signedinteger": "i",
    "unsignedinteger": "u",
    "floating": "f",
    "complexfloating": "c",
}


_MEMBERSHIP: dict[tuple[tuple[str, ...], np.dtype], bool] = {}
"""Memo of `dtype in DTypes(...)`: checked for every traced operand (a cache, not state)."""


@dataclass(frozen=True, slots=True)
class DTypes:
    """An ordered set of dtype families (`"floating"`) or exact dtypes (`"float32"`).

    The order is only for messages: JAX lists accepted families in a fixed order per
    primitive, and users compare our messages with theirs.
    """

    names: tuple[str, ...]

    def __contains__(self, dtype: object) -> bool:
        if not isinstance(dtype, np.dtype):
            return False
        key = (self.names, dtype)
        known = _MEMBERSHIP.get(key)
        if known is None:
            kind = c.kind_of(dtype)
            known = _MEMBERSHIP[key] = any(
                kind in _FAMILY_KINDS[n] if n in _FAMILY_KINDS else dtype.name == n
                for n in self.names
            )
        return known

    def __str__(self) -> str:
        return ", ".join(self.names)


FLOAT: Final = DTypes(("floating",))
INEXACT: Final = DTypes(("floating", "complexfloating"))
COMPLEX: Final = DTypes(("complexfloating",))
INT: Final = DTypes(("integer",))
NUM: Final = DTypes(("integer", "floating", "complexfloating"))
INT_OR_FLOAT: Final = DTypes(("integer", "floating"))
ORDERED: Final = DTypes(("integer", "floating", "bool"))
BOOL_OR_INT: Final = DTypes(("integer", "bool"))
ANY: Final = DTypes(("integer", "floating", "complexfloating", "bool"))

# Where a `lax` dtype error can point to a promoting `jnp` function (JAX's table).
JNP_EQUIVALENTS: Final = {
    "abs": "fabs",
    "acos": "arccos",
    "acosh": "arccosh",
    "add": "add",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atan2": "arctan2",
    "atanh": "arctanh",
    "bitwise_and": "bitwise_and",
    "bitwise_not": "bitwise_not",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "cbrt": "cbrt",
    "ceil": "ceil",
    "concatenate": "concatenate",
    "cos": "cos",
    "cosh": "cosh",
    "div": "divide",
    "eq": "equal",
    "exp": "exp",
    "expm1": "expm1",
    "floor": "floor",
    "greater": "greater",
    "greater_equal": "greater_equal",
    "less": "less",
    "less_equal": "less_equal",
    "log": "log",
    "logical_and": "logical_and",
    "logical_not": "logical_not",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "log1p": "log1p",
    "max": "maximum",
    "min": "minimum",
    "mul": "multiply",
    "ne": "not_equal",
    "neg": "negative",
    "nextafter": "nextafter",
    "pow": "float_power",
    "round": "round",
    "select": "where",
    "shift_left": "left_shift",
    "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift",
    "sign": "sign",
    "sin": "sin",
    "sinh": "sinh",
    "sqrt": "sqrt",
    "sub": "subtract",
    "tan": "tan",
    "tanh": "tanh",
}


def _float0_error(prim: str, position: int | None) -> TypeError:
    where = "" if position is None else f" at position {position}"
    article = "a float0 array" if position is None else "a float0"
    return TypeError(
        f"Called {prim} with {article}{where}. float0s do not support any operations by "
        "design, because they are not compatible with non-trivial vector spaces. No implicit "
        "dtype conversion is done. You can use np.zeros_like(arr, dtype=np.float) to cast a "
        "float0 array to a regular zeros array. \nIf you didn't expect to get a float0 you "
        "might have accidentally taken a gradient with respect to an integer argument."
    )


def check_unary_dtype(prim: str, aval: ShapedArray, accepted: DTypes) -> None:
    if aval.dtype == dtypes.float0:
        raise _float0_error(prim, None)
    if aval.dtype not in accepted:
        raise TypeError(
            f"{prim} does not accept dtype {dtypes.dtype_name(aval.dtype)}. "
            f"Accepted dtypes are subtypes of {accepted}."
        )


def check_operand_dtypes(
    prim: str,
    avals: Sequence[ShapedArray],
    accepted: Sequence[DTypes],
    extended_dtypes: bool = False,
) -> None:
    """JAX's error for the first operand of a dtype not `accepted` (operands of extended
    dtypes pass when `extended_dtypes`)."""
    for i, (aval, ok) in enumerate(zip(avals, accepted, strict=True)):
        if aval.dtype in ok or (
            extended_dtypes and dtypes.extended_dtype_of(aval.dtype) is not None
        ):
            continue
        if aval.dtype == dtypes.float0:
            raise _float0_error(prim, i)
        raise TypeError(
            f"{prim} does not accept dtype {dtypes.dtype_name(aval.dtype)} at position {i}. "
            f"Accepted dtypes at position {i} are subtypes of {ok}."
        )


def check_same_dtypes(prim: str, avals: Sequence[ShapedArray]) -> np.dtype:
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        got = ", ".join(a.dtype.name for a in avals)
        msg = f"lax.{prim} requires arguments to have the same dtypes, got {got}."
        equivalent = JNP_EQUIVALENTS.get(prim)
        if equivalent is not None:
            msg += (
                f" (Tip: jnp.{equivalent} is a similar function that does automatic type "
                "promotion on inputs)."
            )
        raise TypeError(msg)
    return first


Reference = Callable[..., Any]
"""A NumPy reference: `ref(*numpy_operands, **params)` returns the result values."""

DTypeRule = Callable[..., np.dtype]
"""`rule(*avals, **params)`: the result dtype, once operands passed the family checks."""


def _evaluate(
    reference: Reference, args: Sequence[Any], params: dict[str, Any], out: ShapedArray
) -> Any:
    # XLA follows IEEE without trapping; NumPy's warnings about the same values (overflow to
    # inf when rounding a wide result to the output dtype, say) are noise.
    with np.errstate(all="ignore"):
        return np.asarray(reference(*args, **params)).astype(out.dtype, copy=False)


def _aval(x: Any) -> ShapedArray:
    return ShapedArray(np.shape(x), np.result_type(x))


def _reference_params(params: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: params[k] for k in names}


unary_primitives: list[Primitive] = []
"""Every primitive `unary` made, for rules shared by the family (batching)."""

binary_primitives: list[Primitive] = []
"""Every primitive `binary` made."""


def unary(
    name: str,
    accepted: DTypes,
    reference: Reference,
    *,
    dtype_rule: DTypeRule | None = None,
    param_names: tuple[str, ...] = (),
    accuracy: bool = False,
) -> Primitive:
    """An elementwise primitive of one operand.

    Args:
        name: the primitive's name, as JAX prints it.
        accepted: the dtype families the operand may have.
        reference: the NumPy reference, called with the operand and the `param_names` params.
        dtype_rule: the result dtype (default: the operand's).
        param_names: the params the reference needs; others (`accuracy`) are not passed.
        accuracy: the primitive has JAX's `accuracy` param, printed only when set.
    """
    prim = Primitive(name)

    def abstract_eval(x: AbstractValue, **params: Any) -> ShapedArray:
        aval = c.array_aval(name, x)
        check_unary_dtype(name, aval, accepted)
        dtype = aval.dtype if dtype_rule is None else dtype_rule(aval, **params)
        if dtype == aval.dtype:
            return aval  # avals are immutable values: share, don't rebuild (hot path)
        return ShapedArray(aval.shape, dtype, aval.weak_type)

    def impl(x: np.ndarray, **params: Any) -> Any:
        out = abstract_eval(_aval(x), **params)
        return _evaluate(reference, (x,), _reference_params(params, param_names), out)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    unary_primitives.append(prim)
    sharding_rules.set(prim, elementwise_rule(name))
    if accuracy:
        hide_default_params(prim, accuracy=None)
    return prim


def binary(
    name: str,
    accepted: DTypes | tuple[DTypes, DTypes],
    reference: Reference,
    *,
    dtype_rule: DTypeRule | None = None,
    same_dtypes: bool = True,
    param_names: tuple[str, ...] = (),
    extended_dtypes: bool = False,
) -> Primitive:
    """An elementwise primitive of two broadcasting operands.

    Args:
        name: the primitive's name, as JAX prints it.
        accepted: the dtype families of both operands, or of each.
        reference: the NumPy reference, called with both operands.
        dtype_rule: the result dtype (default: the operands' common dtype).
        same_dtypes: the operands must have equal dtypes.
        param_names: the params the reference needs.
        extended_dtypes: operands of extended dtypes (keys) pass unchecked, as in JAX (whose
            comparisons of two different ones, or of one and a number, fail only in lowering).
    """
    prim = Primitive(name)
    per_operand = accepted if isinstance(accepted, tuple) else (accepted, accepted)

    def abstract_eval(x: AbstractValue, y: AbstractValue, **params: Any) -> ShapedArray:
        x_aval, y_aval = c.array_aval(name, x), c.array_aval(name, y)
        avals = [x_aval, y_aval]
        # The checks' calls only when they would find something (the hot path: a binary
        # operation of one type, staged for nearly every user operation and its derivative).
        shape = x_aval.shape if x_aval.shape == y_aval.shape else c.broadcast_shapes(name, avals)
        if x_aval.dtype not in per_operand[0] or y_aval.dtype not in per_operand[1]:
            check_operand_dtypes(name, avals, per_operand, extended_dtypes)
        if (
            same_dtypes
            and x_aval.dtype != y_aval.dtype
            and params.get("out_dtype") is None
            and not (
                extended_dtypes
                and any(dtypes.extended_dtype_of(a.dtype) is not None for a in avals)
            )
        ):
            check_same_dtypes(name, avals)
        dtype = avals[0].dtype if dtype_rule is None else dtype_rule(*avals, **params)
        weak = avals[0].weak_type and avals[1].weak_type
        for aval in avals:  # share an operand's aval when it is the result type (hot path)
            if aval.shape == shape and aval.dtype == dtype and aval.weak_type == weak:
                return aval
        return ShapedArray(shape, dtype, weak)

    def impl(x: np.ndarray, y: np.ndarray, **params: Any) -> Any:
        out = abstract_eval(_aval(x), _aval(y), **params)
        return _evaluate(reference, (x, y), _reference_params(params, param_names), out)

    abstract_eval_rules.set(prim, abstract_eval)
    impl_rules.set(prim, impl)
    binary_primitives.append(prim)
    sharding_rules.set(prim, elementwise_rule(name))
    context_mesh_primitives.add(prim)
    return prim


def bool_result(*avals: ShapedArray, **params: Any) -> np.dtype:
    return np.dtype(bool)


def real_part_dtype(aval: ShapedArray, **params: Any) -> np.dtype:
    """float32 for complex64, float64 for complex128; other dtypes are their own."""
    if aval.dtype.kind != "c":
        return aval.dtype
    return np.dtype(np.float32 if aval.dtype == np.complex64 else np.float64)


def complex_dtype(aval: ShapedArray, *rest: ShapedArray, **params: Any) -> np.dtype:
    """complex64 for float32 (and complex64), complex128 for float64 (and complex128)."""
    wide = aval.dtype in (np.dtype(np.float64), np.dtype(np.complex128))
    return np.dtype(np.complex128 if wide else np.complex64)


def on_key_data(compare: Reference, combine: Any) -> Reference:
    """`compare`, which on two key arrays (of one extended dtype) compares each key's data
    and `combine`s the answers over its trailing axes, as JAX compares keys."""

    def reference(x: np.ndarray, y: np.ndarray) -> Any:
        ext = dtypes.extended_dtype_of(np.result_type(x))
        if ext is None and dtypes.extended_dtype_of(np.result_type(y)) is None:
            return compare(x, y)
        if ext is None or dtypes.extended_dtype_of(np.result_type(y)) is not ext:
            got = ", ".join(dtypes.dtype_name(np.result_type(a)) for a in (x, y))
            raise TypeError(f"Keys compare only with keys of the same dtype, got {got}.")
        # Trailing axes of the data line up under NumPy's broadcasting of the key shapes.
        bits = compare(np.asarray(x)[ext.name], np.asarray(y)[ext.name])
        key_axes = tuple(range(bits.ndim - len(ext.physical_shape), bits.ndim))
        return combine(bits, axis=key_axes)

    return reference


def in_float32(reference: Reference) -> Reference:
    """Compute 16-bit floats in float32, as XLA's CPU backend does; rounding comes after."""

    def wrapped(*args: np.ndarray, **params: Any) -> Any:
        widened = [
            np.asarray(a, np.float32)
            if c.kind_of(np.result_type(a)) == "f" and np.result_type(a).itemsize <= 2
            else a
            for a in args
        ]
        return reference(*widened, **params)

    return wrapped
