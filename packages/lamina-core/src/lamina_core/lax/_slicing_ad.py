"""Differentiation rules of `slice`, `dynamic_slice` and `dynamic_update_slice`, as JAX's:
linear in the operand (and update), never in the indices."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    instantiate_zeros,
    is_undefined,
    jvp_rules,
    transpose_rules,
    zero_of,
)
from lamina_core.lax import _slicing as s
from lamina_core.lax._ad_common import aval_of, const, full_like
from lamina_core.lax._joining import pad
from lamina_core.lax._structural import full


def _slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    out = s.slice_p.bind(primals[0], **params)
    t = tangents[0]
    return out, (zero_of(out) if type(t) is Zero else s.slice_p.bind(t, **params))


def _slice_transpose(
    ct: Any, x: Any, *, start_indices: Any, limit_indices: Any, strides: Any
) -> Sequence[Any]:
    shape = x.aval.shape
    if strides is None or np.all(np.equal(strides, 1)):
        pads = zip(
            start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices), strict=True
        )
    else:
        ct_shape = aval_of(ct).shape
        real_limits = np.add(
            start_indices,
            np.where(
                np.array(ct_shape) == 0,
                0,
                np.add(1, np.multiply(np.subtract(ct_shape, 1), strides)),
            ),
        )
        pads = zip(
            start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1), strict=True
        )
    return [pad(ct, const(ct, 0), list(pads))]


jvp_rules.set(s.slice_p, _slice_jvp)
transpose_rules.set(s.slice_p, _slice_transpose)


def _dynamic_slice_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, slice_sizes: Any
) -> tuple[Any, Any]:
    t = tangents[0]
    if type(t) is not Zero:
        t = s.dynamic_slice_p.bind(t, *primals[1:], slice_sizes=slice_sizes)
    out = s.dynamic_slice_p.bind(primals[0], *primals[1:], slice_sizes=slice_sizes)
    return out, (zero_of(out) if type(t) is Zero else t)


def _dynamic_slice_transpose(ct: Any, x: Any, *starts: Any, slice_sizes: Any) -> Sequence[Any]:
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    return [s.dynamic_update_slice_p.bind(zeros, ct, *starts), *[None] * len(starts)]


jvp_rules.set(s.dynamic_slice_p, _dynamic_slice_jvp)
transpose_rules.set(s.dynamic_slice_p, _dynamic_slice_transpose)


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    operand, update, *starts = primals
    g_operand, g_update = tangents[:2]
    out = s.dynamic_update_slice_p.bind(operand, update, *starts)
    if type(g_operand) is Zero and type(g_update) is Zero:
        return out, zero_of(out)
    g_operand = instantiate_zeros(g_operand)
    g_update = instantiate_zeros(g_update)
    return out, s.dynamic_update_slice_p.bind(g_operand, g_update, *starts)


def _dynamic_update_slice_transpose(
    ct: Any, operand: Any, update: Any, *starts: Any
) -> Sequence[Any]:
    update_aval = update.aval if is_undefined(update) else aval_of(update)
    zeros = full_like(ct, 0, update_aval.shape)
    operand_ct = (
        s.dynamic_update_slice_p.bind(ct, zeros, *starts) if is_undefined(operand) else None
    )
    update_ct = (
        s.dynamic_slice_p.bind(ct, *starts, slice_sizes=update_aval.shape)
        if is_undefined(update)
        else None
    )
    return [operand_ct, update_ct, *[None] * len(starts)]


jvp_rules.set(s.dynamic_update_slice_p, _dynamic_update_slice_jvp)
transpose_rules.set(s.dynamic_update_slice_p, _dynamic_update_slice_transpose)
