"""Differentiation rules of `select_n`, `clamp`, `bitcast_convert_type` and
`reduce_precision`, as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import (
    Zero,
    defjvp,
    defjvp_zero,
    deflinear,
    is_undefined,
    jvp_rules,
    transpose_rules,
)
from lamina_core.lax import _elementwise as e
from lamina_core.lax import _selection as s
from lamina_core.lax._ad_common import aval_of, full_like


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    case_tangents = tangents[1:]
    out = s.select_n(which, *cases)
    if all(type(t) is Zero for t in case_tangents):
        return out, Zero(case_tangents[0].aval)
    zeros = full_like(next(t for t in case_tangents if type(t) is not Zero), 0)
    filled = [zeros if type(t) is Zero else t for t in case_tangents]
    return out, s.select_n(which, *filled)


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> Sequence[Any]:
    zeros = full_like(ct, 0)
    if aval_of(which).dtype == np.dtype(bool):
        ct0 = s.select(which, zeros, ct) if is_undefined(cases[0]) else None
        ct1 = s.select(which, ct, zeros) if is_undefined(cases[1]) else None
        return [None, ct0, ct1]
    return [None] + [
        s.select(e.eq(which, np.array(i, aval_of(which).dtype)), ct, zeros)
        if is_undefined(case)
        else None
        for i, case in enumerate(cases)
    ]


jvp_rules.set(s.select_n_p, _select_n_jvp)
transpose_rules.set(s.select_n_p, _select_n_transpose)

defjvp(
    s.clamp_p,
    lambda g, lo, x, hi: s.select(e.bitwise_and(e.gt(lo, x), e.lt(lo, hi)), g, full_like(x, 0)),
    lambda g, lo, x, hi: s.select(e.bitwise_and(e.gt(x, lo), e.lt(x, hi)), g, full_like(x, 0)),
    lambda g, lo, x, hi: s.select(e.lt(hi, x), g, full_like(x, 0)),
)
defjvp_zero(s.bitcast_convert_type_p)


def _reduce_precision_transpose(ct: Any, x: Any, **params: Any) -> Sequence[Any]:
    return [s.reduce_precision_p.bind(ct, **params)]


deflinear(s.reduce_precision_p, _reduce_precision_transpose)
