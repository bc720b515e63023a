"""Batching rules of select_n and clamp.

`select_n` and `clamp` follow JAX's rules: when the operands already agree (same mapped axis
and shape, or scalar bounds/predicate) the primitive applies where the mapped axis is;
otherwise every non-scalar operand gets its mapped axis at the front (unmapped ones are
broadcast there) and lower-rank ones are broadcast up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lamina_core.interpreters import AxisData, BatchDim, batching_rules
from lamina_core.lax._batching_common import bdim_at_front, moveaxis, ndim_of, shape_of
from lamina_core.lax._selection import clamp_p, select_n, select_n_p
from lamina_core.lax._structural import broadcast, broadcast_in_dim


def _mapped_size(vals: Sequence[Any], dims: Sequence[BatchDim]) -> int:
    return next(shape_of(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)


def _select_n_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    (which, *cases), (which_bdim, *case_bdims) = vals, dims
    size = _mapped_size(vals, dims)
    if all(d == which_bdim for d in case_bdims):
        assert which_bdim is not None
        if shape_of(which) != shape_of(cases[0]):
            # A scalar predicate per example over array cases: spread it along the mapped axis.
            assert ndim_of(which) == 1
            which = broadcast_in_dim(which, shape_of(cases[0]), (which_bdim,))
        return select_n(which, *cases), which_bdim
    mapped_cases = [d for d in case_bdims if d is not None]
    if ndim_of(which) == 0 and len(mapped_cases) == len(cases):
        # One scalar predicate for all examples: the cases only need to agree among
        # themselves, at the first case's mapped axis.
        first = mapped_cases[0]
        if all(d == first for d in mapped_cases):
            return select_n(which, *cases), first
        if all(shape_of(c) == shape_of(cases[0]) for c in cases):
            rest = [moveaxis(c, d, first) for c, d in zip(cases[1:], mapped_cases[1:], strict=True)]
            return select_n(which, cases[0], *rest), first
    if ndim_of(which):
        which = bdim_at_front(which, which_bdim, size)
    if any(ndim_of(c) for c in cases):
        cases = [bdim_at_front(c, d, size) for c, d in zip(cases, case_bdims, strict=True)]
    case_shape = shape_of(cases[0])
    if 0 < ndim_of(which) < len(case_shape):
        assert ndim_of(which) == 1
        which = broadcast_in_dim(which, case_shape, (0,))
    if ndim_of(which) > len(case_shape):
        # Scalar cases under a mapped predicate (JAX's `broadcast_like`).
        which_shape = shape_of(which)
        cases = [broadcast_in_dim(c, which_shape, ()) for c in cases]
    return select_n(which, *cases), 0


def _clamp_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim]
) -> tuple[Any, BatchDim]:
    (lo, x, hi), (lo_bdim, x_bdim, hi_bdim) = vals, dims
    size = _mapped_size(vals, dims)
    if lo_bdim == x_bdim == hi_bdim:
        # All mapped at one axis (a rule runs only when something is mapped).
        assert lo_bdim is not None and hi_bdim is not None
        if shape_of(lo) == shape_of(x) == shape_of(hi):
            return clamp_p.bind(lo, x, hi), x_bdim
        if ndim_of(lo) == ndim_of(hi) == 1:
            # Scalar bounds per example: spread them along the mapped axis.
            lo = broadcast_in_dim(lo, shape_of(x), (lo_bdim,))
            hi = broadcast_in_dim(hi, shape_of(x), (hi_bdim,))
            return clamp_p.bind(lo, x, hi), x_bdim
    elif ndim_of(lo) == 0 and ndim_of(hi) == 0 and x_bdim is not None:
        return clamp_p.bind(lo, x, hi), x_bdim
    lo = bdim_at_front(lo, lo_bdim, size) if ndim_of(lo) else lo
    hi = bdim_at_front(hi, hi_bdim, size) if ndim_of(hi) else hi
    x = bdim_at_front(x, x_bdim, size) if ndim_of(x) else x
    x_shape = shape_of(x)
    if ndim_of(lo) == 0 and x_shape:
        lo = broadcast(lo, x_shape)
    if ndim_of(hi) == 0 and x_shape:
        hi = broadcast(hi, x_shape)
    if 0 < ndim_of(lo) < len(x_shape):
        assert ndim_of(lo) == 1
        lo = broadcast_in_dim(lo, x_shape, (0,))
    if 0 < ndim_of(hi) < len(x_shape):
        assert ndim_of(hi) == 1
        hi = broadcast_in_dim(hi, x_shape, (0,))
    if ndim_of(lo) > len(x_shape):
        assert not x_shape
        x = broadcast(x, shape_of(lo))
    return clamp_p.bind(lo, x, hi), 0


batching_rules.set(select_n_p, _select_n_batch)
batching_rules.set(clamp_p, _clamp_batch)
