"""Differentiation of the shape, joining, reduction, cumulative and dot primitives against
JAX: printed jvp, grad and grad(jit) jaxprs, values, and finite differences.

Each program goes through the lax function and the `jax.numpy` functions built on it. Cases
in half precision (`float16`, `bfloat16`) check JAX's text and values only: central
differences with a step near those types' resolution say nothing about the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle, check_ad, sweep

pytestmark = pytest.mark.oracle

f32 = np.float32
f16 = np.float16
bf16 = ml_dtypes.bfloat16


def arr(*shape: int, lo: float = 0.2, hi: float = 0.9, dtype: Any = f32) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(dtype)


A = arr(2, 3)
B = arr(3, 4, lo=-0.5, hi=0.7)
ZEROS = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 0.5], [0.5, 2.0, 3.0]], f32)
Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]
Case = tuple[str, Program, tuple[Any, ...]]

SHAPE: list[Case] = [
    ("reshape", lambda jnp, lax: lambda x: jnp.reshape(x, (3, 2)) * 2.0, (A,)),
    ("reshape -1", lambda jnp, lax: lambda x: jnp.reshape(x, (-1,)) ** 2, (A,)),
    ("reshape with dimensions", lambda jnp, lax: lambda x: lax.reshape(x, (6,), (1, 0)), (A,)),
    ("ravel", lambda jnp, lax: lambda x: jnp.ravel(x) * 2.0, (arr(2, 2, 3),)),
    ("transpose", lambda jnp, lax: lambda x: jnp.sin(x.T), (A,)),
    ("transpose 3d", lambda jnp, lax: lambda x: lax.transpose(x, (2, 0, 1)) * 3.0, (arr(2, 3, 4),)),
    ("jnp transpose", lambda jnp, lax: lambda x: jnp.transpose(x) * 2.0, (arr(2, 3, 4),)),
    ("moveaxis", lambda jnp, lax: lambda x: jnp.moveaxis(x, 0, -1) * 2.0, (arr(2, 3, 4),)),
    ("swapaxes", lambda jnp, lax: lambda x: jnp.sin(jnp.swapaxes(x, 0, 2)), (arr(2, 3, 4),)),
    ("squeeze", lambda jnp, lax: lambda x: jnp.squeeze(x, 0) * 2.0, (arr(1, 3),)),
    ("lax squeeze", lambda jnp, lax: lambda x: lax.squeeze(x, (0, 2)) * 2.0, (arr(1, 3, 1),)),
    ("expand_dims", lambda jnp, lax: lambda x: jnp.expand_dims(x, 1) * 2.0, (A,)),
    ("lax expand_dims", lambda jnp, lax: lambda x: lax.expand_dims(x, (0, 2)) * 2.0, (A,)),
    ("flip", lambda jnp, lax: lambda x: jnp.flip(x, 1) * x, (A,)),
    ("lax rev", lambda jnp, lax: lambda x: lax.rev(x, (0, 1)) * x, (A,)),
    ("tile", lambda jnp, lax: lambda x: jnp.tile(x, (2, 1)) * 2.0, (A,)),
    ("lax tile", lambda jnp, lax: lambda x: lax.tile(x, (1, 3)) * 2.0, (A,)),
    ("iota", lambda jnp, lax: lambda x: x * lax.iota(np.float32, 3), (arr(3),)),
    ("broadcast_to", lambda jnp, lax: lambda x: jnp.broadcast_to(x, (2, 3)) * 2.0, (arr(3),)),
    ("broadcast_to unit", lambda jnp, lax: lambda x: jnp.broadcast_to(x, (4, 3)), (arr(1, 3),)),
    ("lax broadcast", lambda jnp, lax: lambda x: lax.broadcast(x, (2,)) * 2.0, (A,)),
    (
        "broadcast_in_dim unit dim",
        lambda jnp, lax: lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (0, 2)),
        (arr(2, 1),),
    ),
    ("astype int", lambda jnp, lax: lambda x: x * x.astype(jnp.int32), (arr(3, lo=0.5, hi=3.3),)),
    (
        "convert_element_type same dtype",
        lambda jnp, lax: lambda x: x * lax.convert_element_type(x, jnp.float32),
        (arr(3),),
    ),
]

JOINING: list[Case] = [
    ("concatenate", lambda jnp, lax: lambda x, y: jnp.concatenate([x, y * 2.0], 0), (A, arr(1, 3))),
    (
        "concatenate axis 1",
        lambda jnp, lax: lambda x, y: jnp.concatenate([x, y], axis=1),
        (A, arr(2, 1)),
    ),
    (
        "lax concatenate with a constant",
        lambda jnp, lax: lambda x, y: lax.concatenate([x, jnp.ones((1, 3), jnp.float32), y], 0),
        (A, arr(1, 3)),
    ),
    ("hstack", lambda jnp, lax: lambda x, y: jnp.hstack([x, y]) * 2.0, (arr(3), arr(2))),
    ("vstack", lambda jnp, lax: lambda x, y: jnp.vstack([x, y]) * 2.0, (A, arr(3))),
    ("stack", lambda jnp, lax: lambda x, y: jnp.stack([x, y]) * 2.0, (A, A)),
    ("stack axis 1", lambda jnp, lax: lambda x, y: jnp.stack([x, y], axis=1) * 2.0, (A, A)),
    ("lax stack", lambda jnp, lax: lambda x, y: lax.stack([x, y], 2) * 2.0, (A, A)),
    ("split", lambda jnp, lax: lambda x: jnp.split(x, [1], axis=1)[1] * 2.0, (A,)),
    ("split one of 3", lambda jnp, lax: lambda x: jnp.split(x, 3, axis=0)[2] * 2.0, (arr(6, 2),)),
    (
        "split all used",
        lambda jnp, lax: lambda x: sum(p.sum() for p in jnp.split(x, [1, 3], axis=1)),
        (arr(2, 4),),
    ),
    ("array_split", lambda jnp, lax: lambda x: jnp.array_split(x, 3)[0] * 2.0, (arr(7),)),
    ("lax split", lambda jnp, lax: lambda x: lax.split(x, (1, 2), axis=1)[1] * 3.0, (A,)),
    ("unstack", lambda jnp, lax: lambda x: lax.unstack(x, 0)[1] * 2.0, (A,)),
    (
        "unstack two used",
        lambda jnp, lax: lambda x: lax.unstack(x, 1)[0] * lax.unstack(x, 1)[2],
        (A,),
    ),
    ("pad", lambda jnp, lax: lambda x: lax.pad(x, 0.0, ((1, 0, 0), (0, 2, 0))) * 2.0, (A,)),
    (
        "pad negative and interior",
        lambda jnp, lax: lambda x: lax.pad(x, 1.0, ((-1, 2, 1), (1, -1, 0))) * 2.0,
        (arr(3, 4),),
    ),
    (
        "pad traced value",
        lambda jnp, lax: lambda x, v: lax.pad(x, v, ((1, 0, 1), (0, 2, 0))),
        (A, f32(0.5)),
    ),
]

REDUCTIONS: list[Case] = [
    ("sum axis", lambda jnp, lax: lambda x: jnp.sum(x * x, axis=1), (A,)),
    ("sum keepdims", lambda jnp, lax: lambda x: jnp.sum(x, axis=0, keepdims=True) * x, (A,)),
    ("sum all", lambda jnp, lax: lambda x: jnp.sum(jnp.sin(x)), (arr(2, 3, 2),)),
    ("mean keepdims", lambda jnp, lax: lambda x: jnp.mean(x, axis=0, keepdims=True) * x, (A,)),
    ("mean two axes", lambda jnp, lax: lambda x: jnp.mean(x, axis=(0, 2)), (arr(2, 3, 2),)),
    ("var", lambda jnp, lax: lambda x: jnp.var(x, axis=1), (A,)),
    ("var ddof", lambda jnp, lax: lambda x: jnp.var(x, axis=0, ddof=1), (arr(3, 2),)),
    ("std keepdims", lambda jnp, lax: lambda x: jnp.std(x, axis=1, keepdims=True), (A,)),
    ("std all", lambda jnp, lax: lambda x: jnp.std(x), (A,)),
    ("norm", lambda jnp, lax: lambda x: jnp.sqrt(jnp.sum(x * x)), (A,)),
    ("prod", lambda jnp, lax: lambda x: jnp.prod(x, axis=1), (A,)),
    ("prod all", lambda jnp, lax: lambda x: jnp.prod(x), (arr(5),)),
    (
        "prod keepdims with zeros",
        lambda jnp, lax: lambda x: jnp.prod(x, 0, keepdims=True),
        (ZEROS,),
    ),
    ("prod two axes", lambda jnp, lax: lambda x: jnp.prod(x, axis=(0, 2)), (arr(3, 2, 3, lo=0.5),)),
    (
        "lax reduce_prod odd",
        lambda jnp, lax: lambda x: lax.reduce_prod(x, (1,)),
        (arr(2, 7, lo=0.5),),
    ),
    ("max", lambda jnp, lax: lambda x: jnp.max(x, axis=1), (A,)),
    ("max keepdims", lambda jnp, lax: lambda x: jnp.max(x, axis=0, keepdims=True) * x, (A,)),
    ("min all", lambda jnp, lax: lambda x: jnp.min(x), (A,)),
    ("min keepdims", lambda jnp, lax: lambda x: jnp.min(x, axis=1, keepdims=True) * x, (A,)),
    ("min two axes", lambda jnp, lax: lambda x: jnp.min(x, axis=(0, 2)), (arr(2, 3, 2),)),
    ("argmax", lambda jnp, lax: lambda x: x[0] * jnp.argmax(x).astype(f32), (arr(4),)),
    (
        "argmin",
        lambda jnp, lax: lambda x: jnp.sum(x) * jnp.argmin(x, axis=0).astype(jnp.float32),
        (arr(3, 2, lo=0.9, hi=0.1),),
    ),
    (
        "argmax keepdims",
        lambda jnp, lax: lambda x: x * jnp.argmax(x, axis=1, keepdims=True).astype(f32),
        (A,),
    ),
    ("argmax as float", lambda jnp, lax: lambda x: jnp.argmax(x).astype(jnp.float32), (arr(4),)),
    # Integer outputs: their tangents and cotangents are float0.
    ("argmax output", lambda jnp, lax: lambda x: (jnp.argmax(x, axis=1), x * 2.0), (A,)),
    ("lax argmax only", lambda jnp, lax: lambda x: lax.argmax(x, 0, jnp.int32), (A,)),
    ("any", lambda jnp, lax: lambda x: jnp.where(jnp.any(x > 0.5), x, -x), (A,)),
    ("all", lambda jnp, lax: lambda x: jnp.where(jnp.all(x > 0.5, axis=0), x, -x), (A,)),
    (
        "reduce_xor",
        lambda jnp, lax: lambda x: jnp.where(lax.reduce_xor(x > 0.5, (1,))[:, None], x, 2.0 * x),
        (A,),
    ),
]

TIES: list[Case] = [
    ("max ties", lambda jnp, lax: lambda x: jnp.max(x), (np.array([1.0, 3.0, 3.0], f32),)),
    (
        "reduce_max ties",
        lambda jnp, lax: lambda x: lax.reduce_max(x, (1,)),
        (np.array([[1.0, 2.0, 2.0], [5.0, 5.0, 5.0]], f32),),
    ),
    (
        "reduce_min ties",
        lambda jnp, lax: lambda x: lax.reduce_min(x, (0,)),
        (np.array([[1.0, 2.0], [1.0, 0.5]], f32),),
    ),
    ("cummax ties", lambda jnp, lax: lambda x: lax.cummax(x), (np.array([1, 3, 2, 3, 0.5], f32),)),
]

CUMULATIVE: list[Case] = [
    ("cumsum", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=1) * x, (A,)),
    ("cumsum flattened", lambda jnp, lax: lambda x: jnp.cumsum(x) * 2.0, (A,)),
    ("cumsum reverse", lambda jnp, lax: lambda x: lax.cumsum(x, axis=0, reverse=True), (A,)),
    ("cumprod", lambda jnp, lax: lambda x: lax.cumprod(x, axis=1), (A,)),
    ("jnp cumprod", lambda jnp, lax: lambda x: jnp.cumprod(x, axis=0), (arr(4, 2, lo=0.5),)),
    ("cumprod 8", lambda jnp, lax: lambda x: lax.cumprod(x), (arr(8, lo=0.5, hi=1.5),)),
    ("cumprod reverse", lambda jnp, lax: lambda x: lax.cumprod(x, reverse=True), (arr(5),)),
    ("cummax", lambda jnp, lax: lambda x: lax.cummax(x, axis=0), (B,)),
    (
        "cummax reverse",
        lambda jnp, lax: lambda x: lax.cummax(x, axis=1, reverse=True),
        (arr(2, 5, lo=-1.0, hi=1.0),),
    ),
    ("cummin", lambda jnp, lax: lambda x: lax.cummin(x), (arr(6, lo=0.9, hi=0.1),)),
    (
        "cummin axis 1",
        lambda jnp, lax: lambda x: lax.cummin(x, axis=1),
        (arr(2, 4, lo=0.9, hi=0.1),),
    ),
    ("cumlogsumexp", lambda jnp, lax: lambda x: lax.cumlogsumexp(x, axis=1), (A,)),
    (
        "cumlogsumexp reverse",
        lambda jnp, lax: lambda x: lax.cumlogsumexp(x, axis=0, reverse=True),
        (arr(5, 2),),
    ),
    ("associative_scan", lambda jnp, lax: lambda x: lax.associative_scan(lax.mul, x), (arr(7),)),
]

DOT: list[Case] = [
    ("dot", lambda jnp, lax: jnp.dot, (A, B)),
    (
        "dot constant rhs",
        lambda jnp, lax: lambda x: jnp.dot(x, jnp.ones((3, 2), jnp.float32)),
        (A,),
    ),
    ("matmul vector", lambda jnp, lax: lambda x, v: x @ v, (A, arr(3))),
    ("vector matmul", lambda jnp, lax: lambda v, y: v @ y, (arr(3), B)),
    ("vector dot", lambda jnp, lax: jnp.dot, (arr(3), arr(3, lo=-1.0, hi=1.0))),
    ("matmul broadcast batch", lambda jnp, lax: jnp.matmul, (arr(2, 3, 4), arr(4, 2))),
    ("matmul into batch", lambda jnp, lax: lambda x, y: x @ y, (arr(3, 4), arr(2, 4, 2))),
    ("matmul vector batch", lambda jnp, lax: jnp.matmul, (arr(3), arr(2, 3, 2))),
    (
        "einsum batch",
        lambda jnp, lax: lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        (arr(2, 2, 3), arr(2, 3, 2)),
    ),
    (
        "einsum batch transposed rhs",
        lambda jnp, lax: lambda x, y: jnp.einsum("bij,bkj->bik", x, y),
        (arr(2, 2, 3), arr(2, 4, 3)),
    ),
    ("einsum transposed out", lambda jnp, lax: lambda x, y: jnp.einsum("ij,jk->ki", x, y), (A, B)),
    (
        "einsum inner",
        lambda jnp, lax: lambda x, y: jnp.einsum("i,i->", x, y),
        (arr(3), arr(3, lo=-1.0, hi=1.0)),
    ),
    ("outer", lambda jnp, lax: jnp.outer, (arr(3), arr(2))),
    ("tensordot", lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=([1], [0])), (A, B)),
    (
        "tensordot two axes",
        lambda jnp, lax: lambda x, y: jnp.tensordot(x, y, axes=2),
        (arr(2, 3, 4), arr(3, 4, 2)),
    ),
    ("inner", lambda jnp, lax: jnp.inner, (A, arr(4, 3))),
    ("vdot", lambda jnp, lax: jnp.vdot, (A, arr(2, 3, lo=-1.0))),
    (
        "dot_general batch",
        lambda jnp, lax: lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))),
        (arr(2, 2, 3), arr(2, 3, 4)),
    ),
    (
        "dot_general unsorted contraction",
        lambda jnp, lax: lambda x, y: lax.dot_general(x, y, (((1, 0), (0, 1)), ((), ()))),
        (A, arr(3, 2, 4)),
    ),
    (
        "dot_general middle batch",
        lambda jnp, lax: lambda x, y: lax.dot_general(x, y, (((2,), (0,)), ((1,), (1,)))),
        (arr(3, 2, 4), arr(4, 2, 5)),
    ),
    (
        "dot precision",
        lambda jnp, lax: lambda x, y: lax.dot(x, y, precision=lax.Precision.HIGHEST),
        (A, B),
    ),
    (
        "mlp",
        lambda jnp, lax: lambda x, w1, b1, w2: jnp.sum(jnp.tanh(x @ w1 + b1) @ w2),
        (A, B, arr(4), arr(4, 2)),
    ),
]

HALF: list[Case] = [
    (
        "astype f16 and back",
        lambda jnp, lax: lambda x: (x.astype(jnp.float16) * 2).astype(jnp.float32),
        (A,),
    ),
    ("bf16 sum", lambda jnp, lax: lambda x: jnp.sum(x * x), (arr(4, dtype=bf16),)),
    (
        "f16 reshape",
        lambda jnp, lax: lambda x: jnp.reshape(x, (3, 2)) * x.T,
        (arr(2, 3, dtype=f16),),
    ),
    ("f16 cumsum", lambda jnp, lax: lambda x: lax.cumsum(x, axis=1) * x, (arr(2, 3, dtype=f16),)),
    ("f16 max", lambda jnp, lax: lambda x: jnp.max(x, axis=0), (arr(3, 2, dtype=f16),)),
    ("bf16 prod", lambda jnp, lax: lambda x: jnp.prod(x), (arr(5, lo=0.5, dtype=bf16),)),
    ("f16 dot", lambda jnp, lax: jnp.dot, (arr(2, 3, dtype=f16), arr(3, 4, dtype=f16))),
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
        "dot preferred f32 from f16",
        lambda jnp, lax: (
            lambda x, y: lax.dot_general(
                x, y, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32
            )
        ),
        (arr(2, 3, dtype=f16), arr(3, 4, dtype=f16)),
    ),
    (
        "bf16 mlp",
        lambda jnp, lax: lambda x, w: jnp.sum(jnp.tanh(x @ w)),
        (arr(2, 3, dtype=bf16), arr(3, 2, dtype=bf16)),
    ),
]

# Programs whose grad jaxprs differ from JAX's through the `jit` boundary, not through these
# rules (printed for jvp only; values are still JAX's):
# - hstack/vstack: JAX's partial evaluation of the nested `atleast_1d` jit drops outputs that
#   only forward an input (`jit[...] a` with `in ()`) and the caller uses the input directly.
# - std all: in JAX the known half of the nested `_where` jit returns the zero tangent of the
#   selected constant as an extra literal output, threaded through `_var` and `_std`.
JIT_FORWARDING = {"hstack", "vstack", "std all"}

ORDER = {"argmax": 1, "argmin": 1, "argmax keepdims": 1, "argmax as float": 1}
ORDER.update({name: 0 for name, _, _ in TIES + HALF})
ALL = SHAPE + JOINING + REDUCTIONS + TIES + CUMULATIVE + DOT + HALF


@pytest.mark.parametrize(("name", "program", "args"), sweep(ALL, [c[0] for c in ALL]))
def test_rule_matches_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    printed: bool | tuple[str, ...] = ("jvp",) if name in JIT_FORWARDING else True
    check_ad(oracle, program, *args, order=ORDER.get(name, 2), printed=printed)


def test_jvp_of_argmax_is_a_float0_zero(oracle: Oracle) -> None:
    x = arr(2, 3)
    for api, jnp in ((lamina_core, lamina_core.numpy), (oracle.jax, oracle.jnp)):
        out, tangent = api.jvp(lambda x, jnp=jnp: jnp.argmax(x, axis=1), (x,), (x,))
        np.testing.assert_array_equal(np.asarray(out), [2, 2])
        assert np.asarray(tangent).dtype == oracle.jax.dtypes.float0
        assert np.asarray(tangent).shape == (2,)


def test_vjp_of_pad_with_a_constant_operand_fails_as_in_jax(oracle: Oracle) -> None:
    # JAX's pad transpose sums the operand's cotangent even when the operand is not linear
    # (it is None then), so the pullback of a pad of a constant raises; Lamina keeps that.
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda v: lax.pad(jnp.ones((2, 2), jnp.float32), v, ((1, 1, 0), (0, 0, 1)))

    check_ad(oracle, program, f32(0.5), kinds=("jvp",), order=0)
    ct = np.ones((4, 3), f32)
    for api, jnp, lax in (
        (lamina_core, lamina_core.numpy, lamina_core.lax),
        (oracle.jax, oracle.jnp, oracle.lax),
    ):
        _, pullback = api.vjp(program(jnp, lax), f32(0.5))
        with pytest.raises(TypeError):
            pullback(ct)
