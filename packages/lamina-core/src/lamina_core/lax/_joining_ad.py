"""Differentiation rules of `concatenate`, `stack`, `unstack`, `split` and `pad`, as JAX's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import deflinear, instantiate_zeros, is_undefined
from lamina_core.lax import _joining as j
from lamina_core.lax._ad_common import aval_of
from lamina_core.lax._elementwise import sub
from lamina_core.lax._reductions import reduce_sum
from lamina_core.lax._slicing import slice as slice_
from lamina_core.trace import typeof


def _shape(x: Any) -> tuple[int, ...]:
    return x.aval.shape if is_undefined(x) else tuple(typeof(x).shape)  # type: ignore[attr-defined]


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> Sequence[Any]:
    sizes = tuple(_shape(o)[dimension] for o in operands)
    return j.split(ct, sizes, axis=dimension)


def _split_transpose(cts: Sequence[Any], x: Any, *, sizes: Any, axis: int) -> Sequence[Any]:
    return [j.concatenate([instantiate_zeros(c) for c in cts], axis)]


def _stack_transpose(ct: Any, *operands: Any, axis: int) -> Sequence[Any]:
    return list(j.unstack_p.bind(ct, axis=axis))


def _unstack_transpose(cts: Sequence[Any], x: Any, *, axis: int) -> Sequence[Any]:
    return [j.stack_p.bind(*[instantiate_zeros(c) for c in cts], axis=axis)]


def _pad_transpose(ct: Any, x: Any, padding_value: Any, *, padding_config: Any) -> Sequence[Any]:
    lo, hi, interior = (list(v) for v in zip(*padding_config, strict=True))
    ndim = len(aval_of(ct).shape)

    def total(v: Any) -> Any:
        return reduce_sum(v, list(range(ndim)))

    ct_x = None
    if is_undefined(x):
        unpad = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior), strict=True))
        unpadded = j.pad(ct, np.array(0.0, aval_of(ct).dtype), unpad)
        ct_x = slice_(
            unpadded,
            list(np.zeros_like(lo)),
            aval_of(unpadded).shape,
            list(np.add(interior, 1)),
        )
    ct_value = None
    if is_undefined(padding_value):
        ct_value = sub(total(ct), total(ct_x))
    return [ct_x, ct_value]


deflinear(j.concatenate_p, _concatenate_transpose)
deflinear(j.split_p, _split_transpose)
deflinear(j.stack_p, _stack_transpose)
deflinear(j.unstack_p, _unstack_transpose)
deflinear(j.pad_p, _pad_transpose)
