"""Argument handling for the elementwise `jnp` functions, staged exactly as `jax.numpy` does.

Beyond `_util`'s promotion this module follows two details of JAX that show in jaxprs:

- Converting a non-scalar NumPy constant stages a `convert_element_type` equation (JAX binds
  the primitive on arrays and folds only scalar constants on the host).
- Rank promotion checks that the shapes broadcast, raising JAX's `ValueError` if not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.config import config
from lamina_core.ir import MESHES_SEEN, ShapedArray, broadcast_sharding, dtypes, typed_scalar
from lamina_core.lax import _convert_element_type, broadcast_in_dim
from lamina_core.lax import checks as c
from lamina_core.lax import convert as convert  # one conversion rule for lax's helpers and jnp's
from lamina_core.lax import promote_dtypes_inexact as promote_dtypes_inexact
from lamina_core.numpy._util import check_arraylike as check_arraylike
from lamina_core.numpy._util import check_rank_promotion, dtype_of, rank_promotion, shape_of
from lamina_core.trace import Tracer, typeof


def asarray(x: Any) -> Any:
    """`x` as an array value, which every argument already is.

    JAX turns Python scalars into weakly typed arrays here; Lamina keeps them Python scalars,
    which promotion and binding already treat as weakly typed values of their default dtype.
    """
    return x


def _numeric(dtype: np.dtype) -> np.dtype:
    return dtypes.canonicalize_dtype(dtypes.int64) if dtype.kind == "b" else dtype


def _inexact(dtype: np.dtype) -> np.dtype:
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.canonicalize_dtype(dtypes.float64)


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert every argument to the common result dtype (weak only if all are weak)."""
    if len(args) < 2:
        return [asarray(x) for x in args]
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """As `promote_dtypes`, then bools go to the default integer dtype."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(x, _numeric(dtype), weak) for x in args]


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of `shapes`; a `ValueError` names them if they do not broadcast."""
    result = max(shapes, key=len)
    rank = len(result)
    if all(result[rank - len(s) :] == s for s in shapes):
        return result
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    out = []
    for dims in zip(*padded, strict=True):
        big = {d for d in dims if d != 1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def promote_shapes(name: str, *args: Any) -> list[Any]:
    """Give the arguments equal rank with leading size-1 dims (scalars stay rank 0)."""
    if len(args) < 2:
        return [asarray(x) for x in args]
    shapes = [shape_of(x) for x in args]
    ranks = {len(s) for s in shapes if s}
    if len({len(s) for s in shapes}) == 1 or len(ranks) < 2:
        return [asarray(x) for x in args]
    if "jax_numpy_rank_promotion" in config.touched and rank_promotion.value != "allow":
        check_rank_promotion(name, shapes)
    rank = len(broadcast_shapes(*shapes))
    out = []
    for x, shape in zip(args, shapes, strict=True):
        lead = rank - len(shape)
        if lead:
            x = broadcast_in_dim(x, (1,) * lead + shape, tuple(range(lead, rank)))
        out.append(asarray(x))
    return out


def _array_aval(x: Any) -> ShapedArray | None:
    aval = getattr(x, "aval", None)
    return aval if isinstance(aval, ShapedArray) else None


def _fast_binary(name: str, x: Any, y: Any) -> list[Any] | None:
    """The common binary cases, promoted without the general lattice walk (a hot path).

    Two arrays of one type need nothing (except two weak bools, which promote to a strong
    bool as the lattice says, staging a conversion of each); an array with a Python float
    (inexact array) or a Python int (integer or inexact array) keeps the array's dtype, as
    the lattice would give, with the scalar converted to it. Anything else returns None for
    the general path.
    """
    ax, ay = _array_aval(x), _array_aval(y)
    if ax is not None and ay is not None:
        if ax.dtype == ay.dtype and ax.weak_type == ay.weak_type:
            if ax.weak_type and ax.dtype.kind == "b":
                return None
            return [x, y] if ax.shape == ay.shape else promote_shapes(name, x, y)
        return None
    aval, scalar, scalar_first = (ax, y, False) if ax is not None else (ay, x, True)
    if aval is None:
        return None
    kind = type(scalar)
    if not (
        (kind is float and aval.dtype.kind in "fc") or (kind is int and aval.dtype.kind in "iufc")
    ):
        return None
    if kind is int and aval.dtype.kind in "iu":
        info = np.iinfo(aval.dtype)
        if not info.min <= scalar <= info.max:
            return None  # the general path reports the overflow as JAX does
    # The aval's dtype is canonical already: convert directly, as `_convert_element_type` would.
    converted = (
        typed_scalar(scalar, aval.dtype) if aval.weak_type else np.array(scalar, dtype=aval.dtype)
    )
    array = x if scalar_first is False else y
    return [converted, array] if scalar_first else [array, converted]


def promote_args(name: str, *args: Any) -> list[Any]:
    if len(args) == 2:
        fast = _fast_binary(name, *args)
        if fast is not None:
            return fast
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    check_for_prngkeys(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def check_no_float0s(name: str, *args: Any) -> None:
    """JAX's `TypeError` for a float0 (an integer's tangent type) among the arguments."""
    # Only values with a dtype can be float0 (a Python int past int64 has none to compute).
    if any(getattr(x, "dtype", None) == dtypes.float0 for x in args):
        raise TypeError(
            f"Called {name} with a float0 array. float0s do not support any operations by "
            "design because they are not compatible with non-trivial vector spaces. No "
            "implicit dtype conversion is done. You can use np.zeros_like(arr, dtype=np.float) "
            "to cast a float0 array to a regular zeros array. \nIf you didn't expect to get a "
            "float0 you might have accidentally taken a gradient with respect to an integer "
            "argument."
        )


def check_for_prngkeys(name: str, *args: Any) -> None:
    """JAX's `TypeError` for keys among arguments of different dtypes (keys do not promote)."""
    arg_dtypes = [dtype_of(x) for x in args]
    if len(set(arg_dtypes)) < 2:
        return
    if any(dtypes.issubdtype(d, dtypes.prng_key) for d in arg_dtypes):
        got = ", ".join(dtypes.dtype_name(d) for d in arg_dtypes)
        raise TypeError(f"{name} does not accept dtypes {got}.")


def _already_inexact_array(x: Any) -> bool:
    """A tracer or device array of a floating or complex dtype: nothing to promote."""
    aval = getattr(x, "aval", None)
    return isinstance(aval, ShapedArray) and aval.dtype.kind in "fc"


def promote_args_inexact(name: str, *args: Any) -> list[Any]:
    # The common case of a unary function on a float array skips promotion (hot in eager mode).
    if len(args) == 1 and _already_inexact_array(args[0]):
        return [args[0]]
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def promote_args_numeric(name: str, *args: Any) -> list[Any]:
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*args))


def const(example: Any, value: Any) -> np.ndarray:
    """A strongly typed scalar `value` of `example`'s dtype (JAX's `lax._const`)."""
    return np.array(value, dtype_of(example))


def full_like(
    x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None
) -> Any:
    """An array shaped like `x` (or `shape`) filled with `fill_value`, weak if `x` is."""
    out_shape = shape_of(x) if shape is None else tuple(shape)
    weak = dtype is None and dtypes.is_weakly_typed(x)
    out_dtype = dtype_of(x) if dtype is None else dtypes.canonicalize_dtype(dtype)
    fill = _convert_element_type(fill_value, out_dtype, weak)
    if not out_shape:
        return fill
    mesh = getattr(typeof(x), "mesh", None)
    if shape is None and isinstance(x, Tracer) and mesh is not None and mesh.has_explicit:
        # JAX's full_like: a traced value's fill is split as the value (Explicit axes).
        sharding = getattr(typeof(x), "sharding", None)
        return broadcast_in_dim(fill, out_shape, (), out_sharding=sharding)
    return broadcast_in_dim(fill, out_shape, ())


def broadcast_to(x: Any, shape: tuple[int, ...], sharding: Any = None) -> Any:
    current = shape_of(x)
    if current == shape and (sharding is None or getattr(typeof(x), "sharding", None) == sharding):
        return asarray(x)
    lead = len(shape) - len(current)
    if lead < 0 or any(d not in (1, s) for d, s in zip(current, shape[lead:], strict=True)):
        raise ValueError(
            f"Incompatible shapes for broadcasting: {current} and requested shape {shape}"
        )
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))), out_sharding=sharding)


def broadcast_arrays(*args: Any) -> list[Any]:
    shapes = [shape_of(x) for x in args]
    if all(s == shapes[0] for s in shapes):
        return [asarray(x) for x in args]
    shape = broadcast_shapes(*shapes)
    # Over Explicit mesh axes, to the operands' common sharding (JAX's broadcast_shardings).
    sharding = broadcast_sharding([typeof(x) for x in args]) if MESHES_SEEN[0] else None
    return [broadcast_to(x, shape, sharding) for x in args]


def is_complex(x: Any) -> bool:
    return c.kind_of(dtype_of(x)) == "c"


def kind(x: Any) -> str:
    """NumPy's kind letter of `x`'s dtype, with bfloat16 and friends counted as floating."""
    return c.kind_of(dtype_of(x))
