"""Oracle tests for the elementwise lax primitives, select_n, clamp and the bit-level ops.

Every primitive prints JAX 0.10.2's jaxpr byte for byte and its NumPy reference computes
jax.jit's numbers, over the dtypes it accepts (f32, bf16, f16, i32, i8, u8, bool, c64), with
0-d, empty and broadcast operands and weakly typed Python scalars. Misuse raises JAX's own
error text.

Tolerances: the Oracle's default (exact for integers and bools, 2e-6 for 32-bit floats, 2e-2
for 16-bit ones) holds for every primitive on the sample values. Over wide random ranges XLA's
CPU kernels (polynomial approximations) were measured against the float64 references: every
f32 op is within 7e-7 except erf_inv and lgamma (3e-6); 16-bit ops are within one ulp once
exp2 mimics XLA's 16-bit expansion. `LOOSE` holds the wider bounds.
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
from lamina_core.testing import Oracle, sweep
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

FLOATS = (F32, BF16, F16)
INTS = (I32, I8, U8)

# Measured bounds (rtol = atol) where XLA's kernel is looser than the default tolerance.
LOOSE: dict[tuple[str, np.dtype], float] = {
    ("erf_inv", F32): 1e-5,
    ("lgamma", F32): 1e-5,
}

_DOMAINS: dict[str, list[float]] = {
    "any": [-2.5, -1.0, -0.5, 0.0, 0.5, 1.5, 3.25],
    "pos": [0.25, 0.5, 1.0, 2.0, 7.5],
    "unit": [-0.9, -0.5, 0.0, 0.3, 0.75],
    "ge1": [1.0, 1.5, 2.0, 4.0, 10.0],
    "gamma": [-2.5, -0.5, 0.25, 1.0, 2.5, 6.0],
}


def sample(dtype: np.dtype, domain: str = "any", *, flip: bool = False) -> np.ndarray:
    """A few deterministic values of `dtype`; `flip` gives a second, different operand."""
    if dtype == BOOL:
        values = np.array([True, False, True, False])
        return values[::-1].copy() if flip else values
    if dtype.kind in "iu":
        raw = [-7, -1, 0, 3, 5, 100] if dtype.kind == "i" else [0, 1, 7, 200, 255, 3]
        if flip:
            raw = [2, -3, 4, 5, -2, 0] if dtype.kind == "i" else [3, 0, 2, 9, 1, 255]
        return np.array(raw).astype(dtype)
    values = np.array(_DOMAINS[domain], np.float64)
    if flip:
        values = values[::-1] * 0.75 + 0.125
    if dtype.kind == "c":
        return (values + 1j * values[::-1]).astype(dtype)
    return values.astype(dtype)


def check(oracle: Oracle, program: Program, *args: Any, tol: float | None = None) -> None:
    """Same printed jaxpr as JAX; same numbers within the Oracle's or the given tolerance."""
    if tol is None:
        oracle.check(program, *args)
        return
    ours = oracle.check(program, *args, numerics=False)
    got = eval_jaxpr(ours.jaxpr, ours.consts, *args)
    want = oracle.jax.tree_util.tree_leaves(oracle.jit(program(oracle.jnp, oracle.lax))(*args))
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(
            np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=tol, atol=tol
        )


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both libraries reject the program with the same exception type and message."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


def lax_fn(name: str) -> Program:
    return lambda jnp, lax: getattr(lax, name)


# Unary primitives: name, dtypes, domain of the sample values.
UNARY: list[tuple[str, tuple[np.dtype, ...], str]] = [
    ("neg", (F32, BF16, I32, I8, U8), "any"),
    ("sign", (F32, F16, I32, U8), "any"),
    ("floor", FLOATS, "any"),
    ("ceil", FLOATS, "any"),
    ("is_finite", (F32, BF16), "any"),
    ("exp", (F32, BF16, F16), "any"),
    ("exp2", (F32, BF16), "any"),
    ("expm1", (F32, F16), "any"),
    ("log", (F32, BF16, F16), "pos"),
    ("log1p", (F32, BF16), "pos"),
    ("tanh", (F32, BF16), "any"),
    ("logistic", (F32, F16), "any"),
    ("sin", (F32, BF16, F16), "any"),
    ("cos", (F32, BF16), "any"),
    ("tan", (F32, F16), "unit"),
    ("asin", (F32, BF16), "unit"),
    ("acos", (F32, F16), "unit"),
    ("atan", (F32, BF16), "any"),
    ("sinh", (F32, F16), "any"),
    ("cosh", (F32, BF16), "any"),
    ("asinh", (F32, BF16), "any"),
    ("acosh", (F32, F16), "ge1"),
    ("atanh", (F32, BF16), "unit"),
    ("sqrt", (F32, BF16, F16), "pos"),
    ("rsqrt", (F32, BF16), "pos"),
    ("cbrt", (F32, F16), "any"),
    ("abs", (F32, BF16, I32, I8), "any"),
    ("bitwise_not", (I32, I8, U8, BOOL), "any"),
    ("square", (F32, BF16, I32, I8, U8), "any"),
    ("reciprocal", (F32, F16), "pos"),
    ("erf", (F32, BF16), "any"),
    ("erfc", (F32, F16), "any"),
    ("erf_inv", (F32, BF16), "unit"),
    ("lgamma", (F32, BF16), "gamma"),
    ("digamma", (F32, F16), "gamma"),
    ("population_count", INTS, "any"),
    ("clz", INTS, "any"),
    ("exp", (C64,), "any"),
    ("sqrt", (C64,), "pos"),
    ("abs", (C64,), "any"),
    ("real", (C64,), "any"),
    ("imag", (C64,), "any"),
    ("conj", (C64, F32), "any"),
]


def dtype_kind(case_id: str) -> str:
    """A sweep's kind for a `name-dtype` case: the primitive and the class of its dtype. The
    half-precision floats share the reference evaluator's float32 path, the integer widths
    NumPy's own: one of each class per primitive runs by default (`sweep`)."""
    name, dtype = case_id.rsplit("-", 1)
    kind = np.dtype(getattr(ml_dtypes, dtype, dtype))
    if kind.kind == "f":
        return f"{name}-{'half' if kind.itemsize <= 2 else kind.name}"
    return f"{name}-{kind.kind}"


UNARY_CASES = sweep(
    [(name, dtype, domain) for name, dtypes, domain in UNARY for dtype in dtypes],
    [f"{name}-{dtype.name}" for name, dtypes, _ in UNARY for dtype in dtypes],
    kind=dtype_kind,
)


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "dtype", "domain"), UNARY_CASES)
def test_unary_primitive_matches_jax(
    oracle: Oracle, name: str, dtype: np.dtype, domain: str
) -> None:
    check(oracle, lax_fn(name), sample(dtype, domain), tol=LOOSE.get((name, dtype)))


BINARY: list[tuple[str, tuple[np.dtype, ...]]] = [
    ("add", (F32, BF16, I32, I8, U8, C64)),
    ("sub", (F32, F16, I32, U8)),
    ("mul", (F32, BF16, I32, I8, C64)),
    ("div", (F32, BF16, I32, I8, U8)),
    ("rem", (F32, F16, I32, I8, U8)),
    ("pow", (F32, BF16)),
    ("max", (F32, BF16, I32, U8, BOOL)),
    ("min", (F32, F16, I8, BOOL)),
    ("atan2", (F32, BF16)),
    ("nextafter", (F32, BF16, F16)),
    ("bitwise_and", (I32, U8, BOOL)),
    ("bitwise_or", (I8, BOOL)),
    ("bitwise_xor", (I32, BOOL)),
    ("eq", (F32, I32, BOOL, C64)),
    ("ne", (BF16, U8)),
    ("lt", (F32, I8, BOOL)),
    ("le", (F16, U8)),
    ("gt", (BF16, I32)),
    ("ge", (F32, BOOL)),
    ("shift_left", INTS),
    ("shift_right_logical", INTS),
    ("shift_right_arithmetic", INTS),
    ("complex", (F32,)),
]
BINARY_CASES = sweep(
    [(name, dtype) for name, dtypes in BINARY for dtype in dtypes],
    [f"{name}-{dtype.name}" for name, dtypes in BINARY for dtype in dtypes],
    kind=dtype_kind,
)


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "dtype"), BINARY_CASES)
def test_binary_primitive_matches_jax(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    domain = "pos" if name == "pow" else "any"
    check(oracle, lax_fn(name), sample(dtype, domain), sample(dtype, domain, flip=True))


WIDE: dict[str, tuple[float, float]] = {
    "exp2": (-60.0, 60.0),
    "tanh": (-10.0, 10.0),
    "erf": (-4.0, 4.0),
    "erfc": (-2.0, 9.0),
    "erf_inv": (-1.0, 1.0),
    "lgamma": (-9.5, 30.0),
    "digamma": (-9.5, 30.0),
    "atanh": (-1.0, 1.0),
    "cbrt": (-1e3, 1e3),
}


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [F32, BF16])
@pytest.mark.parametrize("name", sorted(WIDE))
def test_float_primitives_over_wide_ranges(oracle: Oracle, name: str, dtype: np.dtype) -> None:
    low, high = WIDE[name]
    x = np.random.default_rng(7).uniform(low, high, size=200).astype(dtype)
    check(oracle, lax_fn(name), x, tol=LOOSE.get((name, dtype), 2e-6 if dtype == F32 else 2e-2))


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["lgamma", "digamma", "erf_inv", "erf", "erfc", "is_finite"])
def test_special_values_match_jax(oracle: Oracle, name: str) -> None:
    x = np.array([0.0, -1.0, -2.0, 1.0, 2.0, np.inf, -np.inf, np.nan, -0.0, 1e-30, 1.0 - 2**-24])
    check(oracle, lax_fn(name), x.astype(np.float32), tol=1e-5)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [I32, I8, U8])
def test_integer_division_by_zero_and_overflow_follow_xla(oracle: Oracle, dtype: np.dtype) -> None:
    info = np.iinfo(dtype)
    x = np.array([info.min, info.min, 7, -7, 0, info.max], np.int64).astype(dtype)
    y = np.array([-1, 0, 0, 2, 0, -1], np.int64).astype(dtype)
    check(oracle, lambda jnp, lax: lambda a, b: (lax.div(a, b), lax.rem(a, b)), x, y)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", INTS)
def test_shifts_past_the_width_follow_xla(oracle: Oracle, dtype: np.dtype) -> None:
    bits = dtype.itemsize * 8
    x = np.array([-3, 5, -128, 1, 7, -1], np.int64).astype(dtype)
    y = np.array([bits, bits + 3, bits - 1, -1, 0, 1], np.int64).astype(dtype)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda a, b: (
            lax.shift_left(a, b),
            lax.shift_right_logical(a, b),
            lax.shift_right_arithmetic(a, b),
        )

    check(oracle, program, x, y)


@pytest.mark.oracle
@pytest.mark.parametrize("method", [0, 1])
@pytest.mark.parametrize("dtype", FLOATS)
def test_round_prints_its_rounding_method(oracle: Oracle, method: int, dtype: np.dtype) -> None:
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, 3.7]).astype(dtype)
    check(oracle, lambda jnp, lax: lambda a: lax.round(a, lax.RoundingMethod(method)), x)


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("y", "dtype"),
    [(0, F32), (1, F32), (2, F32), (3, BF16), (5, F32), (-1, F32), (-2, F16), (7, I32), (3, U8)],
)
def test_integer_pow_prints_y(oracle: Oracle, y: int, dtype: np.dtype) -> None:
    x = sample(dtype, "pos" if dtype.kind == "f" else "any")
    check(oracle, lambda jnp, lax: lambda a: lax.integer_pow(a, y), x)


@pytest.mark.oracle
@pytest.mark.parametrize(("exponent_bits", "mantissa_bits"), [(5, 10), (8, 7), (4, 3), (8, 23)])
def test_reduce_precision_rounds_and_flushes_like_xla(
    oracle: Oracle, exponent_bits: int, mantissa_bits: int
) -> None:
    x = np.array(
        [1e-6, 1e5, 65520.0, 1.0009765625, np.pi, np.nan, -np.inf, 1e-40, -0.0, 3e38, 0.1],
        np.float32,
    )
    check(
        oracle, lambda jnp, lax: lambda a: lax.reduce_precision(a, exponent_bits, mantissa_bits), x
    )


@pytest.mark.oracle
def test_accuracy_param_prints_only_when_set(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda a: lax.exp(a, accuracy=lax.AccuracyMode.HIGHEST) + lax.sin(a)

    check(oracle, program, sample(F32))


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("out_dtype", "x_dtype"), [(np.float32, F32), (np.dtype(np.float32), BF16), (None, I32)]
)
def test_mul_prints_out_dtype_as_given(oracle: Oracle, out_dtype: Any, x_dtype: np.dtype) -> None:
    x, y = sample(x_dtype), sample(x_dtype, flip=True)
    check(oracle, lambda jnp, lax: lambda a, b: lax.mul(a, b, out_dtype=out_dtype), x, y)


SELECT_CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("select", lambda jnp, lax: lax.select, (sample(F32) > 0, sample(F32), sample(F32, flip=True))),
    (
        "select-scalar-pred",
        lambda jnp, lax: lambda p, a, b: lax.select(p, a, b),
        (np.bool_(True), sample(I32), sample(I32, flip=True)),
    ),
    (
        "select_n-int",
        lambda jnp, lax: lax.select_n,
        (np.array([0, 2, 1, 3, -1, 1, 0], np.int32), *(sample(F32) * k for k in (1, 2, 3))),
    ),
    ("select_n-one-case", lambda jnp, lax: lax.select_n, (np.int32(0), sample(BF16))),
    (
        "select_n-bool-weak",
        lambda jnp, lax: lambda p: lax.select_n(p, 1.0, 2.0),
        (np.bool_(False),),
    ),
    ("clamp-scalars", lambda jnp, lax: lambda a: lax.clamp(-1.0, a, 1.0), (sample(F32),)),
    ("clamp-int", lambda jnp, lax: lambda a: lax.clamp(0, a, 5), (sample(I32),)),
    (
        "clamp-arrays",
        lambda jnp, lax: lax.clamp,
        (sample(U8, flip=True), sample(U8), np.full(6, 100, np.uint8)),
    ),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("program", "args"), [pytest.param(p, a, id=name) for name, p, a in SELECT_CASES]
)
def test_select_and_clamp_match_jax(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    check(oracle, program, *args)


BITCAST_CASES: list[tuple[Any, Any]] = [
    (sample(F32), np.int32),
    (sample(F32), np.uint8),
    (sample(BF16), np.int16),
    (sample(I8)[:4].reshape(1, 4), np.float32),
    (np.arange(12, dtype=np.uint8).reshape(3, 2, 2), ml_dtypes.bfloat16),
    (np.float32(1.5), np.int32),
    (sample(BOOL), np.bool_),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("x", "new_dtype"),
    [pytest.param(x, d, id=f"{x.dtype}-{np.dtype(d).name}") for x, d in BITCAST_CASES],
)
def test_bitcast_convert_type_matches_jax(oracle: Oracle, x: np.ndarray, new_dtype: Any) -> None:
    check(oracle, lambda jnp, lax: lambda a: lax.bitcast_convert_type(a, new_dtype), x)


SHAPE_CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("weak-float", lambda jnp, lax: lambda a: lax.add(a, 1.5), (sample(F32),)),
    ("weak-int", lambda jnp, lax: lambda a: lax.mul(3, a), (sample(I32),)),
    ("weak-both", lambda jnp, lax: lambda a: lax.sub(a, 2.0), (1.0,)),
    ("weak-compare", lambda jnp, lax: lambda a: lax.lt(a, 0), (7,)),
    ("size-1-broadcast", lambda jnp, lax: lax.max, (np.ones((2, 3), F32), np.zeros((1, 3), F32))),
    ("rank-0-broadcast", lambda jnp, lax: lax.atan2, (np.float32(0.5), np.ones((2, 3), F32))),
    ("empty", lambda jnp, lax: lax.add, (np.zeros((0, 3), F32), np.zeros((0, 3), F32))),
    ("empty-unary", lambda jnp, lax: lax.exp, (np.zeros((2, 0), BF16),)),
    ("zero-d", lambda jnp, lax: lax.div, (np.int32(-7), np.int32(2))),
    ("chain", lambda jnp, lax: lambda a: lax.sqrt(lax.abs(lax.sin(a))) * 2.0, (sample(F32),)),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("program", "args"), [pytest.param(p, a, id=name) for name, p, a in SHAPE_CASES]
)
def test_weak_scalars_and_shapes_match_jax(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    check(oracle, program, *args)


ERROR_CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("mixed-dtypes", lambda jnp, lax: lax.add, (sample(F32), sample(I32)[:1])),
    ("weak-int-with-bf16", lambda jnp, lax: lambda a: lax.add(a, 1), (sample(BF16),)),
    ("max-tip", lambda jnp, lax: lax.max, (sample(BOOL), sample(I32)[:4])),
    ("ranks", lambda jnp, lax: lax.mul, (np.ones((2, 3), F32), np.ones(3, F32))),
    ("shapes", lambda jnp, lax: lax.sub, (np.ones(3, F32), np.ones(4, F32))),
    ("unary-dtype", lambda jnp, lax: lax.exp, (sample(I32),)),
    ("abs-unsigned", lambda jnp, lax: lax.abs, (sample(U8),)),
    ("binary-dtype", lambda jnp, lax: lax.add, (sample(BOOL), sample(BOOL))),
    ("shift-float", lambda jnp, lax: lax.shift_left, (sample(F32), sample(F32))),
    ("pow-int-base", lambda jnp, lax: lax.pow, (sample(I32), sample(I32))),
    ("pow-mismatch", lambda jnp, lax: lax.pow, (sample(F32), sample(F16))),
    ("complex-f16", lambda jnp, lax: lax.complex, (sample(F16), sample(F16))),
    ("conj-int", lambda jnp, lax: lax.conj, (sample(I32),)),
    ("integer-pow-negative", lambda jnp, lax: lambda a: lax.integer_pow(a, -2), (sample(I32),)),
    ("round-int", lambda jnp, lax: lax.round, (sample(I32),)),
    ("select-which-float", lambda jnp, lax: lax.select_n, (sample(F32),) * 3),
    (
        "select-bool-3-cases",
        lambda jnp, lax: lax.select_n,
        (sample(BOOL)[:1], *(sample(F32)[:1],) * 3),
    ),
    ("select-case-shapes", lambda jnp, lax: lax.select_n, (np.True_, sample(F32), sample(F32)[:3])),
    ("select-which-shape", lambda jnp, lax: lax.select_n, (sample(BOOL), sample(F32), sample(F32))),
    ("select-dtypes", lambda jnp, lax: lax.select, (np.True_, sample(F32), sample(I32)[:1])),
    ("clamp-shape", lambda jnp, lax: lambda a: lax.clamp(np.zeros(2, F32), a, 1.0), (sample(F32),)),
    ("clamp-dtypes", lambda jnp, lax: lambda a: lax.clamp(0, a, 1.0), (sample(F32),)),
    (
        "bitcast-complex",
        lambda jnp, lax: lambda a: lax.bitcast_convert_type(a, np.float32),
        (sample(C64),),
    ),
    (
        "bitcast-widen",
        lambda jnp, lax: lambda a: lax.bitcast_convert_type(a, np.int32),
        (np.zeros((3, 2), I8),),
    ),
    (
        "reduce-precision-bits",
        lambda jnp, lax: lambda a: lax.reduce_precision(a, 0, 3),
        (sample(F32),),
    ),
    (
        "reduce-precision-int",
        lambda jnp, lax: lambda a: lax.reduce_precision(a, 2, 1),
        (sample(I32),),
    ),
]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("program", "args"), [pytest.param(p, a, id=name) for name, p, a in ERROR_CASES]
)
def test_bad_input_raises_jax_error(
    oracle: Oracle, program: Program, args: tuple[Any, ...]
) -> None:
    message = same_error(oracle, program, *args)
    assert message


def test_select_n_without_cases_names_the_function() -> None:
    with pytest.raises(ValueError, match=r"select_n\(\) must have at least one case"):
        lamina_core.lax.select_n(np.True_)


def test_eager_primitives_compute_with_numpy() -> None:
    out = lamina_core.lax.integer_pow(np.array([1.0, 2.0, 3.0], np.float32), 3)
    np.testing.assert_array_equal(out, [1.0, 8.0, 27.0])
    assert np.asarray(out).dtype == F32
    assert lamina_core.lax.clz(np.uint8(1)) == 7


_BROADCASTABLE = st.sampled_from(
    [((3,), (3,)), ((2, 3), (1, 3)), ((2, 1), (1, 4)), ((), (2, 2)), ((0, 2), (1, 2)), ((1,), ())]
)


@pytest.mark.oracle
@settings(derandomize=True, max_examples=12, deadline=None)
@given(
    shapes=_BROADCASTABLE,
    dtype=st.sampled_from([F32, BF16, I32, I8, U8]),
    name=st.sampled_from(["add", "mul", "max", "min", "eq", "lt", "sub"]),
    seed=st.integers(0, 2**16),
)
def test_binary_primitives_over_shapes_and_dtypes(
    oracle: Oracle,
    shapes: tuple[tuple[int, ...], tuple[int, ...]],
    dtype: np.dtype,
    name: str,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    low = 0 if dtype.kind == "u" else -5
    x, y = (rng.integers(low, 6, size=s).astype(dtype) for s in shapes)
    check(oracle, lax_fn(name), x, y)


@pytest.mark.oracle
@settings(derandomize=True, max_examples=10, deadline=None)
@given(
    shape=st.sampled_from([(), (4,), (2, 3), (0,)]),
    dtype=st.sampled_from([F32, BF16, F16]),
    name=st.sampled_from(["exp", "tanh", "logistic", "sin", "floor", "sign", "atan", "erf"]),
    seed=st.integers(0, 2**16),
)
def test_unary_float_primitives_over_shapes_and_dtypes(
    oracle: Oracle, shape: tuple[int, ...], dtype: np.dtype, name: str, seed: int
) -> None:
    x = np.random.default_rng(seed).uniform(-3, 3, size=shape).astype(dtype)
    check(oracle, lax_fn(name), x)
