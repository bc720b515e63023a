"""Differentiation of the shape, joining, reduction, cumulative and dot primitives against
JAX: printed jvp, grad and grad(jit) jaxprs, values, and finite differences."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from lamina_core.testing import Oracle
from lamina_core.testing_ad import check_ad

pytestmark = pytest.mark.oracle

f32 = np.float32


def arr(*shape: int, lo: float = 0.2, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


A = arr(2, 3)
B = arr(3, 4, lo=-0.5, hi=0.7)
Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("reshape", lambda jnp, lax: lambda x: jnp.reshape(x, (3, 2)) * 2.0, (A,)),
    ("reshape with dimensions", lambda jnp, lax: lambda x: lax.reshape(x, (6,), (1, 0)), (A,)),
    ("transpose", lambda jnp, lax: lambda x: jnp.sin(x.T), (A,)),
    ("transpose 3d", lambda jnp, lax: lambda x: lax.transpose(x, (2, 0, 1)) * 3.0, (arr(2, 3, 4),)),
    ("squeeze", lambda jnp, lax: lambda x: jnp.squeeze(x, 0) * 2.0, (arr(1, 3),)),
    ("expand_dims", lambda jnp, lax: lambda x: jnp.expand_dims(x, 1) * 2.0, (A,)),
    ("flip", lambda jnp, lax: lambda x: jnp.flip(x, 1) * x, (A,)),
    ("tile", lambda jnp, lax: lambda x: jnp.tile(x, (2, 1)) * 2.0, (A,)),
    ("concatenate", lambda jnp, lax: lambda x, y: jnp.concatenate([x, y * 2.0], 0), (A, arr(1, 3))),
    ("stack", lambda jnp, lax: lambda x, y: jnp.stack([x, y]) * 2.0, (A, A)),
    ("split", lambda jnp, lax: lambda x: jnp.split(x, [1], axis=1)[1] * 2.0, (A,)),
    ("unstack", lambda jnp, lax: lambda x: lax.unstack(x, 0)[1] * 2.0, (A,)),
    ("pad", lambda jnp, lax: lambda x: lax.pad(x, 0.0, ((1, 0, 0), (0, 2, 0))) * 2.0, (A,)),
    (
        "pad traced value",
        lambda jnp, lax: lambda x, v: lax.pad(x, v, ((1, 0, 1), (0, 2, 0))),
        (A, f32(0.5)),
    ),
    ("sum axis", lambda jnp, lax: lambda x: jnp.sum(x * x, axis=1), (A,)),
    ("mean keepdims", lambda jnp, lax: lambda x: jnp.mean(x, axis=0, keepdims=True) * x, (A,)),
    ("var", lambda jnp, lax: lambda x: jnp.var(x, axis=1), (A,)),
    ("max", lambda jnp, lax: lambda x: jnp.max(x, axis=1), (A,)),
    ("min all", lambda jnp, lax: lambda x: jnp.min(x), (A,)),
    ("max ties", lambda jnp, lax: lambda x: jnp.max(x), (np.array([1.0, 3.0, 3.0], f32),)),
    ("prod", lambda jnp, lax: lambda x: jnp.prod(x, axis=1), (A,)),
    ("prod all", lambda jnp, lax: lambda x: jnp.prod(x), (arr(5),)),
    ("argmax", lambda jnp, lax: lambda x: x[0] * jnp.argmax(x).astype(f32), (arr(4),)),
    ("cumsum", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=1) * x, (A,)),
    ("cumsum reverse", lambda jnp, lax: lambda x: lax.cumsum(x, axis=0, reverse=True), (A,)),
    ("cumprod", lambda jnp, lax: lambda x: lax.cumprod(x, axis=1), (A,)),
    ("cumprod reverse", lambda jnp, lax: lambda x: lax.cumprod(x, reverse=True), (arr(5),)),
    ("cummax", lambda jnp, lax: lambda x: lax.cummax(x, axis=0), (B,)),
    ("cummin", lambda jnp, lax: lambda x: lax.cummin(x), (arr(6, lo=0.9, hi=0.1),)),
    ("cumlogsumexp", lambda jnp, lax: lambda x: lax.cumlogsumexp(x, axis=1), (A,)),
    ("associative_scan", lambda jnp, lax: lambda x: lax.associative_scan(lax.mul, x), (arr(7),)),
    ("dot", lambda jnp, lax: jnp.dot, (A, B)),
    ("matmul vector", lambda jnp, lax: lambda x, v: x @ v, (A, arr(3))),
    ("vector dot", lambda jnp, lax: jnp.dot, (arr(3), arr(3, lo=-1.0, hi=1.0))),
    (
        "einsum batch",
        lambda jnp, lax: lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        (arr(2, 2, 3), arr(2, 3, 2)),
    ),
    (
        "dot_general batch",
        lambda jnp, lax: lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
        (arr(2, 2, 3), arr(2, 3, 4)),
    ),
    ("outer", lambda jnp, lax: jnp.outer, (arr(3), arr(2))),
    ("tensordot", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=([1], [0])), (A, B)),
    (
        "dot preferred f32 from bf16",
        lambda jnp, lax: (
            lambda x, y: lax.dot(
                x.astype(jnp.bfloat16), y.astype(jnp.bfloat16), preferred_element_type=jnp.float32
            )
        ),
        (A, B),
    ),
    (
        "mlp",
        lambda jnp, lax: lambda x, w1, b1, w2: jnp.sum(jnp.tanh(x @ w1 + b1) @ w2),
        (A, B, arr(4), arr(4, 2)),
    ),
]


@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_rule_matches_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    order = {"max ties": 1, "argmax": 1, "dot preferred f32 from bf16": 0}
    check_ad(oracle, program, *args, order=order.get(name, 2))
