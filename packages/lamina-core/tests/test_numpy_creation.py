"""Oracle tests for jax.numpy array creation: array, asarray, zeros, ones, full, empty, the
*_like forms, arange, linspace, eye and identity.

Each program prints JAX 0.10.2's jaxpr byte for byte and computes JAX's numbers, with default
and explicit dtypes (f32, bf16, i32, bool), 0-d and empty shapes and weakly typed inputs
(`linspace` included, which JAX and Lamina stage in a nested `jit`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
from lamina_core import numpy as lnp
from lamina_core.testing import Oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
I32 = np.dtype(np.int32)
BOOL = np.dtype(bool)


def same_error(oracle: Oracle, program: Program, *args: Any) -> str:
    """Both reject the program with an exception of the same name (JAX's own classes, such as
    ConcretizationTypeError, have Lamina twins); Lamina's message holds JAX's first line."""
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    with pytest.raises(Exception) as ours:
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    assert type(ours.value).__name__ == type(theirs.value).__name__, ours.value
    assert str(theirs.value).splitlines()[0] in str(ours.value)
    return str(ours.value)


def _n(fn: Callable[[ModuleType], Callable[..., Any]]) -> Program:
    """A program that only needs `jnp`."""
    return lambda jnp, lax: fn(jnp)


# --- filled arrays --------------------------------------------------------------------------

SHAPES: list[Any] = [3, (2, 3), (), (0, 3)]
DTYPE_ARGS: list[Any] = [None, "float32", BF16, I32, bool, int]


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", DTYPE_ARGS, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_filled_array_matches_jax(oracle: Oracle, name: str, shape: Any, dtype: Any) -> None:
    oracle.check(_n(lambda jnp: lambda: getattr(jnp, name)(shape, dtype)))


FULL: dict[str, tuple[Program, list[Any]]] = {
    "full_scalar": (_n(lambda jnp: lambda: jnp.full((2, 3), 7)), []),
    "full_scalar_dtype": (_n(lambda jnp: lambda: jnp.full((2,), 1.5, jnp.bfloat16)), []),
    "full_bool": (_n(lambda jnp: lambda: jnp.full(3, True)), []),
    "full_traced_fill": (_n(lambda jnp: lambda s: jnp.full((2, 3), s)), [np.float32(2)]),
    "full_weak_fill": (_n(lambda jnp: lambda s: jnp.full((2, 3), s)), [2.0]),
    "full_traced_fill_dtype": (_n(lambda jnp: lambda s: jnp.full((2,), s, jnp.int32)), [1.5]),
    "full_array_fill": (
        _n(lambda jnp: lambda x: jnp.full((4, 2, 3), x)),
        [np.ones((2, 3), np.int32)],
    ),
    "full_0d_shape": (_n(lambda jnp: lambda s: jnp.full((), s)), [np.float32(2)]),
    "full_constant_array_fill": (_n(lambda jnp: lambda: jnp.full((2, 3), np.arange(3.0))), []),
    "zeros_like": (_n(lambda jnp: lambda x: jnp.zeros_like(x)), [np.ones((2, 3), np.float32)]),
    "zeros_like_dtype": (_n(lambda jnp: lambda x: jnp.zeros_like(x, jnp.int32)), [np.ones((2, 3))]),
    "zeros_like_weak": (
        _n(lambda jnp: lambda s, x: jnp.zeros_like(s) + x),
        [1.0, np.ones(2, BF16)],
    ),
    "ones_like": (_n(lambda jnp: lambda x: jnp.ones_like(x)), [np.ones((2, 3), BF16)]),
    "ones_like_weak_int": (_n(lambda jnp: lambda s: jnp.ones_like(s)), [2]),
    "ones_like_shape": (
        _n(lambda jnp: lambda x: jnp.ones_like(x, shape=(4,))),
        [np.ones((2, 3), BOOL)],
    ),
    "empty_like": (_n(lambda jnp: lambda x: jnp.empty_like(x)), [np.ones((2, 3), np.int32)]),
    "empty_like_shape_dtype": (
        _n(lambda jnp: lambda x: jnp.empty_like(x, jnp.float32, (2,))),
        [np.ones((2, 3), np.int32)],
    ),
    "full_like": (_n(lambda jnp: lambda x: jnp.full_like(x, 3)), [np.ones((2, 3), np.float32)]),
    "full_like_weak": (_n(lambda jnp: lambda s: jnp.full_like(s, 3)), [2.0]),
    "full_like_array_fill": (
        _n(lambda jnp: lambda x: jnp.full_like(x, np.arange(3.0))),
        [np.ones((2, 3), np.float32)],
    ),
    "full_like_shape": (_n(lambda jnp: lambda x: jnp.full_like(x, 2.0, shape=(4,))), [np.ones(2)]),
    "full_like_traced_fill": (
        _n(lambda jnp: lambda x, s: jnp.full_like(x, s)),
        [np.ones((2, 3), np.int32), np.float32(2.7)],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", FULL)
def test_full_and_like_forms_match_jax(oracle: Oracle, name: str) -> None:
    program, args = FULL[name]
    oracle.check(program, *args)


# --- array and asarray ---------------------------------------------------------------------

ARRAY: dict[str, tuple[Program, list[Any]]] = {
    "asarray_tracer": (_n(lambda jnp: lambda x: jnp.asarray(x)), [np.ones((2, 3), np.float32)]),
    "asarray_dtype": (
        _n(lambda jnp: lambda x: jnp.asarray(x, jnp.bfloat16)),
        [np.ones(3, np.float32)],
    ),
    "asarray_weak_to_strong": (_n(lambda jnp: lambda s: jnp.asarray(s, jnp.float32)), [1.0]),
    "asarray_list_constant": (_n(lambda jnp: lambda: jnp.asarray([1, 2, 3])), []),
    "array_constant": (_n(lambda jnp: lambda: jnp.array([[1.0, 2.0]], dtype=jnp.int32)), []),
    "array_list_of_tracers": (
        _n(lambda jnp: lambda x: jnp.array([x, x])),
        [np.ones((2, 3), np.float32)],
    ),
    "array_list_mixed": (_n(lambda jnp: lambda s: jnp.array([1.0, s, 2])), [np.float32(3)]),
    "array_list_weak": (_n(lambda jnp: lambda s: jnp.array([1, s])), [2]),
    "array_list_dtype": (
        _n(lambda jnp: lambda s: jnp.array([s, s], jnp.bfloat16)),
        [np.float32(3)],
    ),
    "array_nested": (_n(lambda jnp: lambda s: jnp.array([[s, 1.0], [2.0, s]])), [np.float32(3)]),
    "array_ndmin": (
        _n(lambda jnp: lambda x: jnp.array(x, ndmin=3, copy=False)),
        [np.ones(3, BOOL)],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ARRAY)
def test_array_and_asarray_match_jax(oracle: Oracle, name: str) -> None:
    program, args = ARRAY[name]
    oracle.check(program, *args)


@pytest.mark.oracle
def test_wide_list_of_tracers_is_a_tree_of_concatenates_as_in_jax(oracle: Oracle) -> None:
    oracle.check(_n(lambda jnp: lambda s: jnp.array([s] * 20)), np.float32(1))


# --- arange -------------------------------------------------------------------------------------

ARANGE: dict[str, Callable[[ModuleType], Any]] = {
    "stop": lambda jnp: jnp.arange(5),
    "start_stop": lambda jnp: jnp.arange(1, 5),
    "zero_start": lambda jnp: jnp.arange(0, 5),
    "step": lambda jnp: jnp.arange(2, 7, 2),
    "negative_step": lambda jnp: jnp.arange(5, 1, -1),
    "float_step": lambda jnp: jnp.arange(0, 1, 0.1),
    "float_stop": lambda jnp: jnp.arange(5.5),
    "float_start": lambda jnp: jnp.arange(0.5, 3),
    "numpy_scalar": lambda jnp: jnp.arange(np.float32(3.0)),
    "dtype": lambda jnp: jnp.arange(5, dtype=jnp.float32),
    "dtype_string": lambda jnp: jnp.arange(24.0, dtype="float32"),
    "int16": lambda jnp: jnp.arange(3, dtype=jnp.int16),
    "uint8_step": lambda jnp: jnp.arange(1, 9, 2, dtype=jnp.uint8),
    "bfloat16_counts_in_float32": lambda jnp: jnp.arange(0, 2, 0.5, dtype=jnp.bfloat16),
    "bfloat16_no_step": lambda jnp: jnp.arange(1, 4, dtype=jnp.bfloat16),
    "empty": lambda jnp: jnp.arange(-3),
    "empty_with_step": lambda jnp: jnp.arange(3, 1, 1),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ARANGE)
def test_arange_matches_jax(oracle: Oracle, name: str) -> None:
    oracle.check(_n(lambda jnp: lambda: ARANGE[name](jnp)))


# --- eye and identity ---------------------------------------------------------------------------

EYE: dict[str, tuple[Program, list[Any]]] = {
    "square": (_n(lambda jnp: lambda: jnp.eye(3)), []),
    "rectangular_offset": (_n(lambda jnp: lambda: jnp.eye(3, 4, k=1, dtype=jnp.int32)), []),
    "negative_offset": (_n(lambda jnp: lambda: jnp.eye(2, 3, -1)), []),
    "bool": (_n(lambda jnp: lambda: jnp.eye(2, dtype=bool)), []),
    "bfloat16": (_n(lambda jnp: lambda: jnp.eye(2, dtype=jnp.bfloat16)), []),
    "empty": (_n(lambda jnp: lambda: jnp.eye(0)), []),
    "huge_offset_is_clipped": (_n(lambda jnp: lambda: jnp.eye(2, k=2**40)), []),
    "traced_offset": (_n(lambda jnp: lambda k: jnp.eye(3, k=k)), [np.int32(-1)]),
    "identity": (_n(lambda jnp: lambda: jnp.identity(3)), []),
    "identity_dtype": (_n(lambda jnp: lambda: jnp.identity(2, jnp.int32)), []),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", EYE)
def test_eye_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = EYE[name]
    oracle.check(program, *args)


# --- linspace -------------------------------------------------------------------------------

LINSPACE: dict[str, tuple[Program, list[Any]]] = {
    "default": (_n(lambda jnp: lambda: jnp.linspace(0, 1, 5)), []),
    "no_endpoint": (_n(lambda jnp: lambda: jnp.linspace(0, 1, 5, endpoint=False)), []),
    "one": (_n(lambda jnp: lambda: jnp.linspace(0.0, 1.0, 1)), []),
    "none": (_n(lambda jnp: lambda: jnp.linspace(0.0, 1.0, 0)), []),
    "int": (_n(lambda jnp: lambda: jnp.linspace(0, 10, 5, dtype=jnp.int32)), []),
    "bfloat16": (_n(lambda jnp: lambda: jnp.linspace(0, 1, 5, dtype=jnp.bfloat16)), []),
    "retstep": (_n(lambda jnp: lambda: jnp.linspace(0.0, 1.0, 3, retstep=True)), []),
    "traced": (_n(lambda jnp: lambda s: jnp.linspace(s, 2 * s, 3)), [np.float32(1.5)]),
    "array_bounds": (
        _n(lambda jnp: lambda a, b: jnp.linspace(a, b, 4, axis=-1)),
        [np.arange(3, dtype=np.float32), np.float32(10)],
    ),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", LINSPACE)
def test_linspace_matches_jax(oracle: Oracle, name: str) -> None:
    program, args = LINSPACE[name]
    oracle.check(program, *args)


# --- errors ------------------------------------------------------------------------------------

ERRORS: dict[str, Program] = {
    "arange_traced_stop": _n(lambda jnp: lambda x: jnp.arange(x)),
    "arange_traced_start": _n(lambda jnp: lambda x: jnp.arange(x, 4, 1)),
    "arange_not_scalar": _n(lambda jnp: lambda x: jnp.arange(np.arange(3))),
    "arange_complex": _n(lambda jnp: lambda x: jnp.arange(1j)),
    "arange_bool_dtype": _n(lambda jnp: lambda x: jnp.arange(3, dtype=bool)),
    "eye_negative_size": _n(lambda jnp: lambda x: jnp.eye(-1)),
    "eye_float_offset": _n(lambda jnp: lambda x: jnp.eye(3, k=1.0)),
    "zeros_shape_not_a_tuple": _n(lambda jnp: lambda x: jnp.zeros(2, 3)),
    "ones_float_shape": _n(lambda jnp: lambda x: jnp.ones((2.0,))),
    "full_list_fill": _n(lambda jnp: lambda x: jnp.full((2,), [1.0, 2.0])),
    "full_like_list": _n(lambda jnp: lambda x: jnp.full_like([1.0], 2.0)),
    "linspace_negative_count": _n(lambda jnp: lambda x: jnp.linspace(0.0, 1.0, -1)),
    "array_of_none": _n(lambda jnp: lambda x: jnp.array([1.0, None])),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ERRORS)
def test_bad_input_raises_jax_error(oracle: Oracle, name: str) -> None:
    same_error(oracle, ERRORS[name], np.float32(3))


@pytest.mark.oracle
def test_traced_arange_bound_names_the_argument(oracle: Oracle) -> None:
    message = same_error(oracle, ERRORS["arange_traced_start"], np.float32(3))
    assert "It arose in the jnp.arange argument 'start'" in message


# --- eager evaluation ---------------------------------------------------------------------------


def test_creation_evaluates_eagerly_to_numpy() -> None:
    # NumPy arrays with core alone; device arrays when lamina-runtime installed XLA execution.
    out = lnp.arange(16, dtype=np.float32)
    assert np.asarray(out).dtype == np.float32
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32))
    np.testing.assert_array_equal(lnp.arange(24.0, dtype="float32").reshape(8, 3)[1], [3, 4, 5])
    np.testing.assert_array_equal(lnp.eye(2, 3, 1), np.eye(2, 3, 1, dtype=np.float32))
    np.testing.assert_allclose(lnp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert lnp.zeros((2, 0), bool).shape == (2, 0)
