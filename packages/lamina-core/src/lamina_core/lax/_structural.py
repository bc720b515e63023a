"""Type conversion and broadcasting: convert_element_type, broadcast_in_dim, and `full`.

Constant operands are converted on the host when no tracer is involved, so
`lax.convert_element_type(2.0, int32)` embeds a literal, as in JAX.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core.ir import (
    AbstractValue,
    DimExpr,
    InconclusiveDimensionOperation,
    Mesh,
    NamedSharding,
    Primitive,
    ShapedArray,
    TypedComplex,
    TypedFloat,
    TypedInt,
    abstract_eval_rules,
    const_fold_rules,
    defaults_decoder,
    dtypes,
    explicit_spec,
    hide_params,
    impl_rules,
    register_param_decoder,
    type_sharding,
    typed_scalar,
)
from lamina_core.lax import _checks as c
from lamina_core.lax._reshard import reshard_p
from lamina_core.lax._types import Array
from lamina_core.trace import (
    EVAL_TRACE,
    Tracer,
    canonical_value,
    current_trace,
    eager_value,
    pvary_like,
    typeof,
)

convert_element_type_p: Final = Primitive("convert_element_type")
broadcast_in_dim_p: Final = Primitive("broadcast_in_dim")


@abstract_eval_rules.register(convert_element_type_p)
def _convert_element_type_abstract_eval(
    x: AbstractValue, *, new_dtype: np.dtype, weak_type: bool, sharding: Any
) -> ShapedArray:
    aval = c.array_aval("convert_element_type", x)
    return ShapedArray(aval.shape, new_dtype, weak_type)


@impl_rules.register(convert_element_type_p)
def _convert_element_type_impl(
    x: np.ndarray, *, new_dtype: np.dtype, weak_type: bool, sharding: Any
) -> np.ndarray:
    if np.result_type(x) == dtypes.float0:
        # float0 values carry no data: converted, they are zeros (jacfwd of an integer output).
        return np.zeros(np.shape(x), new_dtype)
    if new_dtype == np.dtype(bool):
        nonzero: np.ndarray = np.not_equal(x, 0)
        return nonzero
    if np.result_type(x).kind == "c" and new_dtype.kind != "c":
        x = np.real(x)
    with np.errstate(invalid="ignore", over="ignore"):
        converted: np.ndarray = np.asarray(x).astype(new_dtype)
    return converted


hide_params(convert_element_type_p, lambda k, v: k == "sharding")
register_param_decoder(convert_element_type_p.name)(defaults_decoder(sharding=None))


@abstract_eval_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_abstract_eval(
    x: AbstractValue, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any
) -> ShapedArray:
    aval = c.array_aval("broadcast_in_dim", x)
    shape = tuple(shape)
    if any(d < 0 for d in shape):
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {shape}."
        )
    if aval.ndim != len(broadcast_dimensions):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {tuple(broadcast_dimensions)} for operand ndim {aval.ndim}."
        )
    if len(shape) < aval.ndim:
        raise TypeError(
            f"broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand ndim {aval.ndim} and target broadcast ndim {len(shape)}."
        )
    for i, dim in enumerate(broadcast_dimensions):
        if not 0 <= dim < len(shape):
            raise TypeError(
                f"broadcast_in_dim broadcast_dimensions must be in range [0, {len(shape)}); "
                f"got {tuple(broadcast_dimensions)}."
            )
        if aval.shape[i] not in (1, shape[dim]):
            raise TypeError(
                f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                f"corresponding dimensions in the target broadcast shape; got operand of shape "
                f"{aval.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{tuple(broadcast_dimensions)}"
            )
    if any(a >= b for a, b in itertools.pairwise(broadcast_dimensions)):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {tuple(broadcast_dimensions)}"
        )
    return ShapedArray(shape, aval.dtype, aval.weak_type)


@impl_rules.register(broadcast_in_dim_p)
def _broadcast_in_dim_impl(
    x: np.ndarray, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any
) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, dim in enumerate(broadcast_dimensions):
        expanded[dim] = np.shape(x)[i]
    return np.broadcast_to(np.reshape(x, expanded), tuple(shape)).copy()


hide_params(
    broadcast_in_dim_p,
    lambda k, v: k in ("shape", "sharding") or (k == "broadcast_dimensions" and not v),
)


@register_param_decoder(broadcast_in_dim_p.name)
def _broadcast_in_dim_decoder(
    params: dict[str, Any], ins: Sequence[AbstractValue], outs: Sequence[AbstractValue]
) -> dict[str, Any]:
    """The params the print rule hides, from the result's type."""
    shape = outs[0].shape if isinstance(outs[0], ShapedArray) else ()
    sharding = type_sharding(outs[0], ins)  # over Explicit axes, the type shows it
    return {"broadcast_dimensions": (), "sharding": sharding, "shape": shape, **params}


_TYPED_SCALARS = (TypedInt, TypedFloat, TypedComplex)
"""Weak scalars already given a dtype (canonicalized Python scalars)."""


def _is_host_constant(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex, np.ndarray, np.generic))


def _int_fits(x: int, dtype: np.dtype) -> bool:
    info = np.iinfo(dtype)
    return int(info.min) <= x <= int(info.max)


def _staged(value: Any) -> Any:
    """A scalar constant converted on the host, as JAX's `stage` lifts it into the current
    trace. Under a partial evaluator that makes it a value of the known (primal) side: a
    residual where unknown work reads it (the zero of JAX's `select_n` jvp), where a constant
    written in a rule stays a literal. A Python bool is a shared object: never marked."""
    value = eager_value(value)
    note = getattr(current_trace(), "note_lifted", None)
    if note is not None and type(value) is not bool:
        note(value)
    return value


def _convert_element_type(
    x: Any, new_dtype: Any, weak_type: bool = False, sharding: Any = None
) -> Array:
    """Convert `x` to `new_dtype` (canonicalized) with the given weak type; no-op if equal."""
    dtype = dtypes.canonicalize_dtype(new_dtype)
    if _is_host_constant(x) and np.ndim(x) == 0 and sharding is None:
        # Scalar constants convert on the host, as in JAX; arrays are staged (below), so an
        # array constant keeps its identity and becomes one literal however often it is used.
        if weak_type and (dtypes.is_weakly_typed(x) and not isinstance(x, np.ndarray)):
            if type(x) is int and dtype.kind in "iu" and not _int_fits(x, dtype):
                # JAX wraps such a value around silently; a weak int is meant to hold it.
                raise OverflowError(f"Python int {x} too large to convert to {dtype.name}")
            return _staged(typed_scalar(x, dtype))
        if type(x) is int and dtype != dtypes.float0:
            # As JAX: a Python int converts from its exact value (2**40 to float32 is fine),
            # through NumPy (so a value beyond int64 raises NumPy's OverflowError).
            value: Any = np.asarray(x)
        else:
            value, _ = canonical_value(x)
        host = np.asarray(value)
        if host.dtype == dtypes.float0 and dtype != dtypes.float0:
            # float0 holds no data: its physical form is False. JAX converts it as an array
            # (a program), which gives the result the weak type asked for.
            zero = np.zeros((), np.bool_).astype(dtype)
            return _staged(typed_scalar(zero.item(), dtype) if weak_type else zero)
        with np.errstate(invalid="ignore", over="ignore"):
            converted = host.astype(dtype)
        return _staged(converted)
    aval = typeof(x)
    same = getattr(aval, "dtype", None) == dtype and getattr(aval, "weak_type", False) == weak_type
    if same and sharding is None:
        return eager_value(x)
    if same and not _is_host_constant(x) and getattr(aval, "sharding", None) == sharding:
        return eager_value(x)  # JAX: an array already split as asked is its own conversion
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type, sharding=sharding)


def _fold_convert_element_type(
    x: Any, *, new_dtype: np.dtype, weak_type: bool, sharding: Any
) -> Any:
    if _is_host_constant(x) and np.ndim(x) == 0 and sharding is None:
        folded = _convert_element_type(x, new_dtype, weak_type)
        if weak_type and isinstance(folded, np.ndarray | np.generic):
            # As JAX's folding: a weak result is a Python scalar (a NumPy one would be strong).
            return eager_value(typed_scalar(folded.item(), folded.dtype))
        return folded
    return None


const_fold_rules.set(convert_element_type_p, _fold_convert_element_type)


def convert_element_type(operand: Array, new_dtype: Any) -> Array:
    """Elementwise cast to `new_dtype`; the result is strongly typed."""
    return _convert_element_type(operand, new_dtype, False)


_JUST_INTS: Final = frozenset({int})


def _dims(shape: Sequence[Any]) -> tuple[Any, ...]:
    """A shape as Python ints, symbolic dimensions kept (shape polymorphism)."""
    if type(shape) is tuple and _JUST_INTS.issuperset(map(type, shape)):
        return shape  # the common case, answered without a generator
    try:
        return tuple(int(d) for d in shape)
    except InconclusiveDimensionOperation:
        return tuple(d if type(d) is DimExpr else int(d) for d in shape)


def broadcast_in_dim(
    operand: Array,
    shape: Sequence[int],
    broadcast_dimensions: Sequence[int],
    *,
    out_sharding: Any = None,
) -> Array:
    """Broadcast `operand` to `shape`, its dimension i going to `broadcast_dimensions[i]`."""
    shape = _dims(shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    aval = typeof(operand)
    out_sharding = canonical_sharding(out_sharding)
    if getattr(aval, "shape", None) == shape and dims == tuple(range(len(shape))):
        if out_sharding is None:
            # JAX's staging forwards an identity broadcast of a tracer instead of recording it.
            return operand
        mesh = out_sharding.mesh
        if getattr(aval, "mesh", None) != mesh or getattr(aval, "spec", None) != explicit_spec(
            mesh, out_sharding.spec, len(shape)
        ):
            return reshard_p.bind(operand, dst_sharding=out_sharding, concrete_mesh=None)
    return broadcast_in_dim_p.bind(
        operand, shape=shape, broadcast_dimensions=dims, sharding=out_sharding
    )


def canonical_sharding(sharding: Any) -> Any:
    """A rule's `out_sharding` as JAX's `canonicalize_sharding` makes it: None for none or for
    a sharding over the empty mesh; a concrete mesh's sharding over its abstract mesh."""
    if sharding is None:
        return None
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        return sharding
    if mesh.empty:
        return None
    if mesh.abstract_mesh is not mesh:
        return NamedSharding(mesh.abstract_mesh, sharding.spec)
    return sharding


def broadcast(operand: Array, sizes: Sequence[int], *, out_sharding: Any = None) -> Array:
    """Add leading dimensions of `sizes` to `operand`."""
    shape = tuple(getattr(typeof(operand), "shape", ()))
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return broadcast_in_dim(operand, (*sizes, *shape), dims, out_sharding=out_sharding)


def full(
    shape: Sequence[int], fill_value: Any, dtype: Any = None, *, sharding: Any = None
) -> Array:
    """An array of `shape` filled with `fill_value`."""
    shape = _dims(shape)
    fill_shape = np.shape(fill_value)
    if fill_shape:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape {fill_shape}."
        )
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dtype = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(fill_value))
    fill = _convert_element_type(fill_value, dtype, weak)
    mesh = getattr(sharding, "mesh", None)
    if isinstance(mesh, Mesh) and mesh.has_explicit and current_trace() is not EVAL_TRACE:
        sharding = None  # JAX: under a trace, a sharding over devices does not type the fill
    return broadcast(fill, shape, out_sharding=sharding)


def full_like(
    x: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Sequence[int] | None = None,
    sharding: Any = None,
) -> Array:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`; weakly
    typed when `x` is and no dtype is given."""
    aval = typeof(x)
    fill_shape = tuple(getattr(aval, "shape", ())) if shape is None else tuple(shape)
    weak = dtype is None and dtypes.is_weakly_typed(x)
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else aval.dtype)  # type: ignore[attr-defined]  # arrays
    mesh = getattr(aval, "mesh", None)
    explicit = mesh is not None and mesh.has_explicit
    if sharding is None and shape is None and explicit and isinstance(x, Tracer):
        sharding = aval.sharding  # type: ignore[attr-defined]  # JAX: like x, over Explicit axes
    out = full(fill_shape, _convert_element_type(fill_value, dt, weak), sharding=sharding)
    return pvary_like(out, x)


__all__ = [
    "broadcast",
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "convert_element_type",
    "convert_element_type_p",
    "full",
    "full_like",
]
