"""Oracle corpus for lamina-core part 1: `make_jaxpr` prints JAX's text, computes JAX's numbers.

Each program is written once as `program(jnp, lax)` and run through both libraries: scalars,
weak types, mixed dtypes, pytrees in and out, unused outputs, long lines that wrap, and more
than 26 variables.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from lamina_core.testing import Oracle

f32 = np.float32
i32 = np.int32


def arr(*shape: int, dtype: Any = f32, start: float = 0.5) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(n, dtype=np.float64).reshape(shape) * 0.25 + start).astype(dtype)


Case = tuple[str, Callable[[ModuleType, ModuleType], Callable[..., Any]], tuple[Any, ...]]


def _chain(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        for _ in range(30):
            x = lax.sin(x)
        return x

    return f


def _many_outputs(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        return [x * float(i) for i in range(28)]

    return f


def _long_var_list(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
    def f(*xs: Any) -> Any:
        total = 0.0
        for x in xs:
            total = total + x
        return total

    return f


CASES: list[Case] = [
    # scalars and weak types
    ("scalar mul weak", lambda jnp, lax: lambda x: x * 2.0, (1.0,)),
    ("scalar add int weak", lambda jnp, lax: lambda x: x + 2, (3,)),
    ("strong f32 scalar", lambda jnp, lax: lambda x: x * 2.0, (f32(1.5),)),
    ("weak plus strong", lambda jnp, lax: lambda x, y: x + y, (1.0, f32(2.0))),
    ("int plus float weak", lambda jnp, lax: lambda x: x + 2.5, (arr(3, dtype=i32),)),
    ("int array plus weak int", lambda jnp, lax: lambda x: x * 3, (arr(4, dtype=i32),)),
    ("literal 0.1 strong", lambda jnp, lax: lambda x: x * 0.1, (arr(3),)),
    ("literal 0.1 weak", lambda jnp, lax: lambda x: x * 0.1, (1.0,)),
    ("numpy scalar literal", lambda jnp, lax: lambda x: x + np.float32(0.1), (arr(3),)),
    ("bool literal or", lambda jnp, lax: lambda x: x | True, (np.array([True, False]),)),
    ("u8 literal", lambda jnp, lax: lambda x: x + 2, (np.uint8(3),)),
    ("i16 literal", lambda jnp, lax: lambda x: x * 3, (np.int16(3),)),
    ("bf16 literal", lambda jnp, lax: lambda x: x * 1.5, (np.array(2, ml_dtypes.bfloat16),)),
    ("f16 array", lambda jnp, lax: lambda x: jnp.sin(x) + 1.0, (arr(3, dtype=np.float16),)),
    ("complex literal", lambda jnp, lax: lambda x: x * 2j, (np.complex64(1 + 1j),)),
    ("large literal", lambda jnp, lax: lambda x: x * 1e20, (arr(2),)),
    ("inf literal", lambda jnp, lax: lambda x: x + float("inf"), (arr(2),)),
    # elementwise frontends
    ("sin", lambda jnp, lax: lambda x: jnp.sin(x), (arr(4),)),
    ("sin of int promotes", lambda jnp, lax: lambda x: jnp.sin(x), (arr(2, 3, dtype=i32),)),
    ("sin of python int", lambda jnp, lax: lambda x: jnp.sin(x), (2,)),
    ("cos exp log", lambda jnp, lax: lambda x: jnp.log(jnp.exp(jnp.cos(x))), (arr(5),)),
    ("tanh sqrt", lambda jnp, lax: lambda x: jnp.tanh(jnp.sqrt(x)), (arr(2, 2),)),
    ("neg operator", lambda jnp, lax: lambda x: -x, (arr(2, 3),)),
    ("sub operator", lambda jnp, lax: lambda x, y: x - y, (arr(3), arr(3, start=2.0))),
    ("rsub", lambda jnp, lax: lambda x: 1.0 - x, (arr(3),)),
    ("rmul", lambda jnp, lax: lambda x: 2.0 * x, (arr(3),)),
    ("truediv floats", lambda jnp, lax: lambda x, y: x / y, (arr(3), arr(3, start=1.0))),
    ("truediv ints", lambda jnp, lax: lambda x: x / 2, (arr(2, 3, dtype=i32),)),
    ("maximum", lambda jnp, lax: lambda x, y: jnp.maximum(x, y), (arr(3), arr(3, start=0.6))),
    ("minimum with scalar", lambda jnp, lax: lambda x: jnp.minimum(x, 0.7), (arr(4),)),
    ("comparisons", lambda jnp, lax: lambda x: (x > 0.5, x <= 1.0, x == 0.75), (arr(4),)),
    ("broadcast ranks", lambda jnp, lax: lambda x, y: x + y, (arr(2, 8), arr(8))),
    ("broadcast three ranks", lambda jnp, lax: lambda x, y: x * y, (arr(2, 3, 4), arr(4))),
    ("broadcast size one", lambda jnp, lax: lambda x, y: x - y, (arr(2, 3), arr(1, 3))),
    (
        "mixed dtypes i8 f16",
        lambda jnp, lax: lambda x, y: x + y,
        (arr(3, dtype=np.int8), arr(3, dtype=np.float16)),
    ),
    (
        "mixed i32 u8",
        lambda jnp, lax: lambda x, y: x + y,
        (arr(3, dtype=i32), arr(3, dtype=np.uint8)),
    ),
    (
        "bf16 plus f32",
        lambda jnp, lax: lambda x, y: x * y,
        (arr(3, dtype=ml_dtypes.bfloat16), arr(3)),
    ),
    # reductions
    ("sum all", lambda jnp, lax: lambda x: jnp.sum(x), (arr(2, 3),)),
    ("sum axis", lambda jnp, lax: lambda x: jnp.sum(x, axis=1), (arr(2, 3),)),
    ("sum negative axis", lambda jnp, lax: lambda x: jnp.sum(x, axis=-1), (arr(2, 3, 4),)),
    ("sum keepdims", lambda jnp, lax: lambda x: jnp.sum(x, keepdims=True), (arr(2, 3),)),
    (
        "sum axes tuple keepdims",
        lambda jnp, lax: lambda x: jnp.sum(x, axis=(0, 2), keepdims=True),
        (arr(2, 3, 4),),
    ),
    ("sum int8 promotes", lambda jnp, lax: lambda x: jnp.sum(x), (arr(2, 8, dtype=np.int8),)),
    ("sum bool", lambda jnp, lax: lambda x: jnp.sum(x, axis=1), (np.ones((2, 8), bool),)),
    ("sum dtype", lambda jnp, lax: lambda x: jnp.sum(x, dtype=jnp.float32), (arr(4, dtype=i32),)),
    ("sum method", lambda jnp, lax: lambda x: x.sum(), (arr(3, 3),)),
    ("sum of scalar", lambda jnp, lax: lambda x: jnp.sum(x), (f32(2.0),)),
    # creation
    ("ones", lambda jnp, lax: lambda x: x + jnp.ones(3), (arr(3),)),
    ("zeros int", lambda jnp, lax: lambda x: jnp.zeros((2, 2), jnp.int32) + x, (i32(1),)),
    ("full", lambda jnp, lax: lambda x: jnp.full((3,), 2.0) * x, (arr(3),)),
    ("full int fill", lambda jnp, lax: lambda x: jnp.full((2,), 7) + x, (arr(2, dtype=i32),)),
    (
        "ones_like zeros_like",
        lambda jnp, lax: lambda x: jnp.ones_like(x) - jnp.zeros_like(x),
        (arr(2, 2),),
    ),
    ("full_like", lambda jnp, lax: lambda x: jnp.full_like(x, 3.0), (arr(2, dtype=i32),)),
    # lax directly
    ("lax add", lambda jnp, lax: lambda x, y: lax.add(x, y), (arr(8), f32(1))),
    ("lax add python scalar", lambda jnp, lax: lambda x: lax.add(x, 2.0), (arr(3),)),
    ("lax scalar first", lambda jnp, lax: lambda x: lax.add(2.0, x), (1.0,)),
    (
        "lax convert weak to strong",
        lambda jnp, lax: lambda x: lax.convert_element_type(x, jnp.float32),
        (1.0,),
    ),
    (
        "lax convert no-op",
        lambda jnp, lax: lambda x: lax.convert_element_type(x, jnp.float32),
        (f32(1.0),),
    ),
    (
        "lax convert to int",
        lambda jnp, lax: lambda x: lax.convert_element_type(x, jnp.int32),
        (arr(3),),
    ),
    (
        "lax convert constant",
        lambda jnp, lax: lambda x: lax.convert_element_type(2.0, jnp.int32) * x,
        (i32(1),),
    ),
    (
        "lax convert to bool",
        lambda jnp, lax: lambda x: lax.convert_element_type(x, jnp.bool_),
        (arr(3),),
    ),
    (
        "lax broadcast_in_dim",
        lambda jnp, lax: lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)),
        (arr(3),),
    ),
    ("lax reduce_sum", lambda jnp, lax: lambda x: lax.reduce_sum(x, (0,)), (arr(3),)),
    ("lax reduce_max", lambda jnp, lax: lambda x: lax.reduce_max(x, (0, 1)), (arr(2, 3),)),
    (
        "lax max min",
        lambda jnp, lax: lambda x, y: lax.min(lax.max(x, y), y),
        (arr(3), arr(3, start=0.9)),
    ),
    ("lax exp log", lambda jnp, lax: lambda x: lax.log(lax.exp(x)), (arr(3),)),
    (
        "lax neg sub mul",
        lambda jnp, lax: lambda x, y: lax.mul(lax.neg(x), lax.sub(x, y)),
        (arr(2), arr(2)),
    ),
    # pytrees, unused values, structure
    ("tuple in", lambda jnp, lax: lambda p: p[0] + jnp.sin(p[1]) * 3.0, ((arr(8), arr(8)),)),
    (
        "dict in sorted",
        lambda jnp, lax: lambda d: d["b"] - d["a"],
        ({"b": arr(2), "a": arr(2, start=1.0)},),
    ),
    ("dict out", lambda jnp, lax: lambda x: {"y": x * 2.0, "a": x + 1.0}, (arr(2),)),
    ("nested pytree out", lambda jnp, lax: lambda x: (x, [x, {"k": x + 1.0}]), (f32(1.0),)),
    ("None in pytree", lambda jnp, lax: lambda p: p[0] * 2.0, ((arr(2), None),)),
    ("identity", lambda jnp, lax: lambda x: x, (f32(1.0),)),
    ("literal out", lambda jnp, lax: lambda x: 1.0, (f32(1.0),)),
    ("no inputs", lambda jnp, lax: lambda: jnp.ones(2) * 3.0, ()),
    ("numpy array out", lambda jnp, lax: lambda x: np.ones(4, f32), (f32(1.0),)),
    ("numpy constant", lambda jnp, lax: lambda x: x + np.arange(4.0), (arr(4),)),
    (
        "same numpy constant twice",
        lambda jnp, lax: (lambda c: lambda x: x * c + c)(np.arange(16.0, dtype=f32)),
        (arr(16),),
    ),
    ("unused input", lambda jnp, lax: lambda x, y: jnp.sin(x), (f32(1.0), f32(2.0))),
    ("unused eqn output", lambda jnp, lax: lambda x: (jnp.cos(x), jnp.sin(x))[1], (f32(1.0),)),
    (
        "multiple outputs",
        lambda jnp, lax: lambda x, y: (x + 1.0, y * 2.0, lax.convert_element_type(x, jnp.int32)),
        (arr(2, 3), f32(1.0)),
    ),
    ("output twice", lambda jnp, lax: lambda x: (x, x, x + 1.0), (f32(1.0),)),
    ("30 eqns naming", _chain, (f32(0.5),)),
    ("28 outputs", _many_outputs, (f32(0.5),)),
    ("long var list wraps", _long_var_list, tuple(arr(128, 128) for _ in range(12))),
    (
        "long equation wraps params",
        lambda jnp, lax: lambda x: jnp.sum(x, axis=(0, 1, 2, 3, 4, 5, 6, 7)),
        (np.ones((1,) * 9, f32),),
    ),
    (
        "0-d and empty",
        lambda jnp, lax: lambda x, y: (jnp.sum(x), y * 2.0),
        (np.zeros((0, 3), f32), f32(1.0)),
    ),
    ("sum of empty", lambda jnp, lax: lambda x: jnp.sum(x, axis=0), (np.zeros((0, 3), f32),)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_make_jaxpr_matches_jax(
    oracle: Oracle, name: str, program: Any, args: tuple[Any, ...]
) -> None:
    oracle.check(program, *args)


@pytest.mark.oracle
def test_static_argnums_match_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def f(n: int, x: Any) -> Any:
            for _ in range(n):
                x = jnp.sin(x)
            return x

        return f

    oracle.check(program, 3, arr(2), static_argnums=(0,))


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 60
