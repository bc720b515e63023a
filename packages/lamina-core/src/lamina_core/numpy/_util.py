"""NumPy-style argument handling: dtype promotion and rank broadcasting before lax."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import numpy as np

from lamina_core.config import affects_tracing, config, define_enum
from lamina_core.ir import DimExpr, InconclusiveDimensionOperation, dtypes
from lamina_core.lax import _convert_element_type, broadcast_in_dim
from lamina_core.trace import Tracer, is_concrete_value, typeof

ArrayLike: TypeAlias = Any
Array: TypeAlias = Any
DTypeLike: TypeAlias = Any

_PYTHON_SCALARS: Final = frozenset({bool, int, float, complex})


def check_arraylike(name: str, *args: Any, traced_hi: bool = False) -> None:
    """JAX's `TypeError` for the first of `name`'s arguments that `jax.numpy` does not take as
    an array: a list or tuple, a hi value, anything not a constant. A Python int past the
    default integer's range passes: what it becomes is checked where it is converted, naming
    the value.

    Args:
        traced_hi: let a traced hi value pass, as JAX does (see `check_arraylike_or_traced_hi`);
            by default it is rejected as an eager one is (a hi value is no array, traced or not).
    """
    for pos, arg in enumerate(args):
        if isinstance(arg, Tracer):
            if traced_hi or not arg.aval.is_high:
                continue
        elif type(arg) in _PYTHON_SCALARS or type(arg) is DimExpr or is_concrete_value(arg):
            continue  # (a symbolic dimension is an array through `__jax_array__`, as in JAX)
        raise TypeError(
            f"{name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
        )


check_arraylike_or_traced_hi: Final = functools.partial(check_arraylike, traced_hi=True)
"""The shape and creation functions' check: a traced hi value passes (their own rules reject
it, or pass it through unchanged), as in JAX."""


def shape_of(x: Any) -> tuple[int, ...]:
    return tuple(getattr(typeof(x), "shape", ()))


def dtype_of(x: Any) -> np.dtype:
    dtype: np.dtype = typeof(x).dtype  # type: ignore[attr-defined]  # array avals
    return dtype


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert every argument to the common result dtype (weak only if all are weak)."""
    if len(args) < 2:
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [_convert_element_type(x, dtype, weak) for x in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """As `promote_dtypes`, then integers and bools go to the default float type."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.canonicalize_dtype(dtypes.float64)
    return [_convert_element_type(x, dtype, weak) for x in args]


# What a broadcast between ranks does decides what is staged: part of the tracing key, as JAX's.
rank_promotion: Final = affects_tracing(
    define_enum(
        "jax_numpy_rank_promotion",
        ("allow", "warn", "raise"),
        "allow",
        'Control NumPy-style automatic rank promotion broadcasting ("allow", "warn", or "raise").',
    )
)
_RANK_PROMOTION_PAGE: Final = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


def check_rank_promotion(name: str, shapes: Sequence[tuple[int, ...]]) -> None:
    """JAX's warning or error for `name` broadcasting arrays of different ranks `shapes`,
    under `jax_numpy_rank_promotion` "warn" or "raise" (callers check it is not "allow")."""
    mode = rank_promotion.value
    listed = " ".join(map(str, shapes))
    if mode == "warn":
        warnings.warn(
            f"Following NumPy automatic rank promotion for {name} on shapes {listed}. Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for "
            f"more information, see {_RANK_PROMOTION_PAGE}.",
            stacklevel=2,
        )
    elif mode == "raise":
        raise ValueError(
            f"Operands could not be broadcast together for {name} on shapes {listed} and with "
            "the config option jax_numpy_rank_promotion='raise'. For more information, see "
            f"{_RANK_PROMOTION_PAGE}."
        )


def promote_shapes(name: str, *args: Any) -> list[Any]:
    """Give non-scalar arguments equal rank by adding leading size-1 dims, as NumPy does."""
    if len(args) < 2:
        return list(args)
    shapes = [shape_of(x) for x in args]
    nonscalar = [len(s) for s in shapes if s]
    if not nonscalar:
        return list(args)
    rank = max(nonscalar)
    if (
        min(nonscalar) != rank
        and "jax_numpy_rank_promotion" in config.touched
        and rank_promotion.value != "allow"
    ):
        check_rank_promotion(name, shapes)
    out = []
    for x, shape in zip(args, shapes, strict=True):
        if shape and len(shape) < rank:
            lead = rank - len(shape)
            x = broadcast_in_dim(x, (1,) * lead + shape, tuple(range(lead, rank)))
        out.append(x)
    return out


def promote_args(name: str, *args: Any) -> list[Any]:
    return promote_shapes(name, *promote_dtypes(*args))


def promote_args_inexact(name: str, *args: Any) -> list[Any]:
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def canonical_axes(axis: int | Sequence[int] | None, ndim: int, name: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axes}")
    return tuple(out)


def lax_const(like: Any, value: Any) -> Any:
    """`value` in `like`'s type, as JAX's `lax._const`: a Python scalar (weak) when `like` is
    a weakly typed scalar of its kind's default dtype, else a NumPy scalar of its dtype."""
    aval = typeof(like)
    dtype = dtype_of(like)
    if getattr(aval, "weak_type", False) and not getattr(aval, "shape", ()):
        kind = bool if dtype == np.bool_ else int if dtype.kind in "iu" else float
        scalar = kind(value) if dtype.kind != "c" else complex(value)
        if dtypes.dtype(scalar, canonicalize=True) == dtype:
            return scalar
        return np.array(scalar, dtype)
    return np.array(value, dtype)


def step_is_ascending(step: Any, zero_error: str, where: str) -> bool:
    """Whether a (possibly symbolic) nonzero `step` is positive: ValueError(`zero_error`) for
    zero, JAX's InconclusiveDimensionOperation text (naming `where`) when the sign depends on
    the dimension variables."""
    try:
        if step == 0:
            raise ValueError(zero_error)
        ascending: bool = step > 0
    except InconclusiveDimensionOperation as err:
        raise InconclusiveDimensionOperation(
            f"In {where} the step ({step}) must be resolved statically if it is > 0 or < 0."
            f"\nDetails: {err}",
            explain=False,
        ) from None
    return ascending
