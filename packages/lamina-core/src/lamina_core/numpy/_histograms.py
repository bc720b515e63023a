"""Counting and histograms: `bincount`, `histogram_bin_edges`, `histogram`, `histogram2d` and
`histogramdd`, with `jax.numpy`'s semantics.

Values are placed in bins with `searchsorted` (a value equal to the last edge belongs to the
last bin) and counted with a scatter-add that drops the ones beyond the edges.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import lamina_core.numpy as jnp
from lamina_core import lax as _lax
from lamina_core.ir import NamedSharding, ShardingTypeError, canonicalize_sharding
from lamina_core.ir import dtypes as _dtypes
from lamina_core.lax import under_auto_axes
from lamina_core.numpy._index_update import at
from lamina_core.numpy._indexing import rewriting_take
from lamina_core.numpy._promote import promote_dtypes_inexact
from lamina_core.numpy._reductions import ensure_arraylike
from lamina_core.numpy._util import Array, ArrayLike, dtype_of, shape_of
from lamina_core.trace import ConcretizationTypeError, Tracer


def _concrete(value: Any, why: str) -> Any:
    """`value`, which must not be traced: `why` says which argument it is."""
    if isinstance(value, Tracer):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{value._error_repr()}\n{why}"
        )
    return value


def _type_text(x: Any) -> str:
    """A value's type as JAX's `typeof(x).str_short(True, True)` prints it."""
    dims = ",".join(str(d) for d in shape_of(x))
    return f"{_dtypes.short_dtype_name(dtype_of(x))}[{dims}]({{}})"


def bincount(
    x: ArrayLike,
    weights: ArrayLike | None = None,
    minlength: int = 0,
    *,
    length: int | None = None,
    out_sharding: Any = None,
) -> Array:
    """How many times each non-negative integer occurs in the 1-D `x` (or the sum of their
    `weights`), as `jnp.bincount`. Negative values count in bin 0; values from `length` on
    are dropped. Without a static `length`, `x` must be concrete (the length is `max(x) + 1`).
    `out_sharding` must be fully replicated (or unreduced over every mesh axis), as JAX's.
    """
    (x,) = ensure_arraylike("bincount", x)
    if dtype_of(x) == np.bool_:
        x = _lax.convert_element_type(x, np.int32)
    if not _dtypes.issubdtype(dtype_of(x), np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {dtype_of(x)}")
    if len(shape_of(x)) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(
        _concrete(minlength, "The error occurred because of argument 'minlength' of jnp.bincount.")
    )
    if length is None:
        values = np.asarray(
            _concrete(
                x,
                "The error occurred because of argument 'x' of jnp.bincount. To avoid this "
                "error, pass a static `length` argument.",
            )
        )
        length = builtins.max(minlength, values.size and int(builtins.max(0, values.max())) + 1)
    else:
        length = operator.index(
            _concrete(length, "The error occurred because of argument 'length' of jnp.bincount.")
        )
    if weights is None:
        weights = np.array(1, np.int32)
    elif shape_of(x) != shape_of(weights):
        raise ValueError(
            f"type of weights must match type of x. Got typeof(x)={_type_text(x)} and "
            f"typeof(weights)={_type_text(weights)}"
        )
    sharding = canonicalize_sharding(out_sharding, "jnp.bincount")
    if sharding is not None and not _replicated_or_unreduced(sharding):
        raise ShardingTypeError(
            "out_sharding passed to `jnp.bincount` can only be fully replicated"
            " or fully unreduced along all mesh axes"
        )
    counts = jnp.zeros(length, _dtypes.dtype(weights, canonicalize=True))
    bins = jnp.clip(x, 0)
    if sharding is None:
        return at(counts)[bins].add(weights, mode="drop")
    # JAX's indexed update given an `out_sharding`: the scatter under `auto_axes`, its
    # operand, updates and index as arguments.
    weights = jnp.asarray(weights)
    scatter = lambda c, w, i: at(c)[i].add(w, mode="drop")  # noqa: E731
    return under_auto_axes(scatter, sharding)(counts, weights, bins)


def _replicated_or_unreduced(sharding: NamedSharding) -> bool:
    spec = sharding.spec
    if spec.partitions or spec.reduced:
        return False
    return not spec.unreduced or set(spec.unreduced) == set(sharding.mesh.axis_names)


def histogram_bin_edges(
    a: ArrayLike,
    bins: ArrayLike = 10,
    range: Sequence[ArrayLike] | None = None,
    weights: ArrayLike | None = None,
) -> Array:
    """The edges of a histogram's bins: `bins` itself when it is 1-D, else `bins + 1` evenly
    spaced edges over `range` (by default the data's), as `jnp.histogram_bin_edges`."""
    del weights  # Only NumPy's string estimators of `bins` would use them.
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    arr, _ = ensure_arraylike("histogram_bin_edges", a, bins)
    dtype = dtype_of(promote_dtypes_inexact(arr)[0])
    if np.ndim(bins) == 1:
        return jnp.asarray(bins, dtype=dtype)
    count = operator.index(_concrete(bins, "bins argument of histogram_bin_edges"))
    if range is None:
        bounds = jnp.astype(jnp.stack([jnp.min(arr), jnp.max(arr)]), dtype)
    else:
        bounds = jnp.asarray(range, dtype=dtype)
    if shape_of(bounds) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {bounds}")
    # An empty range is widened to one unit around it, as NumPy does.
    empty = jnp.equal(jnp.ptp(bounds), 0)
    lo, hi = rewriting_take(bounds, 0), rewriting_take(bounds, 1)
    lo = jnp.where(empty, jnp.subtract(lo, 0.5), lo)
    hi = jnp.where(empty, jnp.add(hi, 0.5), hi)
    edges: Array = jnp.linspace(lo, hi, count + 1, dtype=dtype)
    return edges


def _string_bins(bins: Any) -> None:
    if isinstance(bins, str):
        # JAX converts `bins` with `asarray` before looking at it.
        raise TypeError(f"asarray: expected ArrayLike, got {bins} of type {type(bins)}.")


def histogram(
    a: ArrayLike,
    bins: ArrayLike = 10,
    range: Sequence[ArrayLike] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Array, Array]:
    """The (weighted) counts of `a`'s values in each bin, and the bins' edges, as
    `jnp.histogram` (the counts are of `a`'s inexact type; `density` normalizes them)."""
    _string_bins(bins)
    if weights is None:
        arr, _ = ensure_arraylike("histogram", a, bins)
        (arr,) = promote_dtypes_inexact(arr)
        weights = jnp.ones_like(arr)
    else:
        arr, _, weights = ensure_arraylike("histogram", a, bins, weights)
        if shape_of(arr) != shape_of(weights):
            raise ValueError("weights should have the same shape as a.")
        arr, weights = promote_dtypes_inexact(arr, weights)
    edges = histogram_bin_edges(arr, bins, range, weights)
    n = shape_of(edges)[0]
    index = jnp.searchsorted(edges, arr, side="right")
    index = jnp.where(jnp.equal(arr, rewriting_take(edges, -1)), n - 1, index)
    # Bin 0 collects the values below the first edge; values above the last are dropped.
    counts = at(jnp.zeros(n, dtype_of(weights)))[index].add(weights)
    counts = _lax.slice_in_dim(counts, 1, n)
    if density:
        counts = jnp.divide(jnp.divide(counts, jnp.diff(edges)), jnp.sum(counts))
    return counts, edges


def histogram2d(
    x: ArrayLike,
    y: ArrayLike,
    bins: ArrayLike | list[ArrayLike] = 10,
    range: Sequence[Array | Sequence[ArrayLike] | None] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Array, Array, Array]:
    """The (weighted) counts of the points `(x, y)` in a grid of bins, and the edges along
    each axis, as `jnp.histogram2d`."""
    x, y = ensure_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        shared = jnp.asarray(bins)
        bins = [shared, shared]
    sample = jnp.transpose(jnp.stack([x, y]))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(
    sample: ArrayLike,
    bins: ArrayLike | list[ArrayLike] = 10,
    range: Sequence[Array | Sequence[ArrayLike] | None] | None = None,
    weights: ArrayLike | None = None,
    density: bool | None = None,
) -> tuple[Array, list[Array]]:
    """The (weighted) counts of the `N` points of the `(N, D)` `sample` in a `D`-dimensional
    grid of bins, and the list of each dimension's edges, as `jnp.histogramdd`."""
    if weights is None:
        (sample,) = ensure_arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(sample)
    else:
        sample, weights = ensure_arraylike("histogramdd", sample, weights)
        if shape_of(weights) != shape_of(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    n, d = shape_of(sample)
    if range is not None and (
        len(range) != d or any(r is not None and np.shape(r)[0] != 2 for r in range)
    ):
        raise ValueError(
            f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or Nones; "
            f"got {range=}"
        )
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = d * [bins]
    else:
        if len(per_dim) != d:
            raise ValueError("should be a bin for each dimension.")

    indices: list[Array] = []
    edges_by_dim: list[Array] = []
    for i in builtins.range(d):
        column = _lax.index_in_dim(sample, i, 1, keepdims=False)
        edges = histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        index = jnp.searchsorted(edges, column, side="right")
        on_last = jnp.equal(column, rewriting_take(edges, -1))
        indices.append(jnp.where(on_last, jnp.subtract(index, 1), index))
        edges_by_dim.append(edges)

    # Each dimension gets an underflow and an overflow bin, cut off at the end.
    shape = tuple(shape_of(e)[0] + 1 for e in edges_by_dim)
    flat = jnp.ravel_multi_index(tuple(indices), shape, mode="clip")
    hist = jnp.reshape(bincount(flat, weights, length=math.prod(shape)), shape)
    hist = _lax.slice(hist, (1,) * d, tuple(s - 1 for s in shape))
    if density:
        hist = jnp.astype(hist, dtype_of(sample))
        hist = jnp.divide(hist, jnp.sum(hist))
        for i, e in enumerate(edges_by_dim):
            widths = jnp.reshape(jnp.diff(e), tuple(-1 if j == i else 1 for j in builtins.range(d)))
            hist = jnp.divide(hist, widths)
    return hist, edges_by_dim


__all__ = ["bincount", "histogram", "histogram2d", "histogram_bin_edges", "histogramdd"]
