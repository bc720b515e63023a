"""Refs on lamina-core alone (the NumPy reference evaluator): the type, printing, eager reads
and writes, the discharge pass, and random Ref programs against a NumPy simulation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina_core as lc
import lamina_core.numpy as jnp
from lamina_core.trace._evaluate import eval_jaxpr
from lamina_refs import (
    AbstractRef,
    Ref,
    discharge_state,
    empty_ref,
    free_ref,
    freeze,
    has_refs,
    new_ref,
    ref_addupdate,
    ref_get,
    ref_swap,
)


def test_type_prints_as_jax() -> None:
    r = new_ref(jnp.zeros(3))
    assert str(lc.typeof(r)) == "Ref{float32[3]}"
    assert lc.typeof(r).str_short(True) == "Ref{f32[3]}"
    assert str(lc.typeof(new_ref(0))) == "Ref{int32[]}"
    assert isinstance(r, Ref) and not isinstance(np.zeros(3), Ref)
    assert r.shape == (3,) and r.ndim == 1 and r.dtype == np.float32


def test_eager_reads_and_writes() -> None:
    r = new_ref(jnp.arange(12.0).reshape(3, 4))
    np.testing.assert_array_equal(ref_get(r, 1), [4.0, 5.0, 6.0, 7.0])
    old = ref_swap(r, (0, slice(None)), jnp.full(4, -1.0))
    np.testing.assert_array_equal(old, [0.0, 1.0, 2.0, 3.0])
    ref_addupdate(r, (1, 2), np.float32(10.0))
    r[2, 1:3] = jnp.zeros(2)
    np.testing.assert_array_equal(r[...], [[-1, -1, -1, -1], [4, 5, 16, 7], [8, 0, 0, 11]])


def test_new_ref_copies_its_initial_value() -> None:
    x = jnp.zeros(3)
    r = new_ref(x)
    r[0] = 5.0
    np.testing.assert_array_equal(x, [0.0, 0.0, 0.0])


def test_freeze_invalidates() -> None:
    r = new_ref(jnp.arange(3.0))
    np.testing.assert_array_equal(freeze(r), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="was frozen or freed"):
        r[...]


def test_math_on_a_ref_names_the_unpacking() -> None:
    r = new_ref(1.0)
    with pytest.raises(ValueError, match=r"did you forget to unpack \(\[\.\.\.\]\) the ref\?"):
        lc.lax.sin(r)
    with pytest.raises(ValueError, match="Attempting to pass a Ref Ref\\{float32\\[\\]\\}"):
        lc.make_jaxpr(lambda: lc.lax.sin(r))()


def test_indexing_errors_name_the_problem() -> None:
    r = new_ref(jnp.zeros((2, 3)))
    with pytest.raises(IndexError, match="too many indices"):
        r[0, 0, 0]
    with pytest.raises(TypeError, match="boolean"):
        r[True]
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        r[0] = jnp.zeros(2)
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        r[0] = jnp.zeros(3, jnp.int8).astype(jnp.float16)


_JAXPR = """\
{ lambda ; a:f32[]. let
    b:Ref{f32[]} = new_ref[kind=None memory_space=None] 0.0:f32[]
    c:f32[] = sin a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    b[...] <- d
    e:f32[] <- b[...]
  in (e,) }"""


def test_printed_jaxpr_is_jaxs() -> None:
    def g(x: Any) -> Any:
        x_ref = new_ref(0.0)
        x_ref[...] = jnp.sin(x)
        return x_ref[...]

    assert str(lc.make_jaxpr(g)(1.0)) == _JAXPR


def test_indexed_forms_print_as_jax() -> None:
    def f(x: Any) -> Any:
        r = new_ref(x)
        row = r[0]
        r[1] = row
        v = ref_swap(r, (1, 2), r[2, 3])
        r[0, :3] = r[:, 1] + v
        ref_addupdate(r, 1, row)
        return freeze(r)

    text = str(lc.make_jaxpr(f)(jnp.zeros((3, 4))))
    for line in (
        "c:f32[4] <- b[0,:]",
        "b[1,:] <- c",
        "d:f32[] <- b[2,3]",
        "e:f32[], b[1,2] <- b[1,2], d",
        "f:f32[3] <- b[:,1]",
        "b[0,:3] <- g",
        "b[1,:] += c",
        "h:f32[3,4] = freeze b",
    ):
        assert line in text, (line, text)


def test_discharge_makes_a_functional_jaxpr() -> None:
    def eff(a: Any, b: Any) -> Any:
        b[...] = b[...] + a[...]
        return jnp.sum(a[...])

    ref_avals = [AbstractRef(lc.ShapedArray((3,), np.dtype("float32")))] * 2
    jaxpr = lc.make_jaxpr(eff)(*ref_avals).jaxpr
    assert has_refs(jaxpr)
    out = discharge_state(jaxpr)
    assert not has_refs(out)
    assert [v.aval.str_short(True) for v in out.invars] == ["f32[3]", "f32[3]"]
    assert [v.aval.str_short(True) for v in out.outvars] == ["f32[]", "f32[3]", "f32[3]"]
    a, b = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    total, a_final, b_final = eval_jaxpr(out, (), a, b)
    np.testing.assert_allclose(total, 3.0)
    np.testing.assert_array_equal(a_final, a)
    np.testing.assert_array_equal(b_final, a + 1)


def test_freeze_outside_the_creation_scope_is_refused() -> None:
    ref_aval = AbstractRef(lc.ShapedArray((), np.dtype("float32")))
    jaxpr = lc.make_jaxpr(lambda r: freeze(r))(ref_aval).jaxpr
    with pytest.raises(ValueError, match="can only be frozen in the scope that created it"):
        discharge_state(jaxpr)


def test_scan_over_a_closed_over_ref() -> None:
    r = new_ref(0)

    def body(c: Any, x: Any) -> Any:
        r[...] += x
        return c, x * 2

    _, ys = lc.lax.scan(body, None, jnp.arange(10))
    assert int(r[...]) == 45
    np.testing.assert_array_equal(ys, 2 * np.arange(10))


def test_while_and_cond_thread_refs() -> None:
    def f(x: Any) -> Any:
        r = new_ref(x)

        def body(i: Any) -> Any:
            r[...] = r[...] * 2.0
            return i + 1

        lc.lax.while_loop(lambda i: i < 3, body, 0)
        lc.lax.cond(x > 0, lambda: ref_addupdate(r, None, 1.0), lambda: None)
        return freeze(r)

    jaxpr = lc.make_jaxpr(f)(1.0).jaxpr
    assert "while" in str(jaxpr) and "cond" in str(jaxpr)
    (out,) = eval_jaxpr(discharge_state(jaxpr), (), np.float32(1.5))
    np.testing.assert_allclose(out, 13.0)
    np.testing.assert_allclose(f(-1.0), -8.0)


# --- random Ref programs against a NumPy simulation ----------------------------------------

_SHAPE = (3, 4)


@st.composite
def _index(draw: Any) -> Any:
    kind = draw(st.sampled_from(["all", "int", "pair", "row_slice", "col_slice", "arrays"]))
    if kind == "all":
        return ...
    if kind == "int":
        return draw(st.integers(-3, 2))
    if kind == "pair":
        return (draw(st.integers(0, 2)), draw(st.integers(-4, 3)))
    if kind == "row_slice":
        start = draw(st.integers(0, 3))
        return (slice(start, draw(st.integers(start, 4))), draw(st.integers(0, 2)))
    if kind == "col_slice":
        start = draw(st.integers(0, 2))
        return (draw(st.integers(0, 2)), slice(start, None))
    n = draw(st.integers(1, 3))
    rows = draw(st.permutations(range(3)))[:n]
    return (
        np.array(rows, np.int32),
        np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), np.int32),
    )


_op = st.tuples(st.sampled_from(["get", "swap", "addupdate"]), _index(), st.integers(0, 1000))


def _run_ref_program(x: Any, ops: list[Any]) -> list[Any]:
    r = new_ref(x)
    outs = []
    for kind, idx, seed in ops:
        shape = np.zeros(_SHAPE)[idx].shape
        val = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        if kind == "get":
            outs.append(ref_get(r, idx))
        elif kind == "swap":
            outs.append(ref_swap(r, idx, val))
        else:
            ref_addupdate(r, idx, val)
    outs.append(freeze(r))
    return outs


def _simulate(x: np.ndarray, ops: list[Any]) -> list[np.ndarray]:
    x = x.copy()
    outs = []
    for kind, idx, seed in ops:
        shape = x[idx].shape
        val = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        if kind == "get":
            outs.append(x[idx].copy())
        elif kind == "swap":
            outs.append(x[idx].copy())
            x[idx] = val
        else:
            np.add.at(x, idx, val)
    outs.append(x)
    return outs


@settings(max_examples=40, deadline=None)
@given(st.lists(_op, min_size=1, max_size=5))
def test_random_programs_discharged_equal_numpy(ops: list[Any]) -> None:
    x = np.arange(12, dtype=np.float32).reshape(_SHAPE)
    expected = _simulate(x, ops)
    jaxpr = lc.make_jaxpr(lambda v: _run_ref_program(v, ops))(x).jaxpr
    got = eval_jaxpr(discharge_state(jaxpr), (), x)
    eager = _run_ref_program(x, ops)
    for e, g, h in zip(expected, got, eager, strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(h), e, rtol=1e-6)


def test_empty_and_free_ref() -> None:
    def f(x: Any) -> Any:
        r = empty_ref(lc.ShapeDtypeStruct((3,), np.float32))
        r[...] = x * 2
        v = r[...]
        free_ref(r)
        return v

    text = str(lc.make_jaxpr(f)(jnp.ones(3)))
    assert "b:Ref{f32[3]} = empty_ref[memory_space=None ty=float32[3]] \n" in text
    assert "    free_ref b\n" in text
    np.testing.assert_array_equal(f(jnp.ones(3)), [2.0, 2.0, 2.0])
    jaxpr = lc.make_jaxpr(f)(jnp.ones(3)).jaxpr
    np.testing.assert_array_equal(
        eval_jaxpr(discharge_state(jaxpr), (), np.ones(3, np.float32))[0], 2.0
    )
    np.testing.assert_array_equal(lc.grad(lambda x: f(x).sum())(jnp.ones(3)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(lc.vmap(f)(jnp.ones((2, 3))), np.full((2, 3), 2.0))
    r = empty_ref(np.zeros(2, np.int32))
    free_ref(r)
    with pytest.raises(ValueError, match="was frozen or freed"):
        r[...]


def test_a_ref_iterates_over_its_leading_axis() -> None:
    r = new_ref(jnp.arange(3.0))
    assert [float(x) for x in r] == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="0-d Ref"):
        iter(new_ref(1.0))
    with pytest.raises(ValueError, match="must be called on `Ref` types"):
        freeze(jnp.zeros(2))
