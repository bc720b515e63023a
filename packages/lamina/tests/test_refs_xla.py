"""Refs (seed 004) on XLA against JAX 0.10.2: printed jaxprs, values eagerly and under `jit`,
derivatives and batching through Refs, in-place updates of Ref arguments, and the errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina


@pytest.fixture
def simplified_constants() -> Iterator[None]:
    """JAX with seed 000's simplified constants, Lamina's default, so index arrays print as
    literals in both."""
    config: Any = jax.config
    old = config.jax_use_simplified_jaxpr_constants
    config.update("jax_use_simplified_jaxpr_constants", True)
    try:
        yield
    finally:
        config.update("jax_use_simplified_jaxpr_constants", old)


def _closed(L: Any) -> Any:
    x_ref = L.new_ref(L.numpy.zeros(3))

    def f() -> None:
        x_ref[1] += 1.0

    return L.make_jaxpr(f)(), L.make_jaxpr(L.jit(f))()


def _internal(L: Any) -> Any:
    jnp = L.numpy

    def g(x: Any) -> Any:
        r = L.new_ref(0.0)
        r[...] = jnp.sin(x)
        return r[...]

    # (Reverse mode's jaxprs differ: JAX transposes into accumulating Refs, Lamina discharges
    # the tangent Refs first; the gradients are the same, as the tests below check.)
    return L.make_jaxpr(g)(1.0)


def _indexing(L: Any) -> Any:
    jnp = L.numpy

    def idx(e: Any) -> None:
        row = e[0]
        e[1] = row
        e[2, 3] = e[1, 2]
        e[0, :3] = e[:, 1]
        vals = e[jnp.array([0, 0, 1]), jnp.array([1, 2, 3])]
        e[jnp.array([1, 2, 1]), jnp.array([0, 0, 1])] = vals
        e[...] = e[...] + 1

    return L.make_jaxpr(idx)(L.new_ref(jnp.arange(12.0).reshape(3, 4)))


def _pure_impure(L: Any) -> Any:
    def impure1(a: Any, b: Any) -> None:
        a[...] = b[...]

    y_ref = L.new_ref(0)

    def impure2(x: Any) -> None:
        y_ref[...] = x

    def pure1(x: Any) -> Any:
        ref = L.new_ref(x)
        ref[...] = ref[...] + ref[...]
        return ref[...]

    def ok_freeze(x: Any) -> Any:
        r = L.new_ref(x)
        r[...] += 1
        return L.freeze(r)

    return (
        L.make_jaxpr(L.jit(impure1))(L.new_ref(0.0), L.new_ref(1.0)),
        L.make_jaxpr(L.jit(impure2))(5),
        L.make_jaxpr(L.jit(pure1))(3.0),
        L.make_jaxpr(L.vmap(pure1))(L.numpy.arange(3.0)),
        L.make_jaxpr(ok_freeze)(1.0),
    )


def _batched(L: Any) -> Any:
    jnp = L.numpy

    def dist(x: Any, y: Any, o: Any) -> None:
        o[...] = jnp.sum((x - y) ** 2)

    def mk(x: Any) -> Any:
        r = L.new_ref(0.0)
        r[...] = x
        return r[...]

    def setter(x: Any, r: Any) -> None:
        r[1] = x

    vecs = jnp.arange(12.0).reshape(3, 4)
    nested = L.vmap(L.vmap(dist, (0, None, 0)), (None, 0, 0))
    return (
        L.make_jaxpr(nested)(vecs, vecs, L.new_ref(jnp.zeros((3, 3)))),
        L.make_jaxpr(L.vmap(mk))(jnp.arange(3.0)),
        L.make_jaxpr(L.vmap(setter, in_axes=(0, 1)))(jnp.arange(4.0), L.new_ref(jnp.zeros((3, 4)))),
    )


def _forward_and_loops(L: Any) -> Any:
    jnp = L.numpy

    def jv(x: Any) -> Any:
        r = L.new_ref(x)
        r[0] = r[1] * x[2]
        L.ref.addupdate(r, 2, x[0])
        return L.freeze(r)

    def scan_ref(xs: Any) -> Any:
        r = L.new_ref(0.0)

        def body(c: Any, x: Any) -> Any:
            r[...] += x
            return c, x * 2

        _, ys = L.lax.scan(body, None, xs)
        return L.freeze(r), ys

    return (
        L.make_jaxpr(lambda x, t: L.jvp(jv, (x,), (t,)))(jnp.arange(3.0), jnp.ones(3)),
        L.make_jaxpr(scan_ref)(jnp.arange(4.0)),
    )


PRINTED: list[tuple[str, Callable[[Any], Any]]] = [
    ("closed_over", _closed),
    ("internal", _internal),
    ("indexing", _indexing),
    ("pure_impure", _pure_impure),
    ("batched", _batched),
    ("forward_and_loops", _forward_and_loops),
]


@pytest.mark.usefixtures("simplified_constants")
@pytest.mark.parametrize(("name", "program"), PRINTED, ids=[n for n, _ in PRINTED])
def test_printed_jaxprs_are_jaxs(name: str, program: Callable[[Any], Any]) -> None:
    ours, theirs = program(lamina), program(jax)
    if not isinstance(ours, tuple):
        ours, theirs = (ours,), (theirs,)
    for mine, expected in zip(ours, theirs, strict=True):
        assert str(mine) == str(expected)


def test_jit_updates_a_ref_argument_in_place() -> None:
    @lamina.jit
    def sin_inplace(x_ref: Any) -> None:
        x_ref[...] = lamina.numpy.sin(x_ref[...])

    r = lamina.new_ref(lamina.numpy.arange(3.0))
    p0 = r.unsafe_buffer_pointer()
    for _ in range(3):
        sin_inplace(r)
    assert r.unsafe_buffer_pointer() == p0
    np.testing.assert_allclose(r[...], np.sin(np.sin(np.sin(np.arange(3.0)))), rtol=1e-6)
    text = sin_inplace.lower(r).as_text()
    assert "tf.aliasing_output = 0 : i32" in text


def test_closed_over_ref_is_a_trailing_aliased_argument() -> None:
    r = lamina.new_ref(lamina.numpy.zeros(4))

    @lamina.jit
    def bump(x: Any) -> Any:
        r[...] += x
        return x * 2

    p0 = r.unsafe_buffer_pointer()
    np.testing.assert_array_equal(bump(lamina.numpy.ones(4)), 2 * np.ones(4))
    bump(lamina.numpy.ones(4))
    assert r.unsafe_buffer_pointer() == p0
    np.testing.assert_array_equal(r[...], 2 * np.ones(4))


def test_eager_writes_are_in_place() -> None:
    r = lamina.new_ref(lamina.numpy.zeros(8))
    p0 = r.unsafe_buffer_pointer()
    r[3] = 1.0
    lamina.ref.addupdate(r, slice(0, 2), lamina.numpy.ones(2))
    assert r.unsafe_buffer_pointer() == p0
    np.testing.assert_array_equal(r[...], [1, 1, 0, 1, 0, 0, 0, 0])


def test_errors_name_the_ref() -> None:
    r = lamina.new_ref(0.0)

    def twice(a: Any, b: Any) -> None:
        pass

    with pytest.raises(ValueError, match="appeared at both a and b"):
        lamina.jit(twice)(r, r)

    def ret(a: Any) -> Any:
        return a

    with pytest.raises(ValueError, match="was passed in as the argument a"):
        lamina.jit(ret)(r)
    with pytest.raises(ValueError, match="was created on line"):
        lamina.jit(lambda: lamina.new_ref(1.0))()


# --- derivatives through Refs, against JAX's ------------------------------------------------

_INDICES: list[Any] = [..., 1, -1, (0, slice(None)), (slice(1, 3), 2), (np.array([2, 0]), 1)]


@settings(max_examples=8, deadline=None)  # each example compiles eager ops: ~0.6 s
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["get", "swap", "addupdate"]), st.sampled_from(range(len(_INDICES)))
        ),
        min_size=1,
        max_size=4,
    )
)
def test_grad_through_internal_refs_is_jaxs(ops: list[tuple[str, int]]) -> None:
    def program(L: Any) -> Callable[[Any], Any]:
        jnp = L.numpy

        def f(x: Any) -> Any:
            r = L.new_ref(x * 2.0)
            total = jnp.float32(0.0)
            for kind, k in ops:
                idx = _INDICES[k]
                if kind == "get":
                    total = total + jnp.sum(jnp.sin(r[idx]))
                elif kind == "swap":
                    old = L.ref.swap(r, idx, jnp.cos(x[:1]).sum() * jnp.ones_like(r[idx]))
                    total = total + jnp.sum(old * x[0, 0])
                else:
                    L.ref.addupdate(r, idx, x[1, 1] * jnp.ones_like(r[idx]))
            return total + jnp.sum(L.freeze(r) ** 2)

        return f

    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
    expected = jax.grad(program(jax))(x)
    np.testing.assert_allclose(lamina.grad(program(lamina))(x), expected, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(
        lamina.jit(lamina.grad(program(lamina)))(x), expected, rtol=2e-5, atol=1e-6
    )


def test_jvp_and_vmap_through_refs_are_jaxs() -> None:
    def program(L: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            r = L.new_ref(x)
            r[0] = r[1] * x[2]
            L.ref.addupdate(r, 2, x[0])
            return L.freeze(r)

        return f

    x, t = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    for got, want in zip(
        lamina.jvp(program(lamina), (x,), (t,)), jax.jvp(program(jax), (x,), (t,)), strict=True
    ):
        np.testing.assert_allclose(got, want)
    xs = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(lamina.vmap(program(lamina))(xs), jax.vmap(program(jax))(xs))
    loop = np.stack([np.asarray(program(lamina)(row)) for row in xs])
    np.testing.assert_allclose(lamina.vmap(program(lamina))(xs), loop)


def test_loops_and_calls_read_and_write_closed_over_refs() -> None:
    count = lamina.new_ref(0)

    def body(i: Any) -> Any:
        count[...] += 1
        return i + 1

    # One Ref read by the condition and written by the body: one buffer, eagerly and jitted.
    assert int(lamina.lax.while_loop(lambda i: count[...] < 5, body, 0)) == 5
    assert int(lamina.jit(lambda: lamina.lax.while_loop(lambda i: count[...] < 9, body, 0))()) == 4
    assert int(count[...]) == 9

    @lamina.jit
    def inner(r: Any) -> None:
        r[...] += 1.0

    @lamina.jit
    def outer(r: Any) -> None:
        inner(r)
        inner(r)

    r = lamina.new_ref(lamina.numpy.zeros(2))
    outer(r)
    np.testing.assert_array_equal(r[...], [2.0, 2.0])
    z = lamina.new_ref(lamina.numpy.arange(3.0))
    np.testing.assert_array_equal(lamina.vmap(lambda i: z[i])(lamina.numpy.arange(3)), [0, 1, 2])


_RSS_PROBE = """
import resource
import lamina as jax
import lamina.numpy as jnp

@jax.jit
def bump(r):
    r[...] += 1.0

big = jax.new_ref(jnp.zeros(32 * 1024 * 1024))  # 128 MB
bump(big)  # compiled; the first update
jax.block_until_ready(big[:1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(4):
    bump(big)
jax.block_until_ready(big[:1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024, float(big[0]))
"""


@pytest.mark.slow
def test_in_place_update_of_128mb_moves_no_memory() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _RSS_PROBE], capture_output=True, text=True, check=True
    )
    growth_mb, first = map(float, out.stdout.split())
    assert first == 5.0
    assert growth_mb < 10.0, f"peak RSS grew by {growth_mb:.1f} MB"


def _ref_misuses(L: Any) -> list[Callable[[], Any]]:
    lax, jnp = L.lax, L.numpy
    r = L.new_ref(0.0)
    return [
        lambda: lax.scan(lambda c, x: (c, r), 0.0, jnp.arange(3.0)),
        lambda: lax.scan(lambda c, x: ((c, r), x), (0.0, 1.0), jnp.arange(3.0)),
        lambda: lax.cond(True, lambda: r, lambda: r),
        lambda: lax.while_loop(lambda c: False, lambda c: c, r),
        lambda: lax.scan(lambda c, x: (c, x), (r, r), jnp.arange(3.0)),
        lambda: lax.cond(True, lambda a, b: 1.0, lambda a, b: 1.0, r, r),
        lambda: L.jit(lambda a, b: None)(r, r),
        lambda: L.jit(lambda a: a)(r),
    ]


def test_control_flow_and_jit_ref_errors_are_jaxs() -> None:
    for ours, theirs in zip(_ref_misuses(lamina), _ref_misuses(jax), strict=True):
        with pytest.raises(ValueError) as expected:
            theirs()
        with pytest.raises(ValueError) as got:
            ours()
        assert str(got.value) == str(expected.value)


def test_aot_stages_update_refs_in_place() -> None:
    @lamina.jit
    def f(r: Any, x: Any) -> None:
        r[...] += x

    r = lamina.new_ref(lamina.numpy.zeros(3))
    compiled = f.lower(r, 1.0).compile()
    p0 = r.unsafe_buffer_pointer()
    compiled(r, 2.0)
    compiled(r, 2.0)
    np.testing.assert_array_equal(r[...], [4.0, 4.0, 4.0])
    assert r.unsafe_buffer_pointer() == p0
    with pytest.raises(ValueError, match="can't serialize"):
        compiled.serialize()
    closed = lamina.new_ref(lamina.numpy.zeros(2))

    @lamina.jit
    def g(x: Any) -> Any:
        closed[...] += x
        return x * 2

    np.testing.assert_allclose(g.lower(1.0).compile()(3.0), 6.0)
    np.testing.assert_array_equal(closed[...], [3.0, 3.0])


def test_checkpoint_of_a_function_with_internal_refs_is_jaxs() -> None:
    def program(L: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            r = L.new_ref(x)
            r[...] = L.numpy.sin(r[...]) * 2
            return r[...]

        remat: Callable[[Any], Any] = L.checkpoint(f)
        return remat

    want = jax.grad(program(jax))(1.0)
    np.testing.assert_allclose(lamina.grad(program(lamina))(1.0), want, rtol=1e-6)
    np.testing.assert_allclose(lamina.jit(lamina.grad(program(lamina)))(1.0), want, rtol=1e-6)
    # A Ref that is neither differentiated nor rematerialized is written once.
    k = lamina.new_ref(0.0, kind="no_grad_no_remat")

    def impure(x: Any) -> Any:
        k[...] += lamina.lax.stop_gradient(x)
        return x * 2

    np.testing.assert_allclose(lamina.grad(lamina.checkpoint(impure))(1.0), 2.0)
    assert float(k[...]) == 1.0
