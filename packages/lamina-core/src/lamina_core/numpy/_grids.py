"""Coordinate grids and log-spaced sequences: `meshgrid`, `logspace`, `geomspace`, with
`jax.numpy`'s semantics."""

from __future__ import annotations

import operator
from typing import Any

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import dtypes as _dtypes
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, DTypeLike, shape_of


def meshgrid(
    *xi: ArrayLike, copy: bool = True, sparse: bool = False, indexing: str = "xy"
) -> list[Array]:
    """Coordinate arrays from 1-D coordinate vectors (`indexing="xy"`: the first two axes
    swapped, as for plotting; `"ij"`: matrix order). `sparse` keeps them broadcastable."""
    args = [jnp.asarray(x) for x in ensure_arraylike("meshgrid", *xi)]
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(len(shape_of(x)) != 1 for x in args):
        shapes = [shape_of(x) for x in args]
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {shapes}")
    shape = [shape_of(x)[0] for x in args]
    if indexing == "xy" and len(args) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(args):
        where = i
        if indexing == "xy" and len(args) >= 2 and i < 2:
            where = 1 - i
        s = [1] * len(args)
        s[where] = shape_of(x)[0]
        y = _lax.reshape(x, tuple(s))
        out.append(y if sparse else jnp.broadcast_to(y, tuple(shape)))
    return out


def _log_dtype(start: Any, stop: Any, dtype: DTypeLike | None) -> Any:
    computation = _dtypes.result_type(start, stop, float)
    return computation, (computation if dtype is None else _dtypes.canonicalize_dtype(dtype))


def logspace(
    start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
    base: ArrayLike = 10.0, dtype: DTypeLike | None = None, axis: int = 0,
) -> Array:  # fmt: skip
    """`base ** linspace(start, stop, num)`: numbers evenly spaced on a log scale."""
    num = operator.index(num)
    computation, out = _log_dtype(start, stop, dtype)
    lin = jnp.linspace(start, stop, num, endpoint=endpoint, dtype=computation, axis=axis)
    return jnp.power(jnp.asarray(base, dtype=computation), lin).astype(out)


def geomspace(
    start: ArrayLike, stop: ArrayLike, num: int = 50, endpoint: bool = True,
    dtype: DTypeLike | None = None, axis: int = 0,
) -> Array:  # fmt: skip
    """Numbers evenly spaced on a log scale from `start` to `stop` (of one sign)."""
    num = operator.index(num)
    computation, out = _log_dtype(start, stop, dtype)
    start = jnp.asarray(start, dtype=computation)
    stop = jnp.asarray(stop, dtype=computation)
    sign = jnp.sign(start)
    res = sign * logspace(jnp.log10(start * sign), jnp.log10(stop * sign), num,
                          endpoint=endpoint, base=10.0, dtype=computation, axis=0)  # fmt: skip
    if axis != 0:
        res = jnp.moveaxis(res, 0, axis)
    return res.astype(out)


__all__ = ["geomspace", "logspace", "meshgrid"]
