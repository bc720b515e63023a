"""Findings of `tools.fuzz` (and of the reliability issue's hostile-user pass), each fixed to
JAX's behaviour and pinned here against JAX: values, error classes and messages."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import lamina
import lamina.numpy as ljnp

INTS = np.arange(3, dtype=np.int32)
X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        out = fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "value", (np.asarray(out), getattr(out, "weak_type", None))


def _same(lamina_fn: Callable[[], Any], jax_fn: Callable[[], Any]) -> None:
    got, want = _outcome(lamina_fn), _outcome(jax_fn)
    assert got[0] == want[0], (got, want)
    if got[0] == "value":
        (g, g_weak), (w, w_weak) = got[1], want[1]
        assert g.dtype == w.dtype and g_weak == w_weak
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.power(INTS, 2**70),
        lambda m: m.power(INTS + 2, 2**70 + 1),
        lambda m: m.zeros_like(2**70),
        lambda m: m.ones_like(2**70),
        lambda m: m.empty_like(2**70),
        lambda m: m.full_like(2**70, 3),
        lambda m: m.zeros_like(2**70, dtype=np.float32),
        lambda m: m.add(INTS, 2**70),  # the value is converted: OverflowError on both
        lambda m: m.power([1, 2], 2),  # a list is no array: TypeError on both
    ],
)
def test_python_ints_past_int64_are_scalars(call: Callable[[Any], Any]) -> None:
    _same(lambda: call(ljnp), lambda: call(jjnp))


def test_an_integer_power_past_int64_stages_as_jax() -> None:
    want = jax.make_jaxpr(lambda x: jjnp.power(x, 2**70))(INTS)
    assert str(lamina.make_jaxpr(lambda x: ljnp.power(x, 2**70))(INTS)) == str(want)
    np.testing.assert_array_equal(lamina.jit(lambda x: ljnp.power(x, 2**70))(INTS), [0, 1, 0])


@pytest.mark.parametrize(
    "convert",
    [
        bool,
        int,
        float,
        complex,
        operator.index,
    ],
)
@pytest.mark.parametrize(
    "value",
    [
        np.arange(3, dtype=np.int32),
        np.zeros(0, np.float32),
        np.ones((1, 1), np.float32),
        np.ones((1,), np.int32),
        np.array(True),
        np.array(3.7, np.float32),
        np.array(5, np.int32),
    ],
    ids=["vector", "empty", "one_by_one", "one_int", "bool", "float", "int"],
)
def test_array_conversions_to_python_values(convert: Callable[[Any], Any], value: Any) -> None:
    _same(lambda: convert(ljnp.asarray(value)), lambda: convert(jjnp.asarray(value)))


def test_lax_slice_with_the_wrong_number_of_start_indices_is_the_shape_rule_s_type_error() -> None:
    # JAX's class depends on the path: eagerly a ValueError from a zip of mismatched lengths
    # ("safe_map() argument 2 is shorter than argument 1"), traced its shape rule's TypeError.
    # Lamina raises the shape rule's error on both paths, with its message.
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="safe_map"):
        jax.lax.slice(x, (0,), (1,))
    with pytest.raises(TypeError) as traced:
        jax.make_jaxpr(lambda x: jax.lax.slice(x, (0,), (1,)))(x)
    with pytest.raises(TypeError) as eager:
        lamina.lax.slice(x, (0,), (1,))
    assert str(eager.value) == str(traced.value)
    with pytest.raises(TypeError, match="start_indices must have length equal"):
        lamina.make_jaxpr(lambda x: lamina.lax.slice(x, (0,), (1,)))(x)


@pytest.mark.parametrize(
    ("shift", "axis"),
    [(1.0, None), (2.7, 0), (-5, None), (np.array([1, -2]), (0, 1)), (7, 1), (np.int32(-9), 0)],
)
def test_roll_with_a_shift_that_is_not_a_static_int(shift: Any, axis: Any) -> None:
    _same(lambda: ljnp.roll(X, shift, axis), lambda: jjnp.roll(X, shift, axis))
    jitted = lamina.jit(lambda x, s: ljnp.roll(x, s, axis))(X, shift)
    np.testing.assert_array_equal(jitted, jjnp.roll(X, shift, axis))


@pytest.mark.parametrize(
    ("shape", "shift", "axis"),
    [
        ((4,), 1, None),
        ((2, 3), np.array([1, 2], np.int32), (0, 1)),
        ((2, 3), 1, None),
        ((0, 3), 2, 0),
        ((2, 3), np.int32(-4), 1),
    ],
)
def test_roll_with_a_traced_shift_prints_as_jax(shape: Any, shift: Any, axis: Any) -> None:
    x = np.ones(shape, np.float32)
    want = jax.make_jaxpr(lambda x, s: jjnp.roll(x, s, axis))(x, shift)
    assert str(lamina.make_jaxpr(lambda x, s: ljnp.roll(x, s, axis))(x, shift)) == str(want)


def test_roll_with_a_float_shift_prints_as_jax() -> None:
    want = jax.make_jaxpr(lambda x: jjnp.roll(x, 1.0))(np.ones(4, np.float32))
    assert str(lamina.make_jaxpr(lambda x: ljnp.roll(x, 1.0))(np.ones(4, np.float32))) == str(want)


def test_roll_of_a_traced_shift_batches_and_differentiates() -> None:
    shifts = np.array([0, 1, 5, -2], np.int32)
    got = lamina.vmap(lambda s: ljnp.roll(X[0], s))(shifts)
    np.testing.assert_array_equal(got, np.stack([np.roll(X[0], int(s)) for s in shifts]))
    w = np.arange(4.0, dtype=np.float32)
    grad = lamina.grad(lambda x, s: (ljnp.roll(x, s) * w).sum())(X[0], 1)
    np.testing.assert_array_equal(grad, np.roll(w, -1))
