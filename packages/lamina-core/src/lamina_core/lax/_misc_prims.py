"""Small `jax.lax` primitives without a family of their own, as JAX 0.10.2 defines them.

`mulhi` (the high half of an integer product), the total-order comparisons `eq_to`, `le_to`
and `lt_to` (which sorting uses: -0.0 sorts before +0.0 and NaNs after everything), `empty`
(an array whose contents do not matter; zeros on CPU), `copy` (what `jnp.array(x, copy=True)`
stages), `stage` (lifts a constant into the current trace), `dce_sink` (marks a value used so
dead-code elimination keeps what computes it), and `broadcast_like`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.interpreters import (
    AxisData,
    batching_rules,
    defjvp_zero,
    deflinear,
    needs_axis_rule,
    not_differentiable,
)
from lamina_core.ir import (
    AbstractValue,
    Effects,
    KindEffect,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    dtypes,
    effects_rules,
    impl_rules,
)

# Imported first so its loop over `binary_primitives` has run before ours are made: ours are
# batched below, once.
from lamina_core.lax import _elementwise_batching as _elementwise_batching
from lamina_core.lax import _nary as n
from lamina_core.lax._batching_common import defbroadcasting, defvectorized
from lamina_core.lax._shape import asarray, shape_of
from lamina_core.lax._structural import broadcast_in_dim
from lamina_core.trace import Tracer, current_trace, typeof
from lamina_core.tree import tree_util

# --- mulhi ------------------------------------------------------------------------------------


def _mulhi_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dtype = np.result_type(x, y)
    bits = 8 * dtype.itemsize
    if bits <= 32:
        wide = np.uint64 if dtype.kind == "u" else np.int64
        product = x.astype(wide) * y.astype(wide)
        return (product >> wide(bits)).astype(dtype)
    # A 128-bit product: Python integers hold it exactly; `>>` floors as two's complement does.
    high = np.vectorize(lambda a, b: (int(a) * int(b)) >> bits, otypes=[object])(x, y)
    return np.asarray(high.astype(np.int64 if dtype.kind == "i" else np.uint64), dtype)


mulhi_p: Final = n.binary("mulhi", n.INT, _mulhi_reference)
defjvp_zero(mulhi_p)


def mulhi(x: Any, y: Any, /) -> Any:
    """The upper N bits of the 2N-bit product of N-bit integers `x` and `y`, elementwise."""
    return mulhi_p.bind(x, y)


# --- total-order comparisons ------------------------------------------------------------------


def _total_order_key(x: np.ndarray) -> np.ndarray:
    """Integers ordered as XLA's TOTALORDER orders floats: -NaN < -inf < -0 < +0 < inf < NaN."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return x
    signed = np.dtype(f"int{8 * x.dtype.itemsize}")
    bits = x.view(signed)
    # A negative float's magnitude bits grow as it falls: flip them so the integers fall too.
    key: np.ndarray = np.where(bits < 0, bits ^ np.iinfo(signed).max, bits)
    return key


def _eq_to_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "c":
        both: np.ndarray = _eq_to_reference(x.real, y.real) & _eq_to_reference(x.imag, y.imag)
        return both
    return np.asarray(np.equal(_total_order_key(x), _total_order_key(y)))


def _lt_to_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(np.less(_total_order_key(x), _total_order_key(y)))


def _le_to_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(np.less_equal(_total_order_key(x), _total_order_key(y)))


eq_to_p: Final = n.binary("eq_to", n.ANY, _eq_to_reference, dtype_rule=n.bool_result)
le_to_p: Final = n.binary("le_to", n.ORDERED, _le_to_reference, dtype_rule=n.bool_result)
lt_to_p: Final = n.binary("lt_to", n.ORDERED, _lt_to_reference, dtype_rule=n.bool_result)
for _prim in (eq_to_p, le_to_p, lt_to_p):
    defjvp_zero(_prim)
for _prim in (mulhi_p, eq_to_p, le_to_p, lt_to_p):
    defbroadcasting(_prim)


# --- empty ------------------------------------------------------------------------------------

empty_p: Final = Primitive("empty")
not_differentiable(empty_p)  # no operands


def _empty_aval(shape: Any, dtype: Any) -> ShapedArray:
    dims: Any = (shape,) if isinstance(shape, (int, np.integer)) else shape
    return ShapedArray(dims, dtypes.canonicalize_dtype(np.dtype(dtype)), False)


@abstract_eval_rules.register(empty_p)
def _empty_abstract_eval(*, shape: Any, dtype: Any, out_sharding: Any) -> ShapedArray:
    return _empty_aval(shape, dtype)


@impl_rules.register(empty_p)
def _empty_impl(*, shape: Any, dtype: Any, out_sharding: Any) -> np.ndarray:
    aval = _empty_aval(shape, dtype)
    return np.zeros(aval.shape, aval.dtype)


def _empty_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], *, shape: Any, **params: Any
) -> tuple[Any, int]:
    batched = (axis_data.size, *_empty_aval(shape, params["dtype"]).shape)
    return empty_p.bind(shape=batched, **params), 0


batching_rules.set(empty_p, _empty_batch)
needs_axis_rule.add(empty_p)  # batched even with no batched operand (it has none)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of `shape` and `dtype` whose contents are unspecified (zeros on CPU)."""
    if out_sharding is not None:
        raise NotImplementedError("lax.empty: Lamina runs on one device; out_sharding is None")
    if isinstance(shape, list):
        shape = tuple(shape)
    return empty_p.bind(shape=shape, dtype=dtype, out_sharding=None)


# --- copy and stage ---------------------------------------------------------------------------

copy_p: Final = Primitive("copy")
stage_p: Final = Primitive("stage")


def _identity_abstract_eval(x: AbstractValue) -> AbstractValue:
    return x


for _prim in (copy_p, stage_p):
    abstract_eval_rules.set(_prim, _identity_abstract_eval)
    impl_rules.set(_prim, np.array)  # a fresh array: a copy never aliases its operand
    defvectorized(_prim)
deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
deflinear(stage_p, lambda ct, x: [ct])


def array_copy(x: Any) -> Any:
    """A copy of the array `x` (what `jnp.array(x, copy=True)` stages)."""
    return copy_p.bind(x)


def stage(x: Any, /) -> Any:
    """`x` lifted into the active trace (`Trace.stage_value`), as JAX's: a tracer of the trace
    as it is; a constant becomes an array (a Python scalar a weakly typed one) and, under a
    trace, a tracer of it standing for that constant, with no equation; outside any trace, a
    device array."""
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        x = asarray(x)
    elif not isinstance(x, Tracer):
        return x
    return current_trace().stage_value(x)


# --- dce_sink ---------------------------------------------------------------------------------


class NoDCEEffect(KindEffect):
    """The effect of `dce_sink`: its equation, and what computes its operand, are kept."""

    __slots__ = ()

    def __str__(self) -> str:
        return "NoDCEEffect"


no_dce_effect: Final = NoDCEEffect()

dce_sink_p: Final = Primitive("dce_sink", multiple_results=True)


@abstract_eval_rules.register(dce_sink_p)
def _dce_sink_abstract_eval(x: AbstractValue, *, prevent_mlir_dce: bool) -> list[AbstractValue]:
    return []


@effects_rules.register(dce_sink_p)
def _dce_sink_effects(x: AbstractValue, *, prevent_mlir_dce: bool) -> Effects:
    return frozenset({no_dce_effect})


@impl_rules.register(dce_sink_p)
def _dce_sink_impl(x: np.ndarray, *, prevent_mlir_dce: bool) -> list[np.ndarray]:
    return []


def _dce_sink_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[Any], **params: Any
) -> tuple[list[Any], list[Any]]:
    # JAX's rule drops the sink under vmap (no equation is staged); so does this one.
    return [], []


deflinear(dce_sink_p, lambda cts, x, **params: [None])
batching_rules.set(dce_sink_p, _dce_sink_batch)


def dce_sink(val: Any, *, prevent_mlir_dce: bool = False) -> None:
    """Mark every array in the pytree `val` as used, so that nothing computing it is removed
    as dead code (and, with `prevent_mlir_dce`, not by the compiler either)."""
    for leaf in tree_util.tree_leaves(val):
        dce_sink_p.bind(leaf, prevent_mlir_dce=prevent_mlir_dce)


# --- broadcast_like ---------------------------------------------------------------------------


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """`arr` broadcast (NumPy-style, aligning trailing axes) to the shape of `like_arr`."""
    shape: tuple[int, ...] = typeof(like_arr).shape  # type: ignore[attr-defined]  # an array
    arr_shape = shape_of(arr)
    if arr_shape == shape:
        return asarray(arr)
    lead = len(shape) - len(arr_shape)
    if lead < 0:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: {arr_shape=} {shape=}")
    if not all(d in (1, s) for d, s in zip(arr_shape, shape[lead:], strict=True)):
        requested = ShapedArray(shape, typeof(arr).dtype)  # type: ignore[attr-defined]  # an array
        raise ValueError(
            f"Incompatible types for broadcasting: input type={typeof(arr)} and requested "
            f"type={requested}"
        )
    return broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


__all__ = [
    "broadcast_like",
    "copy_p",
    "dce_sink",
    "dce_sink_p",
    "empty",
    "empty_p",
    "eq_to_p",
    "le_to_p",
    "lt_to_p",
    "mulhi",
    "mulhi_p",
    "stage",
    "stage_p",
]
