"""`jax.scipy.ndimage.map_coordinates`: interpolation of an N-d array at given coordinates, of
order 0 (nearest) or 1 (linear), as JAX 0.10.2 computes it.

Each coordinate axis gives one or two (index, weight) nodes; every combination of nodes across
axes gathers one value, scaled by the product of its weights, and the sum of those is the
result. Out-of-range indices are mapped back by the mode's index fixer; in 'constant' mode the
gathered value is replaced by `cval` where any index was out of range. The work is one jitted
function of JAX's name with order, mode and cval static, so jaxprs print alike.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.transforms import Jitted

Array = Any

__all__ = ["map_coordinates"]


def _mirror_index(index: Array, size: int) -> Array:
    # A triangular wave of half-period size - 1, on integers: reflects about both end samples.
    s = size - 1
    return jnp.abs((index + s) % (2 * s) - s)


def _reflect_index(index: Array, size: int) -> Array:
    # Reflection about the array's edges (half a sample outside the end samples): the mirror
    # wave on a doubled grid, halved back.
    return jnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Array, int], Array]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}
"""Each mode's map from an index (possibly out of range) to the index read; the insertion
order is the one JAX's error message lists."""


def _round_half_away_from_zero(a: Array) -> Array:
    return a if dtypes.issubdtype(dtype_of(a), np.integer) else lax.round(a)


Node = tuple[Array, Any]
"""An (index, weight) pair of one axis' interpolation."""


def _nearest_nodes(coordinate: Array) -> list[Node]:
    index = _round_half_away_from_zero(coordinate).astype(np.int32)
    return [(index, dtype_of(coordinate).type(1))]


def _linear_nodes(coordinate: Array) -> list[Node]:
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    lower_weight = 1 - upper_weight
    index = lower.astype(np.int32)
    return [(index, lower_weight), (index + 1, upper_weight)]


def _map_coordinates(
    input: Any, coordinates: Sequence[Any], order: int, mode: str, cval: Any
) -> Array:
    # `jnp.getitem` below, not `values[...]`: under tracing a constant stays a NumPy array.
    values = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    dtype = dtype_of(values)
    fill = jnp.asarray(cval, dtype)
    shape = shape_of(values)
    if len(coordinates) != len(shape):
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coordinates)} != {len(shape)}"
        )
    fix_index = _INDEX_FIXERS.get(mode)
    if fix_index is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}."
        )
    if order == 0:
        nodes_of = _nearest_nodes
    elif order == 1:
        nodes_of = _linear_nodes
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    def in_range(index: Array, size: int) -> Any:
        # Only 'constant' needs to know: the other modes read a fixed index that is in range.
        return (index >= 0) & (index < size) if mode == "constant" else True

    per_axis = [
        [(fix_index(index, size), in_range(index, size), weight) for index, weight in nodes_of(c)]
        for c, size in zip(coords, shape, strict=True)
    ]
    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        valid = [ok for _, ok, _ in corner]
        if all(ok is True for ok in valid):
            gathered = jnp.getitem(values, indices)
        else:
            gathered = jnp.where(
                functools.reduce(operator.and_, valid), jnp.getitem(values, indices), fill
            )
        weight = functools.reduce(operator.mul, [w for _, _, w in corner])
        terms.append(weight * gathered)
    result = sum(terms[1:], terms[0])
    if dtypes.issubdtype(dtype, np.integer):
        result = _round_half_away_from_zero(result)
    return result.astype(dtype)


_map_coordinates_jit = Jitted(_map_coordinates, static_argnums=(2, 3, 4))


def map_coordinates(
    input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant", cval: Any = 0.0
) -> Array:
    """`input` interpolated at `coordinates` (one array per axis of `input`), by nearest
    (`order=0`) or linear (`order=1`) interpolation. Outside the array, `mode` decides:
    'constant' (read `cval`), 'nearest', 'mirror', 'wrap' or 'reflect'; as in JAX, 'wrap' and
    'constant' act as SciPy's 'grid-wrap' and 'grid-constant'."""
    return _map_coordinates_jit(input, coordinates, order, mode, cval)
