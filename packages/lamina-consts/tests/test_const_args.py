"""`jaxpr_const_args`, the policy, hoist/inline round trips, memoization and the report."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina_consts
import lamina_core as lc
from lamina_core import numpy as jnp

f32 = np.float32


def trace(fun: Any, *args: Any) -> lc.ClosedJaxpr:
    closed: lc.ClosedJaxpr = lc.make_jaxpr(fun)(*args)
    return closed


def test_one_array_used_twice_is_one_const_arg() -> None:
    c = np.arange(16, dtype=f32)
    plan = lamina_consts.jaxpr_const_args(trace(lambda x: x + c + c, np.ones(16, f32)))
    assert len(plan) == 1
    assert plan.values[0] is c
    assert plan.index(c) == 0


def test_const_args_are_in_first_use_order() -> None:
    a, b = np.arange(16, dtype=f32), np.full(16, 42.0, f32)
    plan = lamina_consts.jaxpr_const_args(trace(lambda x: x + b + a + b, np.ones(16, f32)))
    assert [v is b for v in plan.values] == [True, False]
    assert [str(aval) for aval in plan.avals] == ["float32[16]", "float32[16]"]


def test_small_and_scalar_constants_stay_inline() -> None:
    small, exactly = np.arange(4, dtype=f32), np.arange(8, dtype=f32)  # 16 and 32 bytes
    assert len(lamina_consts.jaxpr_const_args(trace(lambda x: x + 1.0, np.ones(4, f32)))) == 0
    assert len(lamina_consts.jaxpr_const_args(trace(lambda x: x + small, np.ones(4, f32)))) == 0
    assert len(lamina_consts.jaxpr_const_args(trace(lambda x: x + exactly, np.ones(8, f32)))) == 0
    nine = np.arange(9, dtype=f32)  # 36 bytes: hoisted
    assert len(lamina_consts.jaxpr_const_args(trace(lambda x: x + nine, np.ones(9, f32)))) == 1


def test_the_size_threshold_is_configurable() -> None:
    small = np.arange(4, dtype=f32)
    closed = trace(lambda x: x + small, np.ones(4, f32))
    with lc.config(jax_embedded_constants_max_bytes=0):
        assert len(lamina_consts.jaxpr_const_args(closed)) == 1
    assert len(lamina_consts.jaxpr_const_args(closed)) == 0


def test_is_literalable_accepts_scalars_and_arrays_only() -> None:
    assert lamina_consts.is_literalable(1.0)
    assert lamina_consts.is_literalable(np.ones(3))
    assert not lamina_consts.is_literalable("text")
    assert not lamina_consts.is_literalable(object())


def test_memoization_returns_the_same_plan() -> None:
    closed = trace(lambda x: x + np.arange(16, dtype=f32), np.ones(16, f32))
    assert lamina_consts.jaxpr_const_args(closed) is lamina_consts.jaxpr_const_args(closed.jaxpr)


def test_memoization_keeps_neither_jaxpr_nor_constant_alive() -> None:
    def traced_with_constant() -> tuple[lc.ClosedJaxpr, weakref.ref[np.ndarray]]:
        c = np.arange(16, dtype=f32)
        return trace(lambda x: x + c, np.ones(16, f32)), weakref.ref(c)

    closed, const_ref = traced_with_constant()
    lamina_consts.jaxpr_const_args(closed)
    jaxpr_ref = weakref.ref(closed.jaxpr)
    del closed
    gc.collect()
    assert jaxpr_ref() is None
    assert const_ref() is None


def test_hoist_then_inline_round_trips() -> None:
    c = np.arange(16, dtype=f32)
    closed = trace(lambda x: (x * c + c, c), np.ones(16, f32))
    hoisted = lamina_consts.hoist(closed)
    assert len(hoisted.consts) == 1
    assert hoisted.consts[0] is c
    assert str(lamina_consts.inline(hoisted)) == str(closed.jaxpr)


def test_capture_report_lists_shape_bytes_uses_and_source() -> None:
    c = np.arange(32, dtype=f32).reshape(4, 8)

    def f(x: Any) -> Any:
        return x * c + c

    report = lamina_consts.captured_constants(trace(f, np.ones((4, 8), f32)))
    assert len(report) == 1
    (entry,) = report
    assert (entry.shape, entry.dtype, entry.nbytes, entry.uses) == ((4, 8), np.dtype(f32), 128, 2)
    assert entry.source.startswith(f"{__file__}:{f.__code__.co_firstlineno + 1}:")
    # the function by its qualified name, as JAX's source info names it
    assert entry.source.endswith(
        "(test_capture_report_lists_shape_bytes_uses_and_source.<locals>.f)"
    )
    assert "1 captured constants, 128 bytes" in lamina_consts.format_report(report)


def test_large_captures_warn() -> None:
    c = np.arange(64, dtype=f32)
    closed = trace(lambda x: x + c, np.ones(64, f32))
    with (
        lc.config(jax_captured_constants_warn_bytes=100),
        pytest.warns(lamina_consts.CapturedConstantsWarning, match="captures 256 bytes"),
    ):
        lamina_consts.warn_large_captures(closed, "f")


programs = st.lists(st.sampled_from(["add", "mul", "sub", "sin"]), min_size=1, max_size=6)
constant_choices = st.lists(st.integers(0, 2), min_size=1, max_size=6)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(programs, constant_choices)
def test_inline_of_hoist_evaluates_equal(ops: list[str], picks: list[int]) -> None:
    consts = [np.linspace(1.0, 2.0, 16).astype(f32), np.arange(16, dtype=f32), np.float32(0.5)]

    def f(x: Any) -> Any:
        for op, pick in zip(ops, picks * len(ops), strict=False):
            c = consts[pick]
            x = {"add": x + c, "mul": x * c, "sub": c - x, "sin": jnp.sin(x)}[op]
        return x

    x = np.linspace(0.0, 1.0, 16).astype(f32)
    closed = trace(f, x)
    (expected,) = lc.eval_jaxpr(closed, (), x)
    hoisted = lamina_consts.hoist(closed)
    (via_hoisted,) = lc.eval_jaxpr(hoisted, (), x)
    (round_trip,) = lc.eval_jaxpr(lamina_consts.inline(hoisted), (), x)
    np.testing.assert_array_equal(via_hoisted, expected)
    np.testing.assert_array_equal(round_trip, expected)
    plan = lamina_consts.jaxpr_const_args(closed)
    assert len({id(v) for v in plan.values}) == len(plan.values)
    assert all(np.ndim(v) > 0 for v in plan.values)
    lc.check_jaxpr(hoisted)
