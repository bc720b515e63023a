"""Oracle tests for `dot_general` (lax.dot_general, lax.dot, lax.batch_matmul) and the sorting
primitives (lax.sort, lax.sort_key_val, lax.top_k).

Programs print JAX 0.10.2's jaxprs byte for byte (dimension numbers as lists, None params
hidden) and compute JAX's numbers; misuse raises JAX's error text.
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

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
I32 = np.dtype(np.int32)
I8 = np.dtype(np.int8)
U8 = np.dtype(np.uint8)
BOOL = np.dtype(bool)
C64 = np.dtype(np.complex64)


def data(shape: tuple[int, ...], dtype: np.dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -4, 5, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def distinct(shape: tuple[int, ...], dtype: np.dtype, seed: int = 0) -> np.ndarray:
    """A permutation of 0..n-1 (shifted), so that sorts have no ties."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) - n // 2).reshape(shape).astype(dtype)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


# dot_general ---------------------------------------------------------------------------------

DIMS_CASES: list[tuple[Any, Any, Any]] = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3), (4, 3), (((1,), (1,)), ((), ()))),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,)))),
    ((2, 5, 3), (3, 4, 5), (((2,), (0,)), ((1,), (2,)))),
    ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ()))),
    ((2,), (3,), (((), ()), ((), ()))),
    ((), (2, 3), (((), ()), ((), ()))),
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),
    ((2, 0), (0, 2), (((1,), (0,)), ((), ()))),
    ([2, 3], [3], ([[1], [0]], [[], []])),
]


@pytest.mark.oracle
@pytest.mark.parametrize(("lhs", "rhs", "dims"), DIMS_CASES, ids=str)
@pytest.mark.parametrize("dtype", [F32, BF16, I32], ids=str)
def test_dot_general_matches_jax(
    oracle: Oracle, lhs: tuple[int, ...], rhs: tuple[int, ...], dims: Any, dtype: np.dtype
) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x, y: lax.dot_general(x, y, dims)

    oracle.check(program, data(tuple(lhs), dtype), data(tuple(rhs), dtype, seed=1))


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("lhs_dtype", "rhs_dtype"),
    [(BF16, F32), (I32, F32), (I8, I32), (U8, I8), (BOOL, U8), (F16, BF16), (F32, C64)],
    ids=str,
)
def test_dot_general_of_mixed_dtypes_takes_the_wider_like_jax(
    oracle: Oracle, lhs_dtype: np.dtype, rhs_dtype: np.dtype
) -> None:
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.dot(x, y), data((2, 3), lhs_dtype), data((3,), rhs_dtype)
    )


@pytest.mark.oracle
@pytest.mark.parametrize(
    "precision",
    ["highest", "float32", "bfloat16", "default", "high", ("highest", "default")],
    ids=str,
)
def test_dot_precision_names_print_like_jax(oracle: Oracle, precision: Any) -> None:
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.dot(x, y, precision=precision),
        data((2, 3), F32),
        data((3, 2), F32),
    )


@pytest.mark.oracle
def test_dot_precision_enums_print_like_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        precision = (lax.Precision.HIGH, lax.Precision.DEFAULT)
        return lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision)

    oracle.check(program, data((2, 3), F32), data((3, 2), F32))
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.dot(x, y, precision=lax.Precision.HIGHEST),
        data((3,), F32),
        data((3,), F32),
    )


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
@pytest.mark.parametrize(
    ("dtype", "preferred"),
    [(F32, F32), (BF16, F32), (I8, I32), (BOOL, F32), (I32, np.int64), (F32, np.float64)],
    ids=str,
)
def test_dot_preferred_element_type_matches_jax(
    oracle: Oracle, dtype: np.dtype, preferred: Any
) -> None:
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.dot(x, y, preferred_element_type=preferred),
        data((2, 3), dtype),
        data((3, 4), dtype, seed=1),
    )


@pytest.mark.oracle
def test_dot_general_of_weak_operands_is_weak(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda x, y: lax.dot_general(x, y, (((), ()), ((), ()))) * 2.0

    oracle.check(program, 1.5, 2.0)
    oracle.check(program, 1.5, np.float32(2.0))


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("lhs", "rhs"), [((5, 2, 3), (5, 3, 4)), ((2, 2, 3), (2, 3, 1)), ((2, 3), (3, 2))], ids=str
)
def test_batch_matmul_matches_jax(
    oracle: Oracle, lhs: tuple[int, ...], rhs: tuple[int, ...]
) -> None:
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.batch_matmul(x, y), data(lhs, F32), data(rhs, F32)
    )


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("lhs", "rhs", "dims"),
    [
        ((2, 3), (4, 4), (((1,), (0,)), ((), ()))),
        ((2, 3), (4, 4), (((1,), (0,)), ((0,), ()))),
        ((2, 3), (4, 4), (((2,), (0,)), ((), ()))),
        ((2, 3), (4, 4), (((1,), (5,)), ((), ()))),
        ((2, 3), (4, 4), (((1, 1), (0, 1)), ((), ()))),
        ((2, 3), (4, 4), (((0,), (0,)), ((0, 0), (1, 1)))),
        ((2, 3), (4, 4), (((1,), (0,)), ((1,), (1,)))),
        ((2, 3), (4, 4), (((0,), (1,)), ((1,), (1,)))),
        ((2, 3), (4, 4), (((1,), (0,)), ((0,), (1,)))),
    ],
    ids=[
        "contracting sizes",
        "batch counts",
        "lhs rank",
        "rhs rank",
        "repeated contracting",
        "repeated batch",
        "batch overlaps contracting",
        "rhs batch overlaps contracting",
        "batch sizes",
    ],
)
def test_dot_general_shape_errors_match_jax(
    oracle: Oracle, lhs: tuple[int, ...], rhs: tuple[int, ...], dims: Any
) -> None:
    program: Program = lambda jnp, lax: lambda x, y: lax.dot_general(x, y, dims)  # noqa: E731
    message = same_error(oracle, program, data(lhs, F32), data(rhs, F32))
    assert message.startswith("dot_general requires")


@pytest.mark.oracle
def test_dot_general_dtype_errors_match_jax(oracle: Oracle) -> None:
    message = same_error(
        oracle,
        lambda jnp, lax: lambda x, y: lax.dot(x, y),
        np.ones(3, ml_dtypes.float8_e5m2),
        np.ones(3, ml_dtypes.float8_e5m2fnuz),
    )
    assert message == "lax.dot_general argument type error: float8_e5m2, float8_e5m2fnuz"
    same_error(
        oracle,
        lambda jnp, lax: lambda x, y: lax.dot(x, y, preferred_element_type=jnp.int8),
        data((3,), I32),
        data((3,), I32),
    )


@pytest.mark.oracle
@pytest.mark.parametrize("shapes", [((2, 3), (4, 4)), ((2, 3, 3), (3, 4))], ids=str)
def test_dot_without_dimension_numbers_errors_like_jax(oracle: Oracle, shapes: Any) -> None:
    lhs, rhs = shapes
    same_error(oracle, lambda jnp, lax: lambda x, y: lax.dot(x, y), data(lhs, F32), data(rhs, F32))


@pytest.mark.oracle
def test_bad_precision_errors_like_jax(oracle: Oracle) -> None:
    same_error(
        oracle,
        lambda jnp, lax: lambda x, y: lax.dot(x, y, precision="fast"),
        data((3,), F32),
        data((3,), F32),
    )


@pytest.mark.oracle
@settings(derandomize=True, max_examples=20, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    lhs_free=st.lists(st.integers(0, 3), max_size=2),
    rhs_free=st.lists(st.integers(1, 3), max_size=2),
    contract=st.lists(st.integers(1, 3), max_size=2),
    dtype=st.sampled_from([F32, I32, BF16]),
    seed=st.integers(0, 100),
)
def test_random_dot_generals_match_jax(
    oracle: Oracle,
    batch: list[int],
    lhs_free: list[int],
    rhs_free: list[int],
    contract: list[int],
    dtype: np.dtype,
    seed: int,
) -> None:
    # Lay the dimensions of each side out in a shuffled order, then name them by position.
    rng = np.random.default_rng(seed)
    kinds = [("b", i) for i in range(len(batch))] + [("c", i) for i in range(len(contract))]
    lhs_dims = kinds + [("l", i) for i in range(len(lhs_free))]
    rhs_dims = kinds + [("r", i) for i in range(len(rhs_free))]
    lhs_dims = [lhs_dims[i] for i in rng.permutation(len(lhs_dims))]
    rhs_dims = [rhs_dims[i] for i in rng.permutation(len(rhs_dims))]
    size = {"b": batch, "c": contract, "l": lhs_free, "r": rhs_free}
    lhs_shape = tuple(size[k][i] for k, i in lhs_dims)
    rhs_shape = tuple(size[k][i] for k, i in rhs_dims)
    dims = (
        (
            tuple(lhs_dims.index(("c", i)) for i in range(len(contract))),
            tuple(rhs_dims.index(("c", i)) for i in range(len(contract))),
        ),
        (
            tuple(lhs_dims.index(("b", i)) for i in range(len(batch))),
            tuple(rhs_dims.index(("b", i)) for i in range(len(batch))),
        ),
    )
    oracle.check(
        lambda jnp, lax: lambda x, y: lax.dot_general(x, y, dims),
        data(lhs_shape, dtype, seed),
        data(rhs_shape, dtype, seed + 1),
    )


# sort and top_k ------------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [F32, BF16, I32, U8, BOOL], ids=str)
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_matches_jax(oracle: Oracle, dtype: np.dtype, dimension: int) -> None:
    x = data((3, 4), dtype, seed=4)
    oracle.check(lambda jnp, lax: lambda x: lax.sort(x, dimension), x)


@pytest.mark.oracle
def test_sort_orders_nan_and_signed_zeros_like_jax(oracle: Oracle) -> None:
    x = np.array([np.nan, 1.0, -0.0, -np.inf, 0.0, np.inf, -2.0], np.float32)
    keys = np.array([3, 3, 1, 1, 2, 2, 0], np.int32)
    oracle.check(lambda jnp, lax: lambda x: lax.sort(x), x)
    # -0.0 and 0.0 are equal keys: the stable sort keeps the values' original order.
    oracle.check(lambda jnp, lax: lambda x, k: lax.sort_key_val(x, k), x, keys)


@pytest.mark.oracle
def test_sort_of_complex_is_lexicographic(oracle: Oracle) -> None:
    x = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j], np.complex64)
    oracle.check(lambda jnp, lax: lambda x: lax.sort(x), x)


@pytest.mark.oracle
@pytest.mark.parametrize("num_keys", [1, 2, 3])
@pytest.mark.parametrize("is_stable", [True, False])
def test_multi_operand_sort_matches_jax(oracle: Oracle, num_keys: int, is_stable: bool) -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, (2, 6)).astype(np.int32)
    b = rng.integers(0, 2, (2, 6)).astype(np.float32)
    # The last key breaks every tie, so unstable sorts have one answer.
    c = distinct((2, 6), F32, seed=6) if is_stable or num_keys == 3 else distinct((2, 6), F32)
    if not is_stable and num_keys < 3:
        a = distinct((2, 6), I32, seed=7)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda a, b, c: lax.sort((a, b, c), 1, is_stable, num_keys)

    oracle.check(program, a, b, c)


@pytest.mark.oracle
def test_sort_key_val_and_weak_operands_match_jax(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def f(k: Any, v: Any) -> Any:
            keys, values = lax.sort_key_val(k, lax.broadcast_in_dim(v, (2, 3), ()), 0)
            return keys, values * 2.0

        return f

    oracle.check(program, data((2, 3), F32), 1.5)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [F32, BF16, I32, BOOL], ids=str)
@pytest.mark.parametrize(("k", "axis"), [(1, -1), (2, 1), (3, 0), (0, -1)], ids=str)
def test_top_k_matches_jax(oracle: Oracle, dtype: np.dtype, k: int, axis: int) -> None:
    x = data((3, 4), dtype, seed=8)
    oracle.check(lambda jnp, lax: lambda x: lax.top_k(x, k, axis=axis), x)


@pytest.mark.oracle
def test_top_k_puts_nan_first_and_lower_index_first_on_ties(oracle: Oracle) -> None:
    x = np.array([[1.0, 5.0, np.nan, 5.0, -np.inf, 2.0]], np.float32)
    oracle.check(lambda jnp, lax: lambda x: lax.top_k(x, 4), x)


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("program", "x"),
    [
        (lambda jnp, lax: lambda x: lax.top_k(x, 5), data((3, 4), F32)),
        (lambda jnp, lax: lambda x: lax.top_k(x, -1), data((3, 4), F32)),
        (lambda jnp, lax: lambda x: lax.top_k(x, 1), data((2,), C64)),
        (lambda jnp, lax: lambda x: lax.sort(x, 2), data((3, 4), F32)),
        (lambda jnp, lax: lambda x: lax.sort((x, lax.reduce_sum(x, (0,))), 0), data((3, 4), F32)),
        (lambda jnp, lax: lambda x: lax.sort((x, x), 0, num_keys=3), data((3, 4), F32)),
        (lambda jnp, lax: lambda x: lax.sort(x, 0, num_keys=2), data((3, 4), F32)),
    ],
    ids=["k too big", "negative k", "complex", "axis", "shapes", "num_keys", "one operand keys"],
)
def test_sorting_errors_match_jax(oracle: Oracle, program: Program, x: np.ndarray) -> None:
    same_error(oracle, program, x)
