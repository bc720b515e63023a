"""`associative_scan`: a parallel prefix scan built from slices, pads and concatenations.

The same odd/even recursion as JAX's, so what it stages (and the derivatives of the
cumulative reductions, which JAX defines as the jvp of this scan) prints as JAX prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina_core.lax._ad_common import aval_of, const
from lamina_core.lax._elementwise import add, bitwise_or
from lamina_core.lax._joining import concatenate, pad
from lamina_core.lax._shape import canonicalize_axis, rev
from lamina_core.lax._slicing import slice_in_dim
from lamina_core.tree import tree_util


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """`a` and `b` interleaved along `axis` (a first; `a` may be one longer)."""
    a_shape, b_shape = aval_of(a).shape, aval_of(b).shape
    same = a_shape[axis] == b_shape[axis]
    a_pad = [(0, 0, 0)] * len(a_shape)
    b_pad = [(0, 0, 0)] * len(b_shape)
    a_pad[axis] = (0, 1 if same else 0, 1)
    b_pad[axis] = (1, 0 if same else 1, 1)
    op = bitwise_or if aval_of(a).dtype == np.dtype(bool) else add
    return op(pad(a, const(a, 0), a_pad), pad(b, const(b, 0), b_pad))


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """Inclusive scan of `elems` (a pytree of arrays) with the associative `fn` along `axis`."""
    flat, tree = tree_util.tree_flatten(elems)
    if not flat:
        raise ValueError("associative_scan needs at least one array")
    if reverse:
        flat = [rev(e, [axis]) for e in flat]
    axis = canonicalize_axis(axis, len(aval_of(flat[0]).shape), "associative_scan")
    num = aval_of(flat[0]).shape[axis]
    if any(aval_of(e).shape[axis] != num for e in flat[1:]):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[aval_of(e).shape for e in flat]})"
        )

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        return tree_util.tree_leaves(out)

    def scan(elems: list[Any]) -> list[Any]:
        n = aval_of(elems[0]).shape[axis]
        if n < 2:
            return elems
        reduced = combine(
            [slice_in_dim(e, 0, -1, stride=2, axis=axis) for e in elems],
            [slice_in_dim(e, 1, None, stride=2, axis=axis) for e in elems],
        )
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine(
                [slice_in_dim(e, 0, -1, axis=axis) for e in odd],
                [slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems],
            )
        else:
            even = combine(odd, [slice_in_dim(e, 2, None, stride=2, axis=axis) for e in elems])
        even = [
            concatenate([slice_in_dim(e, 0, 1, axis=axis), r], axis)
            for e, r in zip(elems, even, strict=True)
        ]
        return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]

    scans = scan(flat)
    if reverse:
        scans = [rev(s, [axis]) for s in scans]
    return tree_util.tree_unflatten(tree, scans)


__all__ = ["associative_scan"]
