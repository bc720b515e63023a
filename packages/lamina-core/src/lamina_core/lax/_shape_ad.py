"""Differentiation rules of the shape primitives (`reshape`, `squeeze`, `transpose`, `rev`,
`tile`, `iota`), as JAX's: all linear, transposed back to the operand's shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina_core.interpreters import deflinear, is_undefined, not_differentiable
from lamina_core.lax import _shape as sh
from lamina_core.lax._reductions import reduce_sum


def _reshape_transpose(
    ct: Any, x: Any, *, new_sizes: Any, dimensions: Any, sharding: Any
) -> Sequence[Any]:
    shape = x.aval.shape
    if dimensions is None:
        return [sh.reshape(ct, shape, out_sharding=x.aval.sharding)]
    permuted = tuple(shape[d] for d in dimensions)
    out = sh.reshape(ct, permuted, out_sharding=x.aval.sharding)
    return [sh.transpose(out, tuple(np.argsort(dimensions)))]


def _squeeze_transpose(ct: Any, x: Any, *, dimensions: Any) -> Sequence[Any]:
    return [sh.expand_dims(ct, dimensions)]


def _transpose_transpose(ct: Any, x: Any, *, permutation: Any) -> Sequence[Any]:
    return [sh.transpose(ct, tuple(np.argsort(permutation)))]


def _rev_transpose(ct: Any, x: Any, *, dimensions: Any) -> Sequence[Any]:
    return [sh.rev(ct, dimensions)]


def _tile_transpose(ct: Any, x: Any, *, reps: Any) -> Sequence[Any]:
    if not is_undefined(x):
        return [None]
    shape = x.aval.shape
    interleaved = tuple(k for pair in zip(reps, shape, strict=True) for k in pair)
    return [reduce_sum(sh.reshape(ct, interleaved), tuple(2 * i for i in range(len(shape))))]


deflinear(sh.reshape_p, _reshape_transpose)
deflinear(sh.squeeze_p, _squeeze_transpose)
deflinear(sh.transpose_p, _transpose_transpose)
deflinear(sh.rev_p, _rev_transpose)
deflinear(sh.tile_p, _tile_transpose)
not_differentiable(sh.iota_p)  # no operands: nothing to differentiate
