"""Differentiation of the elementwise, transcendental and selection primitives against JAX:
printed jvp, grad and grad(jit) jaxprs, values, and finite differences."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
from lamina_core.testing import Oracle, check_ad

pytestmark = pytest.mark.oracle

f32 = np.float32


def arr(*shape: int, lo: float = 0.2, hi: float = 0.9, dtype: Any = f32) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(dtype)


X = arr(2, 3)
POS = arr(2, 3, lo=0.3, hi=2.5)
UNIT = arr(2, 3, lo=-0.7, hi=0.8)
Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

UNARY: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("neg", lambda jnp, lax: lax.neg, (X,)),
    ("exp", lambda jnp, lax: jnp.exp, (X,)),
    ("log", lambda jnp, lax: jnp.log, (POS,)),
    ("log1p", lambda jnp, lax: jnp.log1p, (POS,)),
    ("expm1", lambda jnp, lax: jnp.expm1, (X,)),
    ("exp2", lambda jnp, lax: jnp.exp2, (X,)),
    ("tanh", lambda jnp, lax: jnp.tanh, (X,)),
    ("logistic", lambda jnp, lax: lax.logistic, (UNIT,)),
    ("sin", lambda jnp, lax: jnp.sin, (X,)),
    ("cos", lambda jnp, lax: jnp.cos, (X,)),
    ("tan", lambda jnp, lax: jnp.tan, (UNIT,)),
    ("sqrt", lambda jnp, lax: jnp.sqrt, (POS,)),
    ("rsqrt", lambda jnp, lax: lax.rsqrt, (POS,)),
    ("cbrt", lambda jnp, lax: jnp.cbrt, (POS,)),
    ("asin", lambda jnp, lax: jnp.arcsin, (UNIT,)),
    ("acos", lambda jnp, lax: jnp.arccos, (UNIT,)),
    ("atan", lambda jnp, lax: jnp.arctan, (UNIT,)),
    ("sinh", lambda jnp, lax: jnp.sinh, (UNIT,)),
    ("cosh", lambda jnp, lax: jnp.cosh, (UNIT,)),
    ("asinh", lambda jnp, lax: jnp.arcsinh, (UNIT,)),
    ("acosh", lambda jnp, lax: jnp.arccosh, (arr(2, 3, lo=1.2, hi=3.0),)),
    ("atanh", lambda jnp, lax: jnp.arctanh, (UNIT,)),
    ("erf", lambda jnp, lax: lax.erf, (UNIT,)),
    ("erfc", lambda jnp, lax: lax.erfc, (UNIT,)),
    ("erf_inv", lambda jnp, lax: lax.erf_inv, (UNIT,)),
    ("lgamma", lambda jnp, lax: lax.lgamma, (POS,)),
    ("abs", lambda jnp, lax: jnp.abs, (UNIT,)),
    ("square", lambda jnp, lax: lax.square, (UNIT,)),
    ("integer_pow 3", lambda jnp, lax: lambda x: lax.integer_pow(x, 3), (UNIT,)),
    ("integer_pow -2", lambda jnp, lax: lambda x: lax.integer_pow(x, -2), (POS,)),
    ("reciprocal", lambda jnp, lax: jnp.reciprocal, (POS,)),
    (
        "sign floor ceil round",
        lambda jnp, lax: lambda x: jnp.sign(x) + jnp.floor(x) + jnp.round(x) + x,
        (UNIT,),
    ),
    ("scalar sin", lambda jnp, lax: jnp.sin, (f32(0.4),)),
    ("weak scalar tanh", lambda jnp, lax: jnp.tanh, (0.4,)),
    (
        "tanh highest",
        lambda jnp, lax: lambda x: lax.tanh(x, accuracy=lax.AccuracyMode.HIGHEST),
        (X,),
    ),
    (
        "logistic highest",
        lambda jnp, lax: lambda x: lax.logistic(x, accuracy=lax.AccuracyMode.HIGHEST),
        (X,),
    ),
    (
        "expm1 highest",
        lambda jnp, lax: lambda x: lax.expm1(x, accuracy=lax.AccuracyMode.HIGHEST),
        (X,),
    ),
]

BINARY: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("add", lambda jnp, lax: jnp.add, (X, POS)),
    ("add scalar", lambda jnp, lax: jnp.add, (X, f32(2.0))),
    ("sub", lambda jnp, lax: jnp.subtract, (X, POS)),
    ("sub broadcast", lambda jnp, lax: jnp.subtract, (f32(1.0), X)),
    ("mul", lambda jnp, lax: jnp.multiply, (X, POS)),
    ("mul weak", lambda jnp, lax: lambda x: x * 3.0, (X,)),
    ("div", lambda jnp, lax: jnp.divide, (X, POS)),
    ("div scalar", lambda jnp, lax: lambda x: 2.0 / x, (POS,)),
    ("pow", lambda jnp, lax: jnp.power, (POS, X)),
    ("pow weak float", lambda jnp, lax: lambda x: x**2.5, (POS,)),
    ("pow int exponent", lambda jnp, lax: lambda x: lax.pow(x, np.int32(3)), (POS,)),
    ("float_power", lambda jnp, lax: lambda x, y: jnp.float_power(x, y), (POS, X)),
    ("maximum", lambda jnp, lax: jnp.maximum, (X, arr(2, 3, lo=0.9, hi=0.2))),
    ("minimum", lambda jnp, lax: jnp.minimum, (X, arr(2, 3, lo=0.9, hi=0.2))),
    ("relu", lambda jnp, lax: lambda x: jnp.maximum(x, 0.0), (UNIT,)),
    ("max tie", lambda jnp, lax: jnp.maximum, (X, X)),
    ("atan2", lambda jnp, lax: jnp.arctan2, (X, POS)),
    ("rem", lambda jnp, lax: lax.rem, (POS, arr(2, 3, lo=0.7, hi=0.8))),
    ("where", lambda jnp, lax: lambda x, y: jnp.where(x > 0.5, x, y * 2.0), (X, POS)),
    (
        "select int",
        lambda jnp, lax: (
            lambda x, y: lax.select_n(np.array([[0, 1, 2], [2, 1, 0]], np.int32), x, y, x * y)
        ),
        (X, POS),
    ),
    ("clamp", lambda jnp, lax: lambda x: lax.clamp(f32(0.3), x, f32(0.7)), (X,)),
    ("clip", lambda jnp, lax: lambda x: jnp.clip(x, 0.3, 0.7), (X,)),
]

COMPOSITE: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("swish", lambda jnp, lax: lambda x: jnp.sum(x * lax.logistic(x)), (UNIT,)),
    ("softplus", lambda jnp, lax: lambda x: jnp.sum(jnp.log1p(jnp.exp(x))), (UNIT,)),
    (
        "gelu tanh",
        lambda jnp, lax: (
            lambda x: jnp.sum(0.5 * x * (1.0 + jnp.tanh(0.79788456 * (x + 0.044715 * x**3))))
        ),
        (UNIT,),
    ),
    ("normalize", lambda jnp, lax: lambda x: x / jnp.sqrt(jnp.sum(x * x)), (X,)),
    ("softmax-ish", lambda jnp, lax: lambda x: jnp.exp(x) / jnp.sum(jnp.exp(x)), (X,)),
    (
        "reduce_precision",
        lambda jnp, lax: lambda x: lax.reduce_precision(x * 2.0, exponent_bits=5, mantissa_bits=10),
        (X,),
    ),
]

CASES = UNARY + BINARY + COMPOSITE

# Cases whose primitives another case already differentiates by default: variants (scalars, weak
# types, broadcasting, accuracy), jnp wrappers of covered primitives and composites. They run with
# the slow tests.
COVERED = {
    "integer_pow -2",
    "reciprocal",
    "scalar sin",
    "weak scalar tanh",
    "tanh highest",
    "logistic highest",
    "expm1 highest",
    "add scalar",
    "sub broadcast",
    "mul weak",
    "div scalar",
    "pow weak float",
    "pow int exponent",
    "float_power",
    "relu",
    "max tie",
    "select int",
    "clip",
    "swish",
    "softplus",
    "gelu tanh",
    "normalize",
    "softmax-ish",
}


@pytest.mark.parametrize(
    ("name", "program", "args"),
    [pytest.param(*c, id=c[0], marks=pytest.mark.slow if c[0] in COVERED else ()) for c in CASES],
)
def test_rule_matches_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    # Finite differences cannot see through rounding; lgamma's second derivative needs
    # polygamma, which Lamina lacks.
    order = {"reduce_precision": 0, "sign floor ceil round": 0, "max tie": 1, "lgamma": 1}
    check_ad(oracle, program, *args, order=order.get(name, 2))


COMPLEX: list[tuple[str, Program, tuple[Any, ...]]] = [
    (
        "abs complex",
        lambda jnp, lax: lambda z: jnp.sum(jnp.abs(z)),
        (np.array([1 + 2j, 3 - 1j], np.complex64),),
    ),
    (
        "real imag",
        lambda jnp, lax: lambda z: jnp.real(z) * jnp.imag(z),
        (np.array([1 + 2j, 3 - 1j], np.complex64),),
    ),
    ("complex", lambda jnp, lax: lambda x, y: jnp.abs(lax.complex(x, y)), (X, POS)),
    (
        "conj",
        lambda jnp, lax: lambda z: jnp.real(jnp.conj(z) * z),
        (np.array([1 + 2j, 3 - 1j], np.complex64),),
    ),
]


@pytest.mark.parametrize(("name", "program", "args"), COMPLEX, ids=[c[0] for c in COMPLEX])
def test_complex_rules_match_jax(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    check_ad(oracle, program, *args, order=1)


NARROW = [f32, np.float16, ml_dtypes.bfloat16]


# bfloat16 by default, the other widths with the slow tests.
@pytest.mark.parametrize(
    "dtype",
    [
        pytest.param(f32, id="f32", marks=pytest.mark.slow),
        pytest.param(np.float16, id="f16", marks=pytest.mark.slow),
        pytest.param(ml_dtypes.bfloat16, id="bf16"),
    ],
)
def test_narrow_floats_match_jax(oracle: Oracle, dtype: Any) -> None:
    x = arr(4, dtype=dtype)
    check_ad(oracle, lambda jnp, lax: lambda x: jnp.sin(x) * jnp.exp(x) / (x + 1.0), x, order=0)


def test_max_tie_shares_the_gradient() -> None:
    g = lamina_core.grad(lambda x, y: lamina_core.numpy.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert [float(v) for v in g] == [0.5, 0.5]


def test_nonlinear_div_cannot_be_transposed() -> None:
    y = np.ones(3, f32)
    with pytest.raises(RuntimeError, match="nonlinear div can't be transposed"):
        lamina_core.linear_transpose(lambda x: lamina_core.lax.div(x, x), y)(y)


def test_non_differentiable_primitive_raises_jax_error() -> None:
    with pytest.raises(
        NotImplementedError, match="Differentiation rule for 'nextafter' not implemented"
    ):
        lamina_core.grad(lambda x: lamina_core.lax.nextafter(x, f32(2.0)))(f32(1.0))


def test_clamp_with_scalar_traced_bounds_fails_as_in_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda lo, x, hi: jnp.sum(lax.clamp(lo, x, hi))

    def error(api: Any, jnp: ModuleType, lax: ModuleType) -> str:
        with pytest.raises(TypeError) as info:
            api.grad(program(jnp, lax), argnums=(0, 1, 2))(f32(0.3), X, f32(0.7))
        return str(info.value)

    assert error(lamina_core, lamina_core.numpy, lamina_core.lax) == error(
        oracle.jax, oracle.jnp, oracle.lax
    )
