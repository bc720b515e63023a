"""Regression tests of issue 21 (reliability), core level: malformed calls end in a clear
error, never in a process abort or a silent wrong result, with JAX 0.10.2's error where JAX
answers one.

Sizes XLA cannot represent are refused by the abstract value itself (JAX aborts in XLA, so
there is no JAX error to compare with); the rest is compared with JAX's exception class and
text.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as llax
from lamina_core import numpy as lnp
from lamina_core.ir._avals import ShapedArray
from lamina_core.testing import Oracle

Call = Callable[[ModuleType, ModuleType], Any]
"""A call made with `(jnp, lax)` of JAX or of Lamina."""


def _error(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("no error raised")


def _jax_and_ours(oracle: Oracle, call: Call) -> tuple[BaseException, BaseException]:
    theirs = _error(lambda: call(oracle.jnp, oracle.lax))
    ours = _error(lambda: call(lnp, llax))
    return theirs, ours


def same_error(oracle: Oracle, call: Call) -> BaseException:
    """Both raise, exceptions of the same name with the same text."""
    theirs, ours = _jax_and_ours(oracle, call)
    assert type(ours).__name__ == type(theirs).__name__, repr(ours)
    assert str(ours) == str(theirs)
    return ours


# --- 1. sizes XLA cannot represent (JAX aborts the process) ---------------------------------

HUGE: dict[str, Callable[[], Any]] = {
    "zeros_1<<62": lambda: lnp.zeros((1 << 62,)),
    "zeros_1<<32_x_1<<32": lambda: lnp.zeros((1 << 32, 1 << 32)),
    "broadcast_in_dim_1<<40_x_1<<40": lambda: llax.broadcast_in_dim(
        np.float32(1), (1 << 40, 1 << 40), ()
    ),
    # Fits in int64 elements, not in int64 bytes (XLA aborts on it too).
    "zeros_1<<61_f32": lambda: lnp.zeros((1 << 61,)),
    "iota_1<<62": lambda: llax.iota(np.int32, 1 << 62),
    "eye_1<<40": lambda: lnp.eye(1 << 40),
    "ones_traced": lambda: lc.make_jaxpr(lambda: lnp.ones((1 << 62, 4)))(),
    "arange_2**70": lambda: lnp.arange(2**70),
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_sizes_beyond_int64_are_refused_with_the_shape_named(name: str) -> None:
    with pytest.raises(ValueError, match=r"shape \(\d+") as info:
        HUGE[name]()
    message = str(info.value)
    assert "2**63 - 1" in message


def test_the_size_error_names_shape_dtype_and_bytes() -> None:
    with pytest.raises(ValueError) as info:
        lnp.zeros((1 << 62,))
    assert str(info.value) == (
        "shape (4611686018427387904,) of dtype float32 is too large: 4611686018427387904 "
        "elements of 4 bytes make 18446744073709551616 bytes, more than an array may hold "
        "(2**63 - 1 elements or bytes)"
    )


def test_large_but_representable_sizes_still_trace() -> None:
    # 2**60 float32 is 2**62 bytes: XLA represents it (allocating it is another matter).
    assert ShapedArray((1 << 60,), np.dtype(np.float32)).size == 1 << 60
    # Empty arrays may have huge dimensions (JAX runs `jnp.zeros((0, 1<<62, 1<<62))`).
    assert ShapedArray((0, 1 << 62, 1 << 62), np.dtype(np.float32)).size == 0
    with pytest.raises(ValueError, match="more than an array dimension may have"):
        ShapedArray((0, 1 << 64), np.dtype(np.float32))


def test_negative_dimensions_are_refused_by_the_abstract_value() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        ShapedArray((-1, -2), np.dtype(np.float32))  # the product alone would look fine
    with pytest.raises(ValueError, match="non-negative"):
        ShapedArray((0, -1), np.dtype(np.float32))


@pytest.mark.oracle
def test_arange_of_1_shl_40_stages_as_jax(oracle: Oracle) -> None:
    # JAX's error is XLA's out-of-memory when it runs (see lamina-runtime's tests); the
    # program is JAX's: an int32 iota of 2**40 elements.
    theirs = oracle.jax.make_jaxpr(lambda: oracle.jnp.arange(1 << 40))()
    ours = lc.make_jaxpr(lambda: lnp.arange(1 << 40))()
    assert str(ours) == str(theirs)


# --- 2. silent wrong results ----------------------------------------------------------------


@pytest.mark.oracle
def test_full_with_an_array_fill_value_is_a_type_error(oracle: Oracle) -> None:
    err = same_error(oracle, lambda jnp, lax: lax.full((2, 3), np.ones(3, np.float32)))
    assert isinstance(err, TypeError)
    assert str(err) == "full must be called with scalar fill_value, got fill_value.shape (3,)."


OVERFLOWING: dict[str, Call] = {
    "array_-1_uint8": lambda jnp, lax: jnp.array(-1, dtype=jnp.uint8),
    "array_300_int8": lambda jnp, lax: jnp.array(300, dtype=jnp.int8),
    "asarray_-1_uint8": lambda jnp, lax: jnp.asarray(-1, dtype=jnp.uint8),
    "asarray_300_int8": lambda jnp, lax: jnp.asarray(300, dtype=jnp.int8),
    "array_-1.0_uint8": lambda jnp, lax: jnp.array(-1.0, dtype=jnp.uint8),
    "array_list_300_int8": lambda jnp, lax: jnp.array([1, 300], dtype=jnp.int8),
    "array_2**40_int64_no_x64": lambda jnp, lax: jnp.array(2**40, dtype=jnp.int64),
    "array_2**70": lambda jnp, lax: jnp.array(2**70),
    "asarray_2**70": lambda jnp, lax: jnp.asarray(2**70),
    "array_2**31": lambda jnp, lax: jnp.array(2**31),
    "array_list_2**70": lambda jnp, lax: jnp.array([1, 2**70]),
    "convert_2**70_int32": lambda jnp, lax: lax.convert_element_type(2**70, jnp.int32),
}


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")
@pytest.mark.parametrize("name", sorted(OVERFLOWING))
def test_python_ints_out_of_range_raise_overflow_error_as_jax(oracle: Oracle, name: str) -> None:
    err = same_error(oracle, OVERFLOWING[name])
    assert isinstance(err, OverflowError)


WRAPPING: dict[str, Call] = {
    # Explicit conversions wrap around in JAX (and NumPy's astype): so they do here.
    "convert_300_int8": lambda jnp, lax: lax.convert_element_type(300, jnp.int8),
    "convert_-1_uint8": lambda jnp, lax: lax.convert_element_type(-1, jnp.uint8),
    "full_300_int8": lambda jnp, lax: jnp.full((2,), 300, dtype=jnp.int8),
    "array_np_int64_300_int8": lambda jnp, lax: jnp.array(np.int64(300), dtype=jnp.int8),
    # A Python int beyond int32 converts from its exact value, not from a wrapped int32.
    "convert_2**40_float32": lambda jnp, lax: lax.convert_element_type(2**40, jnp.float32),
    "convert_2**70_float32": lambda jnp, lax: lax.convert_element_type(2**70, jnp.float32),
    "full_2**40_float32": lambda jnp, lax: lax.full((2,), 2**40, jnp.float32),
    "jnp_full_2**40_float32": lambda jnp, lax: jnp.full((2,), 2**40, jnp.float32),
    "array_2**40_float32": lambda jnp, lax: jnp.array(2**40, dtype=jnp.float32),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(WRAPPING))
def test_explicit_conversions_give_jax_values(oracle: Oracle, name: str) -> None:
    theirs = WRAPPING[name](oracle.jnp, oracle.lax)
    ours = WRAPPING[name](lnp, llax)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_a_weak_fill_out_of_range_is_an_error_not_a_wrapped_value() -> None:
    # JAX returns [5, 5] here (2**32 + 5 wrapped to int32); Lamina refuses, naming the value.
    with pytest.raises(OverflowError, match=r"Python int 4294967301 too large to convert to int32"):
        llax.full((2,), 2**32 + 5)


# --- 3. jit settings --------------------------------------------------------------------------


def _one(x: Any) -> Any:
    return x


JIT_SETTINGS: dict[str, dict[str, Any]] = {
    "static_argnums_5": {"static_argnums": 5},
    "static_argnames_nonexistent": {"static_argnames": "nonexistent"},
    "donate_argnums_5": {"donate_argnums": 5},
    "donate_argnames_zz": {"donate_argnames": "zz"},
    "static_and_donated_by_position": {"static_argnums": 0, "donate_argnums": 0},
    "static_and_donated_by_name": {"static_argnames": "x", "donate_argnames": "x"},
    "static_by_position_donated_by_name": {"static_argnums": 0, "donate_argnames": "x"},
    "static_argnums_-5": {"static_argnums": -5},
    "static_argnums_str": {"static_argnums": "a"},
    "static_argnames_int": {"static_argnames": [1]},
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(JIT_SETTINGS))
def test_invalid_jit_settings_are_refused_at_jit_time_as_jax(oracle: Oracle, name: str) -> None:
    options = JIT_SETTINGS[name]
    theirs = _error(lambda: oracle.jax.jit(_one, **options))
    ours = _error(lambda: lc.jit(_one, **options))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


@pytest.mark.oracle
def test_positional_only_argnames_are_refused_as_jax(oracle: Oracle) -> None:
    def f(x: Any, /, y: Any) -> Any:
        return x + y

    theirs = _error(lambda: oracle.jax.jit(f, static_argnames="x"))
    ours = _error(lambda: lc.jit(f, static_argnames="x"))
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def test_valid_settings_still_work() -> None:
    def f(x: Any, *args: Any, **kwargs: Any) -> Any:
        return x

    # With *args any position is allowed and with **kwargs any name, as in JAX.
    lc.jit(f, static_argnums=7, static_argnames="anything")
    g = lc.jit(lambda x, n: x * n, static_argnums=-1)
    assert float(g(np.float32(2), 3)) == 6.0


def test_static_and_donated_by_position_only_is_refused() -> None:
    def f(x: Any, /) -> Any:
        return x

    # JAX compares names only, and a positional-only argument has none to compare.
    with pytest.raises(ValueError, match="static_argnums and donate_argnums cannot intersect"):
        lc.jit(f, static_argnums=0, donate_argnums=0)


# --- 5. unhelpful errors ----------------------------------------------------------------------

NEGATIVE: dict[str, Call] = {
    "zeros_-1": lambda jnp, lax: jnp.zeros(-1),
    "full_2_-1": lambda jnp, lax: lax.full((2, -1), 0.0),
    "repeat_-1": lambda jnp, lax: jnp.repeat(jnp.ones(3), -1),
    "ones_-2_-3": lambda jnp, lax: jnp.ones((-2, -3)),
    "broadcast_in_dim_-1": lambda jnp, lax: lax.broadcast_in_dim(np.float32(1), (-1,), ()),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_negative_dimensions_give_jax_error(oracle: Oracle, name: str) -> None:
    err = same_error(oracle, NEGATIVE[name])
    assert "must have every element be nonnegative" in str(err)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "value", [{"a": 1}, [{"a": 1}], "abc", object()], ids=["dict", "list_of_dict", "str", "obj"]
)
def test_array_of_a_non_numeric_value_gives_jax_error(oracle: Oracle, value: Any) -> None:
    theirs, ours = _jax_and_ours(oracle, lambda jnp, lax: jnp.array(value))
    assert type(ours) is type(theirs) is TypeError
    assert str(ours) == str(theirs)
    assert "is not a valid JAX array type" in str(ours)


@pytest.mark.oracle
def test_item_of_a_traced_value_is_a_concretization_error(oracle: Oracle) -> None:
    def f(x: Any) -> Any:
        return x.item()

    theirs = _error(lambda: oracle.jax.jit(f)(1.0))
    ours = _error(lambda: lc.jit(f)(1.0))
    assert type(ours).__name__ == "ConcretizationTypeError"
    assert isinstance(ours, lc.ConcretizationTypeError)
    assert str(ours) == str(theirs)


def test_item_of_a_concrete_primal_under_grad_is_its_value() -> None:
    assert float(lc.grad(lambda x: x * x.item())(np.float32(3))) == 3.0


def test_top_k_returns_a_list_as_jax() -> None:
    jax = pytest.importorskip("jax")
    x = np.arange(6, dtype=np.float32)
    ours = llax.top_k(x, 2)
    theirs = jax.lax.top_k(x, 2)
    assert type(ours) is type(theirs) is list
    np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1]))
