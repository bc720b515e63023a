"""Oracle tests for the elementwise `jnp` functions, `where`, `clip`, `round` and the operators.

Each function prints JAX 0.10.2's jaxpr byte for byte (nested `jit`s included) over several
dtypes, mixed dtypes, weakly typed Python scalars, broadcasting, 0-d and empty operands, and
computes jax.jit's numbers. `logaddexp` and `logaddexp2` are `custom_jvp` functions in JAX and
in Lamina, so their text shows JAX's `custom_jvp_call`. Misuse raises JAX's own error text.

Tolerances are the Oracle's defaults (exact for integers and bools, 2e-6 for 32-bit floats,
2e-2 for 16-bit ones); no function here needs looser ones on these samples.
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
from lamina_core.trace._evaluate import eval_jaxpr

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
I32 = np.dtype(np.int32)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
BOOL = np.dtype(bool)
C64 = np.dtype(np.complex64)


_POSITIVE = ("log", "log2", "log10", "log1p", "sqrt", "reciprocal")
_UNIT = ("arcsin", "arccos", "arctanh", "asin", "acos", "atanh")


def sample(dtype: np.dtype, *, flip: bool = False, domain: str = "any") -> np.ndarray:
    """A few deterministic values of `dtype`; `flip` gives a second, different operand."""
    if dtype == BOOL:
        truth = np.array([True, False, True, False, False, True])
        return truth[::-1].copy() if flip else truth
    if dtype.kind in "iu":
        signed = [2, -3, 4, 5, -2, 1] if flip else [-7, -1, 0, 3, 5, 100]
        unsigned = [3, 1, 2, 9, 1, 255] if flip else [0, 1, 7, 200, 255, 3]
        return np.array(signed if dtype.kind == "i" else unsigned).astype(dtype)
    values = {
        "any": [-2.5, -1.0, -0.5, 0.0, 0.5, 1.5],
        "pos": [0.25, 0.5, 1.0, 2.0, 7.5, 3.0],
        "unit": [-0.9, -0.5, 0.0, 0.3, 0.75, 0.5],
    }[domain]
    arr = np.array(values[::-1] if flip else values) * (0.75 if flip else 1.0)
    if dtype.kind == "c":
        return (arr + 1j * arr[::-1]).astype(dtype)
    return arr.astype(dtype)


def numerics(oracle: Oracle, program: Program, *args: Any) -> None:
    """Lamina's jaxpr evaluates to jax.jit's numbers (whatever either prints)."""
    ours = lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    got = eval_jaxpr(ours.jaxpr, ours.consts, *args)
    want = oracle.jax.tree_util.tree_leaves(oracle.jit(program(oracle.jnp, oracle.lax))(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        tol = 0.0 if w.dtype.kind in "biu" else 2e-2 if w.dtype.itemsize <= 2 else 2e-6
        np.testing.assert_allclose(
            g.astype(np.float64) if g.dtype.kind == "V" else g,
            w.astype(np.float64) if w.dtype.kind == "V" else w,
            rtol=tol,
            atol=tol,
        )


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both libraries reject the program with the same exception type and message."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


def jnp_fn(name: str) -> Program:
    return lambda jnp, lax: getattr(jnp, name)


UNARY: list[tuple[str, tuple[np.dtype, ...]]] = [
    ("abs", (F32, BF16, I32, I8, U8, BOOL)),
    ("absolute", (F16, C64)),
    ("fabs", (F32, I32)),
    ("sign", (F32, BF16, I32, U8)),
    ("floor", (F32, F16, I32, BOOL)),
    ("ceil", (BF16, U8)),
    ("exp", (F32, BF16, I32, BOOL)),
    ("exp2", (F32, I8)),
    ("expm1", (F16, I32)),
    ("log", (F32, BF16, U8)),
    ("log2", (F32, C64, I32)),
    ("log10", (F32, F16, C64)),
    ("log1p", (F32, I8)),
    ("sqrt", (F32, BF16, I32)),
    ("cbrt", (F32, U8)),
    ("square", (F32, BF16, I32, I8, BOOL)),
    ("reciprocal", (F32, I32)),
    ("sin", (F32, BF16, F16, I32, BOOL)),
    ("cos", (F32, I8)),
    ("tan", (F32, U8)),
    ("arcsin", (F32, BF16)),
    ("arccos", (F32, I32)),
    ("arctan", (F32, I32)),
    ("sinh", (F32, F16)),
    ("cosh", (F32, I8)),
    ("tanh", (F32, BF16, I32)),
    ("arcsinh", (F32, U8)),
    ("arctanh", (F32, BF16)),
    ("asin", (F32,)),
    ("acos", (F16,)),
    ("atan", (BF16,)),
    ("asinh", (F32,)),
    ("atanh", (F32,)),
    ("real", (F32, C64, I32)),
    ("imag", (F32, C64, I32)),
    ("conj", (F32, C64)),
    ("conjugate", (I32, C64)),
    ("isnan", (F32, I32, BOOL)),
    ("isfinite", (F32, BF16, C64, I32)),
    ("isposinf", (F32, I32)),
    ("isneginf", (BF16, U8)),
    ("logical_not", (F32, I32, BOOL)),
    ("bitwise_not", (I32, U8, BOOL)),
    ("invert", (I8, BOOL)),
    ("bitwise_invert", (U8,)),
    ("negative", (F32, BF16, I32, U8)),
    ("positive", (F32, I32, BOOL)),
    ("deg2rad", (F32, I32)),
    ("rad2deg", (F32, BF16)),
    ("degrees", (I8,)),
    ("radians", (F16,)),
]


def _unary_sample(name: str, dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "fc":
        domain = "pos" if name in _POSITIVE else "unit" if name in _UNIT else "any"
        return sample(dtype, domain=domain)
    return sample(dtype)


_SLOW = pytest.mark.slow


# Each function with its first dtype by default, the other dtypes with the slow tests.
@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        pytest.param(n, d, id=f"{n}-{d.name}", marks=() if i == 0 else _SLOW)
        for n, dtypes in UNARY
        for i, d in enumerate(dtypes)
    ],
)
def test_unary_function_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    oracle.check(jnp_fn(name), _unary_sample(name, dtype))


BINARY = [
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "divide",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
]
FLOAT_BINARY = ["arctan2", "atan2", "float_power", "nextafter"]
INT_BINARY = [
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
    "bitwise_left_shift",
    "bitwise_right_shift",
]

# Operand pairs: same dtypes, mixed dtypes that promote, and weakly typed Python scalars.
PAIRS: list[tuple[str, Any, Any]] = [
    ("f32-f32", sample(F32), sample(F32, flip=True)),
    ("i32-i32", sample(I32), sample(I32, flip=True)),
    ("f32-i32", sample(F32), sample(I32, flip=True)),
    ("u8-i8", sample(U8), sample(I8, flip=True)),
    ("bf16-f16", sample(BF16), sample(F16, flip=True)),
    ("bool-bool", sample(BOOL), sample(BOOL, flip=True)),
    ("bf16-float", sample(BF16), 2.5),
    ("int-i8", 3, sample(I8)),
    ("i32-float", sample(I32), 0.5),
    ("u8-0d-i32", sample(U8), np.int32(2)),
]
INT_PAIRS = [pair for pair in PAIRS if pair[0] in ("i32-i32", "u8-i8", "int-i8", "u8-0d-i32")]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "x", "y"),
    # Each function with its first two pairs by default, the other pairs with the slow tests.
    [
        pytest.param(n, x, y, id=f"{n}-{pid}", marks=() if i < 2 else _SLOW)
        for n in BINARY
        for i, (pid, x, y) in enumerate(PAIRS[:6])
    ]
    + [
        pytest.param(n, x, y, id=f"{n}-{pid}", marks=_SLOW)
        for n in BINARY[:8]
        for pid, x, y in PAIRS[6:]
    ]
    + [
        pytest.param(n, x, y, id=f"{n}-{pid}", marks=() if i < 2 else _SLOW)
        for n in FLOAT_BINARY
        for i, (pid, x, y) in enumerate(PAIRS[:4])
    ]
    + [
        pytest.param(n, x, y, id=f"{n}-{pid}", marks=() if i < 2 else _SLOW)
        for n in INT_BINARY
        for i, (pid, x, y) in enumerate(INT_PAIRS)
    ],
)
def test_binary_function_matches_jax(oracle: Oracle, name: str, x: Any, y: Any) -> None:
    if name == "subtract" and np.asarray(x).dtype == BOOL:
        pytest.skip("jnp.subtract rejects bools (tested among the errors)")
    oracle.check(jnp_fn(name), x, y)


OPERATORS: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("pow-static-int", lambda jnp, lax: lambda a: a**2, (sample(F32),)),
    ("pow-static-int-i32", lambda jnp, lax: lambda a: a**3, (sample(I32),)),
    ("pow-static-negative", lambda jnp, lax: lambda a: jnp.power(a, -2), (sample(F16),)),
    ("pow-static-bool", lambda jnp, lax: lambda a: jnp.power(a, 2), (sample(BOOL),)),
    ("pow-static-np-int", lambda jnp, lax: lambda a: jnp.power(a, np.int32(3)), (sample(F32),)),
    ("pow-float-scalar", lambda jnp, lax: lambda a: a**0.5, (sample(F32, domain="pos"),)),
    ("pow-int-exponent", lambda jnp, lax: lambda a, b: a**b, (sample(F32), sample(I32, flip=True))),
    ("rpow", lambda jnp, lax: lambda a: 2.0**a, (sample(BF16),)),
    ("pow-float-float", lambda jnp, lax: jnp.pow, (sample(F32, domain="pos"), sample(F32))),
    (
        "pow-const-array",
        lambda jnp, lax: lambda a: jnp.power(a, np.arange(6, dtype=np.int32)),
        (sample(F32),),
    ),
    ("abs", lambda jnp, lax: lambda a: abs(a), (sample(I8),)),
    ("invert", lambda jnp, lax: lambda a: ~a, (sample(U8),)),
    ("shifts", lambda jnp, lax: lambda a: (a << 2) >> 1, (sample(I32),)),
    ("rshift-unsigned", lambda jnp, lax: lambda a, b: a >> b, (sample(U8), sample(U8, flip=True))),
    (
        "bit-ops",
        lambda jnp, lax: lambda a, b: (a & b) | (a ^ 3),
        (sample(I32), sample(I32, flip=True)),
    ),
    ("astype", lambda jnp, lax: lambda a: a.astype(jnp.int8), (sample(F32),)),
    ("astype-same", lambda jnp, lax: lambda a: a.astype(np.float32), (sample(F32),)),
    ("astype-complex-bool", lambda jnp, lax: lambda a: a.astype(bool), (sample(C64),)),
    ("jnp-astype-default", lambda jnp, lax: lambda a: jnp.astype(a, None), (sample(I32),)),
    ("real-imag", lambda jnp, lax: lambda a: a.real * a.imag, (sample(C64),)),
    ("real-of-float", lambda jnp, lax: lambda a: a.real + a.imag, (sample(F32),)),
    ("conj-method", lambda jnp, lax: lambda a: a.conj(), (sample(C64),)),
    ("compare-complex", lambda jnp, lax: lambda a, b: a < b, (sample(C64), sample(C64, flip=True))),
    (
        "rank-promotion",
        lambda jnp, lax: lambda a, b: a * b,
        (np.ones((2, 3), F32), sample(F32)[:3]),
    ),
    ("scalar-broadcast", lambda jnp, lax: jnp.maximum, (np.float32(1), np.ones((2, 2), F32))),
    ("empty", lambda jnp, lax: jnp.add, (np.zeros((0, 2), F32), np.zeros((3, 0, 2), F32))),
    ("zero-d", lambda jnp, lax: jnp.arctan2, (np.float32(1.0), np.float32(-2.0))),
    (
        "const-array-converts",
        lambda jnp, lax: lambda a: a + np.arange(6, dtype=np.int32),
        (sample(F32),),
    ),
    (
        "const-array-unary",
        lambda jnp, lax: lambda a: jnp.sin(np.arange(6, dtype=np.int8)) + a,
        (sample(F32),),
    ),
    ("python-scalar-fn", lambda jnp, lax: lambda a: jnp.abs(-2) + jnp.floor(3) + a, (sample(F32),)),
    ("weak-through-chain", lambda jnp, lax: lambda a: jnp.sqrt(a) * 2 + 1, (sample(I8),)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("program", "args"), [pytest.param(p, a, id=n) for n, p, a in OPERATORS])
def test_operators_methods_and_promotion_match_jax(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    oracle.check(program, *args)


# Functions JAX stages as a nested jit: Lamina stages the same jit equations.
JITTED: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("where", lambda jnp, lax: lambda a: jnp.where(a > 0, a, 0.0), (sample(F32),)),
    (
        "where-int-cond",
        lambda jnp, lax: lambda c, a: jnp.where(c, a, 7),
        (sample(I32), sample(F32)),
    ),
    (
        "where-broadcast",
        lambda jnp, lax: jnp.where,
        (sample(BOOL)[:3], np.ones((2, 3), BF16), np.int8(2)),
    ),
    ("where-scalar-cond", lambda jnp, lax: lambda a: jnp.where(True, a, 1), (sample(I32),)),
    ("where-empty", lambda jnp, lax: jnp.where, (np.zeros((0,), bool), np.zeros((0,), F32), 1.0)),
    ("clip", lambda jnp, lax: lambda a: jnp.clip(a, -1, 1), (sample(F32),)),
    ("clip-arrays", lambda jnp, lax: jnp.clip, (sample(I32), sample(I32, flip=True), np.int32(50))),
    ("clip-method", lambda jnp, lax: lambda a: a.clip(max=1.0), (sample(BF16),)),
    ("round", lambda jnp, lax: jnp.round, (sample(F32),)),
    ("round-decimals", lambda jnp, lax: lambda a: jnp.round(a, 1), (sample(F32) / 3,)),
    ("round-f16-decimals", lambda jnp, lax: lambda a: jnp.around(a, 2), (sample(F16) / 3,)),
    ("round-int", lambda jnp, lax: jnp.round, (sample(I32),)),
    ("round-method", lambda jnp, lax: lambda a: a.round(), (sample(BF16),)),
    ("rint", lambda jnp, lax: jnp.rint, (sample(F32),)),
    ("rint-int", lambda jnp, lax: jnp.rint, (sample(I8),)),
    ("trunc", lambda jnp, lax: jnp.trunc, (sample(F32),)),
    ("trunc-int", lambda jnp, lax: jnp.trunc, (sample(I32),)),
    ("floor_divide-f32", lambda jnp, lax: jnp.floor_divide, (sample(F32), sample(F32, flip=True))),
    ("floor_divide-i32", lambda jnp, lax: jnp.floor_divide, (sample(I32), sample(I32, flip=True))),
    ("floor_divide-u8", lambda jnp, lax: jnp.floor_divide, (sample(U8), sample(U8, flip=True))),
    ("floor_divide-bool", lambda jnp, lax: jnp.floor_divide, (sample(BOOL), sample(BOOL))),
    ("floordiv-operator", lambda jnp, lax: lambda a: a // 2, (sample(I8),)),
    ("remainder-f32", lambda jnp, lax: jnp.remainder, (sample(F32), sample(F32, flip=True))),
    ("remainder-i32", lambda jnp, lax: jnp.remainder, (sample(I32), sample(I32, flip=True) - 1)),
    ("mod-operator", lambda jnp, lax: lambda a: a % 3.0, (sample(BF16),)),
    ("fmod-f32", lambda jnp, lax: jnp.fmod, (sample(F32), sample(F32, flip=True))),
    ("fmod-i32", lambda jnp, lax: jnp.fmod, (sample(I32), sample(I32, flip=True) - 1)),
    ("divmod-i32", lambda jnp, lax: jnp.divmod, (sample(I32), sample(I32, flip=True))),
    (
        "divmod-operator",
        lambda jnp, lax: lambda a, b: divmod(a, b),
        (sample(F32), sample(F32, flip=True)),
    ),
    ("power-int-int", lambda jnp, lax: jnp.power, (sample(I32), np.abs(sample(I32, flip=True)))),
    ("pow-operator-u8", lambda jnp, lax: lambda a, b: a**b, (sample(U8), sample(U8, flip=True))),
    ("isinf", lambda jnp, lax: jnp.isinf, (np.array([np.inf, -np.inf, 1.0, np.nan], F32),)),
    ("isinf-int", lambda jnp, lax: jnp.isinf, (sample(I32),)),
    ("isinf-complex", lambda jnp, lax: jnp.isinf, (sample(C64),)),
    ("signbit", lambda jnp, lax: jnp.signbit, (np.array([-0.0, 0.0, -1.0, 2.0, np.nan], F32),)),
    ("signbit-bf16", lambda jnp, lax: jnp.signbit, (sample(BF16),)),
    ("signbit-int", lambda jnp, lax: jnp.signbit, (sample(I8),)),
    ("signbit-bool", lambda jnp, lax: jnp.signbit, (sample(BOOL),)),
    ("copysign", lambda jnp, lax: jnp.copysign, (sample(F32), sample(F32, flip=True))),
    ("angle", lambda jnp, lax: jnp.angle, (sample(F32),)),
    ("angle-complex", lambda jnp, lax: jnp.angle, (sample(C64),)),
    ("angle-int", lambda jnp, lax: jnp.angle, (sample(I32),)),
    ("hypot", lambda jnp, lax: jnp.hypot, (sample(F32), sample(F32, flip=True))),
    ("hypot-int", lambda jnp, lax: jnp.hypot, (sample(I32), sample(I32, flip=True))),
    ("heaviside", lambda jnp, lax: jnp.heaviside, (sample(F32), sample(F32, flip=True))),
    ("arccosh", lambda jnp, lax: jnp.arccosh, (sample(F32, domain="pos") + 1,)),
    ("acosh-int", lambda jnp, lax: jnp.acosh, (sample(U8),)),
    ("clip-method-positional", lambda jnp, lax: lambda a: a.clip(0, 1), (sample(F32),)),
    ("round-method-decimals", lambda jnp, lax: lambda a: a.round(2), (sample(F32) / 7,)),
    (
        "where-twice-shares-callee",
        lambda jnp, lax: lambda a, b: jnp.where(a > b, a, b) + jnp.where(a < b, a, b),
        (sample(F32), sample(F32, flip=True)),
    ),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("program", "args"), [pytest.param(p, a, id=n) for n, p, a in JITTED])
def test_jitted_function_matches_jax(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    oracle.check(program, *args)


# logaddexp is a custom_jvp in JAX, and in Lamina: the text shows the custom_jvp_call.
CUSTOM_JVP: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("logaddexp", lambda jnp, lax: jnp.logaddexp, (sample(F32), sample(F32, flip=True))),
    ("logaddexp-bf16-int", lambda jnp, lax: jnp.logaddexp, (sample(BF16), 2)),
    ("logaddexp2", lambda jnp, lax: jnp.logaddexp2, (sample(F32), sample(I32))),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("program", "args"), [pytest.param(p, a, id=n) for n, p, a in CUSTOM_JVP])
def test_custom_jvp_function_computes_jax_numbers(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    numerics(oracle, program, *args)


@pytest.mark.oracle
@pytest.mark.parametrize(("program", "args"), [pytest.param(p, a, id=n) for n, p, a in CUSTOM_JVP])
def test_custom_jvp_function_prints_jax_jaxpr(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    oracle.check(program, *args, numerics=False)


ERRORS: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("incompatible-shapes", lambda jnp, lax: jnp.add, (np.ones((2, 3), F32), np.ones(4, F32))),
    ("list-operand", lambda jnp, lax: lambda a: jnp.multiply(a, [1, 2]), (sample(F32),)),
    ("bool-subtract", lambda jnp, lax: jnp.subtract, (sample(BOOL), sample(BOOL))),
    ("bool-negative", lambda jnp, lax: jnp.negative, (sample(BOOL),)),
    ("float-shift", lambda jnp, lax: jnp.left_shift, (sample(F32), sample(F32))),
    ("float-invert", lambda jnp, lax: lambda a: ~a, (sample(F32),)),
    ("fabs-complex", lambda jnp, lax: jnp.fabs, (sample(C64),)),
    ("negative-int-power", lambda jnp, lax: lambda a: a**-2, (sample(I32),)),
    ("floor_divide-complex", lambda jnp, lax: jnp.floor_divide, (sample(C64), sample(C64))),
    ("clip-complex", lambda jnp, lax: lambda a: jnp.clip(a, 0), (sample(C64),)),
    ("hypot-complex", lambda jnp, lax: jnp.hypot, (sample(C64), sample(C64))),
    ("copysign-complex", lambda jnp, lax: jnp.copysign, (sample(C64), sample(C64))),
    ("where-missing-y", lambda jnp, lax: lambda c: jnp.where(c, 1.0, None), (sample(BOOL),)),
    ("isposinf-complex", lambda jnp, lax: jnp.isposinf, (sample(C64),)),
    ("bitwise-float", lambda jnp, lax: jnp.bitwise_and, (sample(F32), sample(F32))),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("program", "args"), [pytest.param(p, a, id=n) for n, p, a in ERRORS])
def test_bad_input_raises_jax_error(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    assert same_error(oracle, program, *args)


_SHAPE_PAIRS = st.sampled_from(
    [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((), (2, 2)), ((4, 1, 2), (3, 1)), ((0,), ())]
)
_DTYPES = st.sampled_from([F32, BF16, F16, I32, I8, U8, BOOL])


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    low = 0 if dtype.kind == "u" else -5
    return rng.integers(low, 6, size=shape).astype(dtype)


@pytest.mark.oracle
@settings(derandomize=True, max_examples=15, deadline=None)
@given(
    shapes=_SHAPE_PAIRS,
    dtypes=st.tuples(_DTYPES, _DTYPES),
    name=st.sampled_from(["add", "multiply", "maximum", "less", "not_equal", "logical_or"]),
    seed=st.integers(0, 2**16),
)
def test_binary_functions_over_shapes_and_dtypes(
    oracle: Oracle,
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    dtypes: tuple[np.dtype, np.dtype],
    name: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    x, y = (_values(rng, s, d) for s, d in zip(shapes, dtypes, strict=True))
    oracle.check(jnp_fn(name), x, y)


@pytest.mark.oracle
@settings(derandomize=True, max_examples=10, deadline=None)
@given(
    dtype=_DTYPES,
    scalar=st.sampled_from([2, -1, 0.5, True, 1.5 + 0.5j]),
    name=st.sampled_from(["add", "true_divide", "minimum", "equal", "multiply"]),
    scalar_first=st.booleans(),
)
def test_weak_scalars_promote_like_jax(
    oracle: Oracle, dtype: np.dtype, scalar: Any, name: str, scalar_first: bool
) -> None:
    x = _values(np.random.default_rng(0), (3,), dtype)
    if isinstance(scalar, complex) and name == "minimum":
        scalar = 0.25
    args = (scalar, x) if scalar_first else (x, scalar)
    oracle.check(jnp_fn(name), *args)
