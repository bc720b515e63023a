"""`jax.scipy.interpolate.RegularGridInterpolator`: linear or nearest interpolation on a
rectilinear grid, as JAX 0.10.2 computes it.

Each query coordinate finds its grid cell by `searchsorted` (clamped to the grid's cells) and
its normalized distance into that cell; linear interpolation sums the cell's 2**N corners
weighted by products of those distances, nearest reads the closer corner on each axis. Points
outside the grid get `fill_value` (NaN by default; None extrapolates). The interpolator is a
pytree (grid, values and fill value its leaves), so it passes through `jit` and `vmap`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from lamina_core import numpy as jnp
from lamina_core.numpy import at, check_arraylike, dtype_of, promote_dtypes_inexact, shape_of
from lamina_core.tree.tree_util import register_pytree_node

Array = Any

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _coords_from_arrays(points: Any, ndim: int) -> Array:
    """Query points as one (..., ndim) array: a tuple of coordinate arrays is broadcast and
    stacked on a new last axis; a 1-D array holds one point per `ndim` entries."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]  # the points passed as the one argument of a tuple
    if isinstance(points, tuple):
        parts = jnp.broadcast_arrays(*points)
        first = shape_of(parts[0])
        if any(shape_of(other) != first for other in parts[1:]):
            raise ValueError("coordinate arrays do not have the same shape")
        stacked = jnp.empty((*first, len(points)), dtype=float)
        for j, part in enumerate(parts):
            stacked = at(stacked)[..., j].set(part)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    array = jnp.asarray(points)
    return array.reshape(-1, ndim) if len(shape_of(array)) == 1 else array


class RegularGridInterpolator:
    """Interpolation on the grid `points` (one strictly increasing 1-D array per axis) of
    `values`, by `method` ('linear' or 'nearest'); queries outside the grid give `fill_value`
    (None: extrapolate). `bounds_error=True` raises, as in JAX: it cannot be checked under
    `jit`."""

    def __init__(
        self,
        points: Sequence[Any],
        values: Any,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: Any = np.nan,
    ) -> None:
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {values.ndim} dimensions"
            )
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(dtype_of(fill_value), dtype_of(values), casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Array:
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _coords_from_arrays(xi, ndim)
        xi_shape = shape_of(xi)
        if xi_shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi_shape[1]}, but this "
                f"RegularGridInterpolator has dimension {ndim}"
            )
        xi = xi.reshape(-1, xi_shape[-1])
        indices, distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, distances)
        else:
            result = self._evaluate_nearest(indices, distances)
        if not self.bounds_error and self.fill_value is not None:
            rank = len(shape_of(result))
            outside = out_of_bounds.reshape(shape_of(result)[:1] + (1,) * (rank - 1))
            result = jnp.where(outside, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + shape_of(self.values)[ndim:])

    def _evaluate_linear(self, indices: list[Array], distances: list[Array]) -> Array:
        # Each corner's weight broadcasts over the axes of `values` past the grid's.
        trailing = (slice(None),) + (None,) * (len(shape_of(self.values)) - len(indices))
        total = jnp.asarray(0.0)
        for corner in itertools.product(*[[i, i + 1] for i in indices]):
            weight = jnp.asarray(1.0)
            for ci, i, yi in zip(corner, indices, distances, strict=True):
                weight *= jnp.where(ci == i, 1 - yi, yi)
            total += jnp.getitem(self.values, corner) * weight[trailing]
        return total

    def _evaluate_nearest(self, indices: list[Array], distances: list[Array]) -> Array:
        nearest = [jnp.where(yi <= 0.5, i, i + 1) for i, yi in zip(indices, distances, strict=True)]
        return jnp.getitem(self.values, tuple(nearest))

    def _find_indices(self, xi: Array) -> tuple[list[Array], list[Array], Array]:
        indices, distances = [], []
        out_of_bounds = jnp.zeros((shape_of(xi)[1],), dtype=bool)
        for x, g in zip(xi, self.grid, strict=False):
            # The cell [g[i], g[i+1]] holding x, clamped to the first and last cells. (The grid
            # may be a NumPy constant under tracing: it is indexed by `jnp.getitem`.)
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            distances.append((x - jnp.getitem(g, i)) / (jnp.getitem(g, i + 1) - jnp.getitem(g, i)))
            if not self.bounds_error:
                out_of_bounds += x < g[0]
                out_of_bounds += x > g[-1]
        return indices, distances, out_of_bounds


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[str, bool]]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: tuple[str, bool], children: Iterable[Any]) -> RegularGridInterpolator:
    grid, values, fill_value = children
    return RegularGridInterpolator(grid, values, *aux, fill_value)


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
