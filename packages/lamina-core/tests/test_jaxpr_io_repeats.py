"""Repeated equations in printed jaxprs: `parse` works each distinct one out once
(`_jaxpr_seen`); every repeat must still read as its own equation and meet every check."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import numpy as jnp
from lamina_core.ir import JaxprSyntaxError, elided_constants, parse
from lamina_core.testing import reference_evaluator

X = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)


def _round_trip(closed: lc.ir.ClosedJaxpr) -> lc.ir.ClosedJaxpr:
    text = str(closed)
    parsed = parse(text, elided_constants(closed))
    assert str(parsed) == text
    return parsed


def test_repeats_with_inline_jaxprs_keep_their_own_bodies() -> None:
    # Same primitive, name and types; bodies differ, so the params text does not make them.
    def f(x: Any) -> Any:
        a = lc.jit(lambda v: jnp.sin(v))(x)
        b = lc.jit(lambda v: jnp.cos(v))(a)
        return lc.jit(lambda v: jnp.sin(v))(b)

    closed = lc.make_jaxpr(f)(X)
    parsed = _round_trip(closed)
    bodies = [e.params["jaxpr"] for e in parsed.jaxpr.eqns]
    assert len({id(b) for b in bodies}) == 3
    assert [b.jaxpr.eqns[0].primitive.name for b in bodies] == ["sin", "cos", "sin"]
    (got,) = reference_evaluator(parsed, (X,))
    np.testing.assert_allclose(got, np.sin(np.cos(np.sin(X))), rtol=1e-6)


def test_repeats_of_one_inline_jaxpr_text_take_each_its_own_constants() -> None:
    # The same params text twice; each body's constvar takes the next value of `consts`.
    body = "{ lambda c:f32[3]; d:f32[3]. let e:f32[3] = add c d in (e,) }"
    text = (
        "{ lambda ; a:f32[3]. let\n"
        f"    b:f32[3] = jit[name=f jaxpr={body}] a\n"
        f"    f:f32[3] = jit[name=f jaxpr={body}] b\n"
        "  in (f,) }"
    )
    ones, twos = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    parsed = parse(text, [ones, twos])
    consts = [e.params["jaxpr"].consts for e in parsed.jaxpr.eqns]
    assert [c[0][0] for c in consts] == [1.0, 2.0]
    (got,) = reference_evaluator(parsed, (np.zeros(3, np.float32),))
    np.testing.assert_allclose(got, 3.0)


def test_repeats_with_elided_constants_take_each_its_own_value() -> None:
    def f(x: Any) -> Any:
        for k in range(3):
            x = x + np.full(3, k, np.float32)
        return x

    closed = lc.make_jaxpr(f)(X)
    parsed = _round_trip(closed)
    # The same broadcast thrice, of the same types: one check, three constants.
    eqns = [e for e in parsed.jaxpr.eqns if e.primitive.name == "broadcast_in_dim"]
    assert [np.asarray(e.invars[0].val)[0] for e in eqns] == [0.0, 1.0, 2.0]  # type: ignore[union-attr]
    (got,) = reference_evaluator(parsed, (X,))
    np.testing.assert_allclose(got, X + 3.0)


def test_repeats_get_params_of_their_own() -> None:
    closed = lc.make_jaxpr(lambda x: jnp.sum(x, axis=0) + jnp.sum(x * 2.0, axis=0))(X)
    sums = [e for e in _round_trip(closed).jaxpr.eqns if e.primitive.name == "reduce_sum"]
    assert len(sums) == 2
    assert sums[0].params == sums[1].params
    assert sums[0].params is not sums[1].params


def test_a_repeat_with_other_types_is_checked_again() -> None:
    text = (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "    c:f32[2] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b, c) }"
    )
    with pytest.raises(JaxprSyntaxError) as info:
        parse(text)
    assert info.value.line == 3
    assert "type mismatch" in str(info.value)


def test_a_repeat_of_a_bad_equation_is_still_an_error() -> None:
    # The first of two equal equations fails its check: the reader stops there.
    text = (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "    c:f32[2,3] = reduce_sum[axes=(0,) out_sharding=None] a\n"
        "  in (b, c) }"
    )
    with pytest.raises(JaxprSyntaxError) as info:
        parse(text)
    assert info.value.line == 2


def test_repeats_in_nested_jaxprs_read_in_their_own_jaxpr() -> None:
    def f(x: Any) -> Any:
        y = jnp.sum(x, axis=0)
        return lc.jit(lambda v: jnp.sum(v, axis=0) * 2.0)(x) + y

    closed = lc.make_jaxpr(f)(X)
    parsed = _round_trip(closed)
    (got,) = reference_evaluator(parsed, (X,))
    np.testing.assert_allclose(got, X.sum(0) * 3.0, rtol=1e-6)
