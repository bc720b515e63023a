# ruff: noqa: E501  (one case per line reads best)
"""vmap of the structural primitives against JAX: shape (reshape, squeeze, transpose, rev,
tile, broadcast_in_dim), joining (concatenate, stack, unstack, split, pad), slicing (slice,
dynamic_slice, dynamic_update_slice), cumulative reductions, select_n, clamp and
stop_gradient, through `lax` and the `jnp` functions built on them. Each case compares the
printed batched jaxpr with JAX's, the values with JAX's and with a per-example loop, and
vmap of jit."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.testing import Oracle, check_vmap, sweep

pytestmark = pytest.mark.oracle

f32 = np.float32
i32 = np.int32


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


def ints(*values: int) -> np.ndarray:
    return np.array(values, i32)


class Case(NamedTuple):
    name: str
    program: Any
    args: tuple[Any, ...]
    in_axes: Any = 0
    out_axes: Any = 0


SHAPE = [
    Case("lax.reshape", lambda jnp, lax: lambda x: lax.reshape(x, (8,)), (arr(3, 4, 2),)),
    Case("lax.reshape axis 1", lambda jnp, lax: lambda x: lax.reshape(x, (2, 4)), (arr(4, 3, 2),), 1),
    Case("lax.reshape dimensions", lambda jnp, lax: lambda x: lax.reshape(x, (8,), (1, 0)), (arr(4, 2, 3),), 2),
    Case("jnp.reshape -1", lambda jnp, lax: lambda x: jnp.reshape(x, (2, -1)), (arr(4, 2, 3),), -1),
    Case("jnp.ravel", lambda jnp, lax: lambda x: jnp.ravel(x), (arr(4, 3, 2),), 1),
    Case("reshape method out_axes 1", lambda jnp, lax: lambda x: x.reshape(-1), (arr(3, 2, 2),), 0, 1),
    Case("lax.squeeze", lambda jnp, lax: lambda x: lax.squeeze(x, (1,)), (arr(3, 4, 1, 2),)),
    Case("jnp.squeeze axis 2", lambda jnp, lax: lambda x: jnp.squeeze(x), (arr(1, 4, 3),), 2),
    Case("jnp.expand_dims", lambda jnp, lax: lambda x: jnp.expand_dims(x, 1), (arr(4, 3, 2),), 1),
    Case("lax.expand_dims negative", lambda jnp, lax: lambda x: lax.expand_dims(x, (-1, 0)), (arr(3, 4),), 0, 1),
    Case("lax.transpose", lambda jnp, lax: lambda x: lax.transpose(x, (1, 0)), (arr(3, 4, 2),)),
    Case("jnp.transpose axis 1", lambda jnp, lax: lambda x: jnp.transpose(x, (2, 0, 1)), (arr(4, 3, 2, 5),), 1),
    Case("jnp.moveaxis", lambda jnp, lax: lambda x: jnp.moveaxis(x, 0, -1), (arr(4, 2, 3),), 2),
    Case("jnp.swapaxes", lambda jnp, lax: lambda x: jnp.swapaxes(x, 0, 1), (arr(4, 2, 3),), -1),
    Case(".T", lambda jnp, lax: lambda x: x.T, (arr(4, 3, 2),), 1),
    Case("lax.rev", lambda jnp, lax: lambda x: lax.rev(x, (0,)), (arr(4, 3, 2),), 1),
    Case("jnp.flip axis", lambda jnp, lax: lambda x: jnp.flip(x, 1), (arr(3, 4, 2),)),
    Case("jnp.flip all", lambda jnp, lax: lambda x: jnp.flip(x), (arr(4, 3, 2),), 1),
    Case("jnp.fliplr", lambda jnp, lax: lambda x: jnp.fliplr(x), (arr(4, 2, 3),), 2),
    Case("lax.tile", lambda jnp, lax: lambda x: lax.tile(x, (2, 3)), (arr(2, 3, 2),), 1),
    Case("jnp.tile", lambda jnp, lax: lambda x: jnp.tile(x, (2, 1)), (arr(3, 2, 2),)),
    Case("jnp.tile more reps", lambda jnp, lax: lambda x: jnp.tile(x, (2, 1, 2)), (arr(4, 3),), 1),
    Case("jnp.repeat", lambda jnp, lax: lambda x: jnp.repeat(x, 2, axis=0), (arr(4, 3),), 1),
    Case("lax.broadcast_in_dim", lambda jnp, lax: lambda x: lax.broadcast_in_dim(x, (2, 4, 5), (1, 2)), (arr(4, 3, 5),), 1),
    Case("lax.broadcast", lambda jnp, lax: lambda x: lax.broadcast(x, (2,)), (arr(3, 4),)),
    Case("jnp.broadcast_to", lambda jnp, lax: lambda x: jnp.broadcast_to(x, (2, 4)), (arr(4, 3),), 1, 2),
    Case("broadcast_to of a scalar", lambda jnp, lax: lambda x: jnp.broadcast_to(x, (2, 3)), (arr(3),)),
    Case("squeeze to a scalar", lambda jnp, lax: lambda x: lax.squeeze(x, (0,)), (arr(1, 3),), 1),
    Case("reshape to a scalar", lambda jnp, lax: lambda x: x.reshape(()), (arr(1, 3, 1),), 1, -1),
    Case("broadcast_in_dim of a scalar", lambda jnp, lax: lambda x: lax.broadcast_in_dim(x, (2, 3), ()), (arr(3),), 0, 1),
    Case("x[None]", lambda jnp, lax: lambda x: x[None], (arr(4, 3),), 1),
    Case("jnp.atleast_2d", lambda jnp, lax: lambda x: jnp.atleast_2d(x), (arr(4, 3),), -1),
    Case("jnp.tile negative axis", lambda jnp, lax: lambda x: jnp.tile(x, 2), (arr(2, 3),), -1),
    Case("lax.collapse", lambda jnp, lax: lambda x: lax.collapse(x, 0, 2), (arr(2, 3, 3, 2),), 1),
]  # fmt: skip

JOINING = [
    Case("lax.concatenate", lambda jnp, lax: lambda x, y: lax.concatenate([x, y], 0), (arr(3, 2, 2), arr(3, 4, 2))),
    Case("concatenate unmapped", lambda jnp, lax: lambda x, y: lax.concatenate([x, y], 1), (arr(3, 2, 2), arr(2, 4)), (0, None)),
    Case("concatenate axes 1 and 0", lambda jnp, lax: lambda x, y: lax.concatenate([x, y], 0), (arr(2, 3), arr(3, 4)), (1, 0)),
    Case("jnp.concatenate three", lambda jnp, lax: lambda x, y: jnp.concatenate([x, y, x], axis=1), (arr(2, 2), arr(2, 3, 4)), (None, 1)),
    Case("jnp.stack", lambda jnp, lax: lambda x, y: jnp.stack([x, y]), (arr(3, 4), arr(3, 4))),
    Case("stack after the mapped axis", lambda jnp, lax: lambda x, y: jnp.stack([x, y], axis=1), (arr(4, 3, 2), arr(4, 3, 2)), (1, 1)),
    Case("stack before the mapped axis", lambda jnp, lax: lambda x, y: jnp.stack([x, y], axis=0), (arr(4, 3, 2), arr(4, 3, 2)), (1, 1)),
    Case("stack unmapped", lambda jnp, lax: lambda x, y: jnp.stack([x, y], axis=-1), (arr(3, 4), arr(4)), (0, None)),
    Case("lax.stack mixed axes", lambda jnp, lax: lambda x, y: lax.stack([x, y], 1), (arr(4, 3), arr(3, 4)), (1, 0)),
    Case("jnp.hstack", lambda jnp, lax: lambda x, y: jnp.hstack([x, y]), (arr(2, 3), arr(3, 4)), (1, 0)),
    Case("jnp.vstack", lambda jnp, lax: lambda x, y: jnp.vstack([x, y]), (arr(3, 2, 4), arr(4)), (0, None)),
    Case("jnp.dstack", lambda jnp, lax: lambda x, y: jnp.dstack([x, y]), (arr(3, 2, 4), arr(3, 2, 4))),
    Case("lax.unstack", lambda jnp, lax: lambda x: lax.unstack(x, 0), (arr(3, 4, 2),)),
    Case("unstack before the mapped axis", lambda jnp, lax: lambda x: lax.unstack(x, 0), (arr(2, 3, 4),), 1),
    Case("unstack out_axes", lambda jnp, lax: lambda x: lax.unstack(x, 1), (arr(2, 4, 3),), 2, 1),
    Case("lax.split", lambda jnp, lax: lambda x: lax.split(x, (1, 3), axis=0), (arr(3, 4, 2),)),
    Case("lax.split before the mapped axis", lambda jnp, lax: lambda x: lax.split(x, (2, 2), axis=0), (arr(4, 3),), 1),
    Case("jnp.split", lambda jnp, lax: lambda x: jnp.split(x, 2, axis=1), (arr(3, 2, 4),)),
    Case("jnp.array_split", lambda jnp, lax: lambda x: jnp.array_split(x, 3), (arr(5, 3),), 1),
    Case("concatenate three mixed", lambda jnp, lax: lambda x, y, z: lax.concatenate([x, y, z], 0), (arr(2), arr(3, 3), arr(1)), (None, 0, None), 1),
    Case("stack three mixed", lambda jnp, lax: lambda x, y, z: jnp.stack([x, y, z], 1), (arr(2, 3), arr(3, 2), arr(2)), (1, 0, None)),
    Case("split out_axes 1", lambda jnp, lax: lambda x: lax.split(x, (1, 1, 2), axis=1), (arr(3, 2, 4),), 0, 1),
    Case("jnp.roll", lambda jnp, lax: lambda x: jnp.roll(x, 1, axis=0), (arr(4, 3),), 1),
    Case("concatenate a constant", lambda jnp, lax: lambda x: lax.concatenate([x, np.ones((2, 2), f32)], 0), (arr(2, 3, 2),), 1),
    Case("lax.pad", lambda jnp, lax: lambda x: lax.pad(x, f32(0), [(1, 2, 0)]), (arr(3, 4),)),
    Case("pad interior negative", lambda jnp, lax: lambda x: lax.pad(x, f32(-1), [(-1, 1, 1), (0, 2, 0)]), (arr(4, 3, 2),), 1),
    Case("pad mapped value", lambda jnp, lax: lambda x, v: lax.pad(x, v, [(1, 2, 0)]), (arr(3, 4), arr(3))),
    Case("pad mapped value only", lambda jnp, lax: lambda x, v: lax.pad(x, v, [(1, 0, 1), (0, 1, 0)]), (arr(2, 2), arr(3)), (None, 0)),
    Case("pad mapped value axis 1", lambda jnp, lax: lambda x, v: lax.pad(x, v, [(2, 0, 0), (0, 1, 0)]), (arr(2, 3, 2), arr(3)), (1, 0)),
]  # fmt: skip

SLICING = [
    Case("pad negative axes", lambda jnp, lax: lambda x: lax.pad(x, f32(2), [(0, 1, 2)]), (arr(3, 3),), -1, -1),
    Case("lax.slice", lambda jnp, lax: lambda x: lax.slice(x, (1,), (3,)), (arr(3, 4),)),
    Case("lax.slice strides", lambda jnp, lax: lambda x: lax.slice(x, (0, 1), (4, 3), (2, 1)), (arr(4, 3, 3),), 1),
    Case("x[1:3]", lambda jnp, lax: lambda x: x[1:3], (arr(4, 3, 2),), 1),
    Case("x[::2]", lambda jnp, lax: lambda x: x[::2], (arr(3, 5),)),
    Case("x[1]", lambda jnp, lax: lambda x: x[1], (arr(4, 3, 2),), 1),
    Case("x[:, -1]", lambda jnp, lax: lambda x: x[:, -1], (arr(3, 4, 2),)),
    Case("x[1:, ::-1]", lambda jnp, lax: lambda x: x[1:, ::-1], (arr(4, 3, 3),), 2),
    Case("x[..., 1:]", lambda jnp, lax: lambda x: x[..., 1:], (arr(3, 2, 4),), 0, 2),
    Case("slice out_axes 1", lambda jnp, lax: lambda x: x[1:4], (arr(3, 5),), 0, 1),
    Case("x[i]", lambda jnp, lax: lambda x, i: x[i], (arr(3, 4, 2), ints(0, 3, -1))),
    Case("x[i] unmapped operand", lambda jnp, lax: lambda x, i: jnp.asarray(x)[i, 1:], (arr(4, 3), ints(2, 0, 1)), (None, 0)),
    Case("lax.slice_in_dim", lambda jnp, lax: lambda x: lax.slice_in_dim(x, 1, None, 2, axis=1), (arr(3, 2, 5),)),
    Case("lax.index_in_dim", lambda jnp, lax: lambda x: lax.index_in_dim(x, -1, axis=0, keepdims=False), (arr(4, 3),), 1),
    Case("dynamic_slice mapped index", lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (arr(3, 5, 4), ints(1, 3, 4))),
    Case("dynamic_slice unmapped index", lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (arr(5, 3, 4), i32(2)), (1, None)),
    Case("dynamic_slice unmapped operand", lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (0, i), (2, 2)), (arr(5, 4), ints(0, -1, 2)), (None, 0)),
    Case("dynamic_slice static index", lambda jnp, lax: lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), (arr(3, 5, 4),), -1),
    Case("dynamic_slice operand axis 1", lambda jnp, lax: lambda x, i: lax.dynamic_slice(x, (i,), (2,)), (arr(5, 3), ints(4, 0, 2)), (1, 0)),
    Case("lax.dynamic_slice_in_dim", lambda jnp, lax: lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1), (arr(3, 2, 5), ints(0, 1, 3))),
    Case("lax.dynamic_index_in_dim", lambda jnp, lax: lambda x, i: lax.dynamic_index_in_dim(x, i, keepdims=False), (arr(3, 4, 2), ints(0, 3, 1))),
    Case("dynamic_update_slice", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)), (arr(3, 5, 4), arr(3, 2, 2), ints(1, 4, 0))),
    Case("dynamic_update_slice update only", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)), (arr(5, 4), arr(3, 2, 2), i32(1)), (None, 0, None)),
    Case("dynamic_update_slice operand axis 1", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), (arr(5, 3), arr(2), ints(0, 2, 3)), (1, None, 0)),
    Case("dynamic_update_slice unmapped update", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), (arr(4, 3, 2), arr(2, 2), ints(2, 0, 1)), (1, None, 0)),
    Case("dynamic_update_slice static index", lambda jnp, lax: lambda x, u: lax.dynamic_update_slice(x, u, (1, 0)), (arr(3, 5, 4), arr(2, 4)), (0, None)),
    Case("dynamic_update_slice index only", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), (arr(5), arr(2), ints(0, 2, 3)), (None, None, 0)),
    Case("dynamic_update_slice update axis 1", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice(x, u, (0, i)), (arr(3, 4, 5), arr(2, 3, 2), ints(1, 3, 4)), (0, 1, 0)),
    Case("lax.dynamic_update_slice_in_dim", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 1), (arr(2, 3, 5), arr(2, 2), i32(-2)), (1, None, None), 1),
    Case("dynamic_slice_in_dim static negative", lambda jnp, lax: lambda x: lax.dynamic_slice_in_dim(x, -2, 2), (arr(3, 5),)),
    Case("dynamic_slice of a scalar", lambda jnp, lax: lambda x: lax.dynamic_slice(x, (), ()), (arr(3),)),
    Case("dynamic_update_slice of a scalar", lambda jnp, lax: lambda x, u: lax.dynamic_update_slice(x, u, ()), (arr(3), f32(2)), (0, None)),
    Case("lax.dynamic_update_index_in_dim", lambda jnp, lax: lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 0), (arr(3, 4, 2), arr(3, 2), ints(3, 0, 1))),
]  # fmt: skip

CUMULATIVE = [
    Case("lax.cumsum after the mapped axis", lambda jnp, lax: lambda x: lax.cumsum(x, axis=0), (arr(3, 4),)),
    Case("lax.cumsum before the mapped axis", lambda jnp, lax: lambda x: lax.cumsum(x, axis=1), (arr(4, 2, 3),), 2),
    Case("lax.cumprod reverse", lambda jnp, lax: lambda x: lax.cumprod(x, axis=0, reverse=True), (arr(4, 3, 2),), 1),
    Case("lax.cummax", lambda jnp, lax: lambda x: lax.cummax(x, axis=1), (arr(3, 2, 4),)),
    Case("lax.cummin", lambda jnp, lax: lambda x: lax.cummin(x, axis=1), (arr(2, 3, 4),), 1),
    Case("lax.cumlogsumexp", lambda jnp, lax: lambda x: lax.cumlogsumexp(x, axis=0, reverse=True), (arr(4, 3),), -1),
    Case("jnp.cumsum flat", lambda jnp, lax: lambda x: jnp.cumsum(x), (arr(2, 3, 2),), 1),
    Case("jnp.cumsum axis", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=1), (arr(3, 2, 4),), 0, 1),
    Case("jnp.cumsum negative axis", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=-1), (arr(2, 3, 4),), 1),
    Case("cummax reverse", lambda jnp, lax: lambda x: lax.cummax(x, axis=1, reverse=True), (arr(2, 3, 4),), -2, 1),
    Case("jnp.cumprod", lambda jnp, lax: lambda x: jnp.cumprod(x, axis=0), (arr(4, 3),), 1),
    Case("cumsum of ints", lambda jnp, lax: lambda x: lax.cumsum(x, axis=0), (np.arange(12, dtype=i32).reshape(4, 3),), 1),
]  # fmt: skip

SELECTION = [
    Case("jnp.where", lambda jnp, lax: lambda x, y: jnp.where(x > 0, x, y), (arr(3, 4), arr(3, 4, lo=0.5))),
    Case("jnp.where unmapped", lambda jnp, lax: lambda x, y: jnp.where(x > 0, x, y), (arr(3, 4), arr(4)), (0, None)),
    Case("jnp.where axes 1 and 0", lambda jnp, lax: lambda x, y: jnp.where(x > 0, x, y), (arr(4, 3), arr(3, 4)), (1, 0)),
    Case("select mapped scalar predicate", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.array([True, False, True]), arr(3, 4), arr(3, 4, lo=1.0))),
    Case("select mapped scalar predicate axis 1", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.array([True, False, True]), arr(4, 3), arr(4, 3, lo=1.0)), (0, 1, 1)),
    Case("select unmapped scalar predicate", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.bool_(False), arr(3, 4), arr(4, 3)), (None, 0, 1)),
    Case("select unmapped scalar predicate same axis", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.bool_(True), arr(4, 3), arr(4, 3)), (None, 1, 1)),
    Case("select unmapped predicate array", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.array([True, False]), arr(3, 2), arr(2, 3)), (None, 0, 1)),
    Case("select mapped predicate, scalar cases", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.array([True, False, True]), f32(1), f32(2)), (0, None, None)),
    Case("select unmapped scalar predicate, moved case", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.bool_(True), arr(3, 3), arr(3, 3, lo=1.0)), (None, 0, 1)),
    Case("select_n unmapped scalar which", lambda jnp, lax: lambda w, a, b, c: lax.select_n(w, a, b, c), (i32(2), arr(3, 2), arr(3, 2), arr(2, 3)), (None, 0, 0, 1)),
    Case("where mapped scalar condition", lambda jnp, lax: lambda c, x, y: jnp.where(c, x, y), (np.array([True, False, True]), arr(3, 4), arr(4)), (0, 0, None)),
    Case("select_n int which", lambda jnp, lax: lambda w, a, b, c: lax.select_n(w, a, b, c), (ints(0, 1, 2), arr(3, 2), arr(2, 3), arr(2)), (0, 0, 1, None)),
    Case("select mapped predicate only", lambda jnp, lax: lambda p, x, y: lax.select(p, x, y), (np.array([[True, False], [False, True], [True, True]]), arr(2), arr(2, lo=1.0)), (0, None, None)),
    Case("lax.clamp scalar bounds", lambda jnp, lax: lambda x: lax.clamp(f32(-0.5), x, f32(0.5)), (arr(3, 4),), 1),
    Case("clamp mapped scalar bounds", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, lo=-0.5, hi=-0.1), arr(3, 4), arr(3, lo=0.1, hi=0.5))),
    Case("clamp mapped array bounds", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, 4, hi=-0.2), arr(4, 3), arr(4, lo=0.3)), (0, 1, None)),
    Case("clamp mapped scalar bound, operand axis 1", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, hi=-0.1), arr(4, 3), f32(0.4)), (0, 1, None)),
    Case("clamp same shapes", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, 4, hi=-0.2), arr(3, 4), arr(3, 4, lo=0.3))),
    Case("clamp scalar operand", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, hi=0.1), f32(0.0), f32(0.5)), (0, None, None)),
    Case("clamp unmapped operand", lambda jnp, lax: lambda lo, x, hi: lax.clamp(lo, x, hi), (arr(3, hi=0.0), arr(4), f32(0.5)), (0, None, None)),
    Case("jnp.clip", lambda jnp, lax: lambda x: jnp.clip(x, -0.5, 0.5), (arr(4, 3),), 1),
    Case("lax.stop_gradient", lambda jnp, lax: lambda x: lax.stop_gradient(x) * 2.0, (arr(4, 3),), 1),
]  # fmt: skip

CASES = SHAPE + JOINING + SLICING + CUMULATIVE + SELECTION

NOT_PRINTED: dict[str, str] = {}
"""Cases whose printed jaxpr cannot match JAX's for a reason outside these rules, and why."""


@pytest.mark.parametrize("case", sweep(CASES, [c.name for c in CASES], unpack=False))
def test_vmap_as_jax(oracle: Oracle, case: Case) -> None:
    check_vmap(
        oracle,
        case.program,
        *case.args,
        in_axes=case.in_axes,
        out_axes=case.out_axes,
        printed=case.name not in NOT_PRINTED,
    )


def test_corpus_size() -> None:
    assert len(CASES) >= 60
    assert len(NOT_PRINTED) <= len(CASES) // 10


JITTED = ["jnp.moveaxis", "concatenate unmapped", "pad mapped value", "dynamic_slice mapped index", "dynamic_update_slice", "jnp.cumsum axis", "clamp mapped array bounds"]  # fmt: skip


@pytest.mark.parametrize("name", JITTED)
def test_jit_of_vmap(oracle: Oracle, name: str) -> None:
    """`jit(vmap(f))` prints as JAX's (one jit equation around the batched body) and
    computes JAX's values."""
    case = next(c for c in CASES if c.name == name)
    ours_f = case.program(lc.numpy, lc.lax)
    theirs_f = case.program(oracle.jnp, oracle.lax)
    kw = {"in_axes": case.in_axes, "out_axes": case.out_axes}
    ours = lc.make_jaxpr(lc.jit(lc.vmap(ours_f, **kw)))(*case.args)
    theirs = oracle.jax.make_jaxpr(oracle.jax.jit(oracle.jax.vmap(theirs_f, **kw)))(*case.args)
    assert str(ours) == str(theirs)
    got = lc.jit(lc.vmap(ours_f, **kw))(*case.args)
    want = oracle.jit(oracle.jax.vmap(theirs_f, **kw))(*case.args)
    for g, w in zip(
        lc.tree_util.tree_leaves(got), oracle.jax.tree_util.tree_leaves(want), strict=True
    ):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_nested_vmap(oracle: Oracle) -> None:
    """Two mapped axes through a reshape, a dynamic slice and a pad."""

    def program(jnp: Any, lax: Any) -> Any:
        def f(x: Any, i: Any) -> Any:
            y = lax.dynamic_slice_in_dim(x.reshape(-1), i, 3)
            return lax.pad(y, f32(0), [(1, 1, 0)])

        return f

    x, i = arr(3, 2, 2, 2), ints(0, 2)
    ours_f = lc.vmap(lc.vmap(program(lc.numpy, lc.lax), in_axes=(1, None)), in_axes=(0, None))
    theirs_f = oracle.jax.vmap(
        oracle.jax.vmap(program(oracle.jnp, oracle.lax), in_axes=(1, None)), in_axes=(0, None)
    )
    assert str(lc.make_jaxpr(ours_f)(x, i[0])) == str(oracle.jax.make_jaxpr(theirs_f)(x, i[0]))
    np.testing.assert_allclose(np.asarray(ours_f(x, i[0])), np.asarray(theirs_f(x, i[0])))


def _under_ad() -> Any:
    """The program of the autodiff tests: several of these rules under jvp and grad."""
    return lambda jnp, lax: (
        lambda x: (
            lax.stop_gradient(x) * lax.cumsum(x[::-1], 0)
            + lax.pad(x, f32(0), [(1, -1, 0)])
            + jnp.where(x > 0, jnp.flip(x), x.reshape(2, 2).T.reshape(4))
        )
    )


@pytest.mark.parametrize("mode", ["jvp", "grad"])
def test_vmap_under_autodiff(oracle: Oracle, mode: str) -> None:
    """The rules compose with jvp and grad (stop_gradient stops the tangent, as in JAX)."""
    x = arr(4, 3)
    jax, program = oracle.jax, _under_ad()
    ours_f = lc.vmap(program(lc.numpy, lc.lax), in_axes=1)
    theirs_f = jax.vmap(program(oracle.jnp, oracle.lax), in_axes=1)
    if mode == "jvp":
        ours = lc.make_jaxpr(lambda x: lc.jvp(ours_f, (x,), (x,)))(x)
        theirs = jax.make_jaxpr(lambda x: jax.jvp(theirs_f, (x,), (x,)))(x)
        got, want = lc.jvp(ours_f, (x,), (x,)), jax.jvp(theirs_f, (x,), (x,))
    else:
        ours = lc.make_jaxpr(lc.grad(lambda x: lc.numpy.sum(ours_f(x))))(x)
        theirs = jax.make_jaxpr(jax.grad(lambda x: oracle.jnp.sum(theirs_f(x))))(x)
        got = lc.grad(lambda x: lc.numpy.sum(ours_f(x)))(x)
        want = jax.grad(lambda x: oracle.jnp.sum(theirs_f(x)))(x)
    assert str(ours) == str(theirs)
    for g, w in zip(lc.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)
