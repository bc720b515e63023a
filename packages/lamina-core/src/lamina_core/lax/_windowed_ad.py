"""Differentiation rules of the generic and windowed reductions, as JAX's.

`reduce` differentiates as a tree of pairwise reductions (the vmapped computation applied to
halves of the reduced axis); the generic `reduce_window` reduces primals and tangents together
with the computation's jvp. `reduce_window_sum` is linear: its transpose pads the cotangent
(interior padding undoes the strides) and sums it over windows again. Max/min pooling's
tangent is `select_and_gather_add` (the tangent at each window's selected element), whose
transpose is `select_and_scatter_add`, and vice versa.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    JVPRule,
    Zero,
    defjvp,
    deflinear,
    instantiate_zeros,
    is_undefined,
    jvp_flat,
    jvp_rules,
    not_differentiable,
    transpose_rules,
    zero_of,
)
from lamina_core.ir import ClosedJaxpr, Jaxpr, Primitive
from lamina_core.lax import _elementwise as ew
from lamina_core.lax import _reduce_generic as rg
from lamina_core.lax import _select_and_scatter as ss
from lamina_core.lax import _windowed as w
from lamina_core.lax._ad_common import aval_of, full_like
from lamina_core.lax._joining import pad
from lamina_core.lax._shape import reshape, squeeze
from lamina_core.lax._slicing import slice as slice_
from lamina_core.lax._slicing import slice_in_dim
from lamina_core.lax._structural import full
from lamina_core.trace import eval_jaxpr
from lamina_core.transforms import vmap

# --- reduce ------------------------------------------------------------------------------------


def _halve(
    reducer: Callable[..., Any], xs: Sequence[Any], inits: Sequence[Any], axis: int
) -> Sequence[Any]:
    """One step of the pairwise tree: the first half of `axis` reduced with the second (the
    shorter half padded with the init values)."""
    n = aval_of(xs[0]).shape[axis]
    n1 = (n + 1) // 2
    firsts = [slice_in_dim(x, 0, n1) for x in xs]
    seconds = [slice_in_dim(x, n1, None) for x in xs]
    if n - n1 != n1:
        config = [(0, 0, 0)] * len(aval_of(xs[0]).shape)
        config[axis] = (0, 1, 0)
        seconds = [pad(x, i, config) for x, i in zip(seconds, inits, strict=True)]
    return list(reducer(*firsts, *seconds))


def _reduce_jvp_rule(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    computation: Any,
    jaxpr: ClosedJaxpr,
    dimensions: Sequence[int],
) -> tuple[Any, Any]:
    xs, inits = rg.split_operands(primals)
    xs_dot, inits_dot = rg.split_operands(tangents)
    if any(type(t) is not Zero for t in inits_dot):
        raise NotImplementedError(
            "Gradient of general lax.reduce with non-zero tangents for initial values to "
            "reduction not implemented"
        )
    shape = np.array(aval_of(xs[0]).shape, dtype=int)
    axes = tuple(dimensions)
    kept = np.delete(np.arange(len(shape)), axes)
    count = np.prod(shape[list(axes)])
    # The reduced axes first, flattened into one (JAX's reshape with a permutation).
    new_shape = (count, *shape[kept])
    permutation = (*axes, *kept)
    xs = [reshape(x, new_shape, permutation) for x in xs]
    xs_dot = [reshape(instantiate_zeros(t), new_shape, permutation) for t in xs_dot]

    def reducer(*args: Any) -> list[Any]:
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)

    for _ in range(len(kept) + 1):
        reducer = vmap(reducer)

    def tree(*operands: Any) -> list[Any]:
        parts: Sequence[Any] = operands
        while aval_of(parts[0]).shape[0] > 1:
            parts = _halve(reducer, parts, inits, 0)
        if aval_of(parts[0]).shape[0] == 0:
            return [full(tuple(shape[kept]), i) for i in inits]
        return [squeeze(x, (0,)) for x in parts]

    return jvp_flat(tree, xs, xs_dot)


jvp_rules.set(rg.reduce_p, _reduce_jvp_rule)


# --- reduce_window ----------------------------------------------------------------------------


def _reduce_window_jvp_rule(
    primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Jaxpr, consts: Any, **params: Any
) -> tuple[list[Any], list[Any]]:
    xs, inits = rg.split_operands(primals)
    xs_dot, inits_dot = rg.split_operands(tangents)
    if not all(type(t) is Zero for t in inits_dot):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    n = len(xs)

    def computation(left: Sequence[Any], right: Sequence[Any]) -> list[Any]:
        def reduce_pair(*args: Any) -> list[Any]:
            return eval_jaxpr(jaxpr, list(consts), *args)

        outs, outs_dot = jvp_flat(reduce_pair, [*left[:n], *right[:n]], [*left[n:], *right[n:]])
        return [*outs, *outs_dot]

    out = w.reduce_window(
        [*xs, *[instantiate_zeros(t) for t in xs_dot]],
        [*inits, *[instantiate_zeros(t) for t in inits_dot]],
        computation,
        **params,
    )
    return list(out[:n]), list(out[n:])


jvp_rules.set(w.reduce_window_p, _reduce_window_jvp_rule)


def _transpose_padding(
    in_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    out_shape: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[tuple[Any, Any]]:
    """How much to pad the (stride-dilated) cotangent so windows of it cover each input
    element once per window it was in: the padding of a convolution's input gradient."""
    dilated_in = w.dilate_shape(in_shape, base_dilation)
    dilated_window = w.dilate_shape(window_dimensions, window_dilation)
    dilated_out = w.dilate_shape(out_shape, window_strides)
    # NumPy integers, as JAX computes them: they print as `np.int64(...)` in `pad`'s params.
    before = np.subtract(dilated_window, [lo for lo, _ in padding]) - 1
    after = np.add(dilated_in, dilated_window) - 1 - dilated_out - before
    return list(zip(before, after, strict=True))


def _reduce_window_sum_transpose(
    ct: Any,
    operand: Any,
    *,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[Any]:
    assert is_undefined(operand)
    in_shape = operand.aval.shape
    pads = _transpose_padding(
        in_shape,
        window_dimensions,
        window_strides,
        aval_of(ct).shape,
        padding,
        base_dilation,
        window_dilation,
    )
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides, strict=True)]
    padded = pad(ct, full_like(ct, 0, shape=()), config)
    ones = (1,) * len(in_shape)
    out = w._reduce_window_sum(
        padded,
        window_dimensions,
        base_dilation,
        [(0, 0)] * len(in_shape),
        base_dilation=ones,
        window_dilation=window_dilation,
    )
    assert aval_of(out).shape == tuple(in_shape), (aval_of(out).shape, in_shape)
    return [out]


deflinear(w.reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(select_prim: Primitive) -> Callable[..., Any]:
    def tangent(g: Any, operand: Any, **params: Any) -> Any:
        return ss._select_and_gather_add(g, operand, select_prim, **params)

    return tangent


defjvp(w.reduce_window_max_p, _chooser_jvp(ew.ge_p))
defjvp(w.reduce_window_min_p, _chooser_jvp(ew.le_p))


# --- select_and_scatter_add, select_and_gather_add -------------------------------------------


def _linear_in_source_jvp(apply: Callable[..., Any]) -> JVPRule:
    """The jvp rule of `apply(source, operand, **params)`, linear in `source` (`operand` only
    chooses the window positions)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        source, operand = primals
        source_dot, _ = tangents
        out = apply(source, operand, **params)
        if type(source_dot) is Zero:
            return out, zero_of(out)
        return out, apply(source_dot, operand, **params)

    return rule


def _select_and_scatter_add_transpose(
    ct: Any,
    source: Any,
    operand: Any,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
) -> list[Any]:
    assert is_undefined(source) and not is_undefined(operand)
    if type(ct) is Zero:
        return [Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    gathered = ss._select_and_gather_add(
        ct, operand, select_prim, window_dimensions, window_strides, padding, ones, ones
    )
    return [gathered, None]


jvp_rules.set(ss.select_and_scatter_add_p, _linear_in_source_jvp(ss._select_and_scatter_add))
transpose_rules.set(ss.select_and_scatter_add_p, _select_and_scatter_add_transpose)


def _select_and_gather_add_transpose(
    ct: Any,
    tangents: Any,
    operand: Any,
    *,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[Any]:
    assert is_undefined(tangents) and not is_undefined(operand)
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
            f"window_dilation={window_dilation}."
        )
    if type(ct) is Zero:
        return [Zero(tangents.aval), None]
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        # The holes of the base dilation hold the selection's identity: never selected.
        dtype = aval_of(operand).dtype
        fill = rg.max_identity(dtype) if select_prim is ew.ge_p else rg.min_identity(dtype)
        operand = pad(operand, fill, tuple((0, 0, d - 1) for d in base_dilation))
    out = ss._select_and_scatter_add(
        ct, operand, select_prim, window_dimensions, window_strides, padding
    )
    if dilated:
        shape = aval_of(out).shape
        out = slice_(out, (0,) * len(shape), shape, base_dilation)
    return [out, None]


jvp_rules.set(ss.select_and_gather_add_p, _linear_in_source_jvp(ss._select_and_gather_add))
transpose_rules.set(ss.select_and_gather_add_p, _select_and_gather_add_transpose)

# As in JAX, the general form has no derivative (pooling's derivatives never produce it).
not_differentiable(ss.select_and_scatter_p)
