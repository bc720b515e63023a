"""Oracle tests for the `jnp` reductions: sum prod max min amax amin all any mean var std argmax
argmin cumsum cumprod, their `axis`/`keepdims`/`dtype`/`initial`/`where` arguments, and the
array methods.

JAX stages var, std, cumsum, cumprod and every `where=` mask inside nested `jit`s; Lamina stages
the same `jit` equations, so those print byte for byte too.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import hypothesis.strategies as st
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import lamina_core
from lamina_core.testing import Oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]
Case = tuple[str, Program, tuple[Any, ...]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
BOOL = np.dtype(bool)


def data(shape: tuple[int, ...], dtype: np.dtype = F32, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.random(shape) < 0.6
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


X = data((2, 3, 4))

CASES: list[Case] = [
    # sum
    ("sum", lambda jnp, lax: lambda x: jnp.sum(x), (X,)),
    ("sum axis", lambda jnp, lax: lambda x: jnp.sum(x, axis=1), (X,)),
    ("sum negative axis", lambda jnp, lax: lambda x: jnp.sum(x, axis=-1), (X,)),
    ("sum unordered axes", lambda jnp, lax: lambda x: jnp.sum(x, axis=(2, 0)), (X,)),
    ("sum keepdims", lambda jnp, lax: lambda x: jnp.sum(x, axis=(2, 0), keepdims=True), (X,)),
    ("sum no axes", lambda jnp, lax: lambda x: jnp.sum(x, axis=()), (X,)),
    ("sum no axes keepdims", lambda jnp, lax: lambda x: jnp.sum(x, (), keepdims=True), (X,)),
    ("sum list axes", lambda jnp, lax: lambda x: jnp.sum(x, axis=[0, 1]), (X,)),
    ("sum bf16 upcasts", lambda jnp, lax: lambda x: jnp.sum(x, 0), (data((3, 2), BF16),)),
    ("sum i8 promotes", lambda jnp, lax: lambda x: jnp.sum(x), (data((5,), I8),)),
    ("sum u8 promotes", lambda jnp, lax: lambda x: jnp.sum(x), (data((5,), U8),)),
    (
        "sum i8 no promote",
        lambda jnp, lax: lambda x: jnp.sum(x, promote_integers=False),
        (data((5,), I8),),
    ),
    ("sum bool", lambda jnp, lax: lambda x: jnp.sum(x, axis=1), (data((3, 4), BOOL),)),
    ("sum dtype int", lambda jnp, lax: lambda x: jnp.sum(x, dtype=jnp.int32), (X,)),
    ("sum dtype bf16", lambda jnp, lax: lambda x: jnp.sum(x, dtype=jnp.bfloat16), (X,)),
    ("sum dtype bool", lambda jnp, lax: lambda x: jnp.sum(x, dtype=bool), (X,)),
    ("sum initial", lambda jnp, lax: lambda x: jnp.sum(x, initial=2), (X,)),
    (
        "sum initial keepdims",
        lambda jnp, lax: lambda x: jnp.sum(x, 1, initial=1.5, keepdims=True),
        (X,),
    ),
    ("sum weak scalar", lambda jnp, lax: lambda x: jnp.sum(x), (1.0,)),
    ("sum 0-d", lambda jnp, lax: lambda x: jnp.sum(x), (np.float32(3.0),)),
    ("sum empty", lambda jnp, lax: lambda x: jnp.sum(x, axis=0), (data((0, 3)),)),
    ("sum python int", lambda jnp, lax: lambda x: jnp.sum(x) + jnp.sum(3), (X,)),
    (
        "sum constant array",
        lambda jnp, lax: lambda x: x + jnp.sum(np.ones((2, 2), np.float32)),
        (X,),
    ),
    # prod
    ("prod", lambda jnp, lax: lambda x: jnp.prod(x, axis=1), (data((2, 3), I32),)),
    ("prod bool", lambda jnp, lax: lambda x: jnp.prod(x), (data((4,), BOOL),)),
    (
        "prod bf16 dtype",
        lambda jnp, lax: lambda x: jnp.prod(x, dtype=jnp.bfloat16),
        (data((3,), BF16),),
    ),
    (
        "prod keepdims initial",
        lambda jnp, lax: lambda x: jnp.prod(x, -1, keepdims=True, initial=2.0),
        (X,),
    ),
    ("prod empty", lambda jnp, lax: lambda x: jnp.prod(x), (data((2, 0)),)),
    # max / min / amax / amin
    ("max", lambda jnp, lax: lambda x: jnp.max(x), (X,)),
    ("max axis initial", lambda jnp, lax: lambda x: jnp.max(x, axis=0, initial=1.0), (X,)),
    ("max bool", lambda jnp, lax: lambda x: jnp.max(x), (data((4,), BOOL),)),
    (
        "max int keepdims",
        lambda jnp, lax: lambda x: jnp.max(x, 1, keepdims=True),
        (data((3, 2), I32),),
    ),
    ("max bf16", lambda jnp, lax: lambda x: jnp.max(x, -1), (data((3, 2), BF16),)),
    ("max weak", lambda jnp, lax: lambda x: jnp.max(x), (1.0,)),
    ("max empty with initial", lambda jnp, lax: lambda x: jnp.max(x, initial=-1.0), (data((0,)),)),
    ("min", lambda jnp, lax: lambda x: jnp.min(x, keepdims=True), (data((3, 2), I32),)),
    ("min initial int", lambda jnp, lax: lambda x: jnp.min(x, axis=(0, 2), initial=1), (X,)),
    ("amax", lambda jnp, lax: lambda x: jnp.amax(x, axis=(0, 1)), (X,)),
    ("amin", lambda jnp, lax: lambda x: jnp.amin(x, axis=-2), (X,)),
    # all / any
    ("all float", lambda jnp, lax: lambda x: jnp.all(x), (X,)),
    ("all bool axis", lambda jnp, lax: lambda x: jnp.all(x, axis=1), (data((2, 3), BOOL),)),
    (
        "all int keepdims",
        lambda jnp, lax: lambda x: jnp.all(x, 0, keepdims=True),
        (data((2, 3), I32),),
    ),
    ("all weak", lambda jnp, lax: lambda x: jnp.all(x), (1.0,)),
    ("any int", lambda jnp, lax: lambda x: jnp.any(x, axis=0), (data((2, 3), I32),)),
    ("any keepdims", lambda jnp, lax: lambda x: jnp.any(x, keepdims=True), (X,)),
    ("any of comparison", lambda jnp, lax: lambda x: jnp.any(x > 1.5, axis=-1), (X,)),
    ("any empty", lambda jnp, lax: lambda x: jnp.any(x), (data((0, 2)),)),
    # mean
    ("mean", lambda jnp, lax: lambda x: jnp.mean(x), (X,)),
    ("mean axes", lambda jnp, lax: lambda x: jnp.mean(x, axis=(-1, 0)), (X,)),
    (
        "mean int keepdims",
        lambda jnp, lax: lambda x: jnp.mean(x, -1, keepdims=True),
        (data((2, 3), I32),),
    ),
    ("mean bool", lambda jnp, lax: lambda x: jnp.mean(x), (data((4,), BOOL),)),
    ("mean no axes", lambda jnp, lax: lambda x: jnp.mean(x, axis=()), (X,)),
    ("mean empty", lambda jnp, lax: lambda x: jnp.mean(x), (data((0, 3)),)),
    ("mean bf16", lambda jnp, lax: lambda x: jnp.mean(x, 0), (data((4, 2), BF16),)),
    ("mean dtype", lambda jnp, lax: lambda x: jnp.mean(x, dtype=jnp.bfloat16), (X,)),
    ("mean weak", lambda jnp, lax: lambda x: jnp.mean(x), (1.0,)),
    # argmax / argmin
    ("argmax axis", lambda jnp, lax: lambda x: jnp.argmax(x, axis=1), (X,)),
    ("argmax flat", lambda jnp, lax: lambda x: jnp.argmax(x), (X,)),
    ("argmax vector", lambda jnp, lax: lambda x: jnp.argmax(x), (data((5,)),)),
    ("argmax weak", lambda jnp, lax: lambda x: jnp.argmax(x), (1.0,)),
    ("argmax bool", lambda jnp, lax: lambda x: jnp.argmax(x, 0), (data((4, 2), BOOL),)),
    ("argmin keepdims flat", lambda jnp, lax: lambda x: jnp.argmin(x, keepdims=True), (X,)),
    ("argmin negative keepdims", lambda jnp, lax: lambda x: jnp.argmin(x, -1, keepdims=True), (X,)),
    ("argmin int", lambda jnp, lax: lambda x: jnp.argmin(x, axis=0), (data((3, 4), I32),)),
    # array methods
    ("method sum", lambda jnp, lax: lambda x: x.sum(axis=0), (X,)),
    ("method prod", lambda jnp, lax: lambda x: x.prod(), (X,)),
    ("method mean", lambda jnp, lax: lambda x: x.mean(1, keepdims=True), (X,)),
    ("method max", lambda jnp, lax: lambda x: x.max(axis=1), (X,)),
    ("method min", lambda jnp, lax: lambda x: x.min(), (X,)),
    ("method argmax", lambda jnp, lax: lambda x: x.argmax(axis=1), (X,)),
    ("method argmin", lambda jnp, lax: lambda x: x.argmin(), (X,)),
    ("method any", lambda jnp, lax: lambda x: x.any(), (X,)),
    ("method all", lambda jnp, lax: lambda x: x.all(axis=2), (X,)),
    ("chained", lambda jnp, lax: lambda x: x.sum(0).max() - jnp.mean(x), (X,)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_reductions_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    oracle.check(program, *args)


WHERE = X > 1.0
JIT_CASES: list[Case] = [
    ("var", lambda jnp, lax: lambda x: jnp.var(x), (X,)),
    ("var axis", lambda jnp, lax: lambda x: jnp.var(x, axis=0), (X,)),
    (
        "var keepdims ddof",
        lambda jnp, lax: lambda x: jnp.var(x, (0, 2), keepdims=True, ddof=1),
        (X,),
    ),
    ("var int", lambda jnp, lax: lambda x: jnp.var(x), (data((4,), I32),)),
    ("var bf16", lambda jnp, lax: lambda x: jnp.var(x), (data((4,), BF16),)),
    ("var too few", lambda jnp, lax: lambda x: jnp.var(x, correction=5), (data((4,)),)),
    (
        "var complex",
        lambda jnp, lax: lambda x: jnp.var(x),
        (np.array([1 + 1j, 2 - 1j], np.complex64),),
    ),
    ("var where", lambda jnp, lax: lambda x, w: jnp.var(x, where=w), (X, WHERE)),
    ("var method", lambda jnp, lax: lambda x: x.var(axis=1), (X,)),
    ("std", lambda jnp, lax: lambda x: jnp.std(x, ddof=1), (X,)),
    ("std int axis", lambda jnp, lax: lambda x: jnp.std(x, axis=-1), (data((3, 4), I32),)),
    ("std method", lambda jnp, lax: lambda x: x.std(), (X,)),
    ("sum where", lambda jnp, lax: lambda x, w: jnp.sum(x, where=w), (X, WHERE)),
    ("prod where", lambda jnp, lax: lambda x, w: jnp.prod(x, where=w), (X, WHERE)),
    ("max where", lambda jnp, lax: lambda x, w: jnp.max(x, where=w, initial=0.0), (X, WHERE)),
    (
        "min where int",
        lambda jnp, lax: lambda x: jnp.min(x, 0, where=x > 0, initial=5),
        (data((3, 4), I32),),
    ),
    ("all where", lambda jnp, lax: lambda x, w: jnp.all(x, where=w), (X, WHERE)),
    ("any where", lambda jnp, lax: lambda x, w: jnp.any(x, 1, where=w), (X, WHERE)),
    ("mean where", lambda jnp, lax: lambda x, w: jnp.mean(x, where=w), (X, WHERE)),
    (
        "mean where keepdims",
        lambda jnp, lax: lambda x, w: jnp.mean(x, 1, where=w, keepdims=True),
        (X, WHERE),
    ),
    # JAX's `jnp.where` and the reductions' `_where` are one `jit`: a call of each with the
    # same types prints one sub-jaxpr, shared (`let _where = ... in`).
    (
        "sum where beside jnp.where",
        lambda jnp, lax: lambda x, w: (jnp.sum(x, where=w), jnp.where(w, x, np.float32(0))),
        (X, WHERE),
    ),
    (
        "var beside jnp.where",
        lambda jnp, lax: lambda x: (jnp.var(x), jnp.where(x.sum() > 0, x.sum(), np.nan)),
        (X,),
    ),
    ("cumsum flat", lambda jnp, lax: lambda x: jnp.cumsum(x), (X,)),
    ("cumsum axis", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=-1), (X,)),
    ("cumsum i8", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=0), (data((3, 4), I8),)),
    ("cumsum bool", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=0), (data((3, 4), BOOL),)),
    (
        "cumsum dtype bool",
        lambda jnp, lax: lambda x: jnp.cumsum(x, 0, dtype=bool),
        (data((3, 4), I32),),
    ),
    (
        "cumsum dtype",
        lambda jnp, lax: lambda x: jnp.cumsum(x, 0, dtype=jnp.float32),
        (data((3, 4), I32),),
    ),
    ("cumsum weak scalar", lambda jnp, lax: lambda x: jnp.cumsum(x), (2.0,)),
    ("cumsum 0-d", lambda jnp, lax: lambda x: jnp.cumsum(x), (np.float32(2.0),)),
    ("cumsum method", lambda jnp, lax: lambda x: x.cumsum(axis=1), (X,)),
    ("cumprod", lambda jnp, lax: lambda x: jnp.cumprod(x, axis=1), (X,)),
    ("cumprod flat int", lambda jnp, lax: lambda x: jnp.cumprod(x), (data((2, 3), I32),)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_wrapped_reductions_match_jax(
    oracle: Oracle, name: str, program: Program, args: Any
) -> None:
    oracle.check(program, *args)


ERROR_CASES: list[Case] = [
    ("axis out of range", lambda jnp, lax: lambda x: jnp.sum(x, axis=3), (X,)),
    ("negative axis out of range", lambda jnp, lax: lambda x: jnp.max(x, axis=-4), (X,)),
    ("duplicate axis", lambda jnp, lax: lambda x: jnp.sum(x, axis=(0, -3)), (X,)),
    ("max of empty", lambda jnp, lax: lambda x: jnp.max(x), (data((0, 2)),)),
    ("min where without initial", lambda jnp, lax: lambda x: jnp.min(x, where=x > 1), (X,)),
    ("where not bool", lambda jnp, lax: lambda x: jnp.sum(x, where=x), (X,)),
    ("initial not scalar", lambda jnp, lax: lambda x: jnp.sum(x, initial=np.ones(2)), (X,)),
    ("argmax of empty", lambda jnp, lax: lambda x: jnp.argmax(x, axis=0), (data((0, 2)),)),
    ("argmin axis", lambda jnp, lax: lambda x: jnp.argmin(x, axis=5), (X,)),
    ("list operand", lambda jnp, lax: lambda x: jnp.sum([x, x]), (X,)),
    ("std int dtype", lambda jnp, lax: lambda x: jnp.std(x, dtype=jnp.int32), (X,)),
    ("var ddof and correction", lambda jnp, lax: lambda x: jnp.var(x, ddof=1, correction=1), (X,)),
    ("cumsum axis", lambda jnp, lax: lambda x: jnp.cumsum(x, axis=3), (X,)),
    ("out", lambda jnp, lax: lambda x: jnp.sum(x, out=x), (X,)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_reduction_errors_match_jax(oracle: Oracle, name: str, program: Program, args: Any) -> None:
    same_error(oracle, program, *args)


@st.composite
def _jnp_reduction(draw: st.DrawFn) -> tuple[str, np.ndarray, Any, bool]:
    name = draw(st.sampled_from(["sum", "prod", "max", "min", "mean", "all", "any", "argmax"]))
    ndim = draw(st.integers(0 if name != "argmax" else 1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
    dtype = draw(st.sampled_from([F32, I32, BOOL, BF16, U8]))
    if name == "argmax":
        axis: Any = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))
    else:
        axis = draw(
            st.one_of(
                st.none(),
                st.integers(-ndim, ndim - 1) if ndim else st.none(),
                st.permutations(range(ndim)).map(lambda p: tuple(p[: max(1, len(p) - 1)])),
            )
        )
    return name, data(shape, dtype, seed=draw(st.integers(0, 5))), axis, draw(st.booleans())


@pytest.mark.oracle
@settings(derandomize=True, max_examples=30, deadline=None)
@given(case=_jnp_reduction())
def test_random_jnp_reductions_match_jax(
    oracle: Oracle, case: tuple[str, np.ndarray, Any, bool]
) -> None:
    name, x, axis, keepdims = case
    oracle.check(lambda jnp, lax: lambda x: getattr(jnp, name)(x, axis, keepdims=keepdims), x)
