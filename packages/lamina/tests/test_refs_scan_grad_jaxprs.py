"""Reverse mode of `scan`s and `fori_loop`s whose bodies use Refs, against JAX 0.10.2: the
printed jaxprs of `grad` (and `vjp`) are JAX's byte for byte, and the gradients its values.

JAX transposes a linear program's tangent Refs in place: their cotangents are Refs too, made
when the first cotangent arrives, a read transposing to an add into one and a `scan` over
tangent Refs to a reverse scan over their cotangent Refs (`RefAccum`, `backward_pass3`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle


def _typed(decorator: Any) -> Callable[[Callable[..., Any]], Any]:
    """`decorator` (of JAX or Lamina, chosen at run time) as a typed decorator."""
    return decorator  # type: ignore[no-any-return]


Program = Callable[[Any], tuple[Callable[..., Any], tuple[Any, ...]]]
"""`program(api)`: the function to differentiate, written with `api` (`jax` or `lamina`),
and its arguments."""


def _closed_over_accumulator(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(()))

        def body(c: Any, xi: Any) -> Any:
            r[...] += c * xi
            return c * 2.0, None

        c, _ = L.lax.scan(body, x, jnp.arange(3.0))
        return c + r[...]

    return f, (1.5,)


def _closed_over_read(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.arange(3.0))

        def body(c: Any, _: Any) -> Any:
            return jnp.sin(c) * r[1], None

        return L.lax.scan(body, x, None, length=3)[0]

    return f, (0.7,)


def _fori_loop_writes(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(3))

        def body(i: Any, c: Any) -> Any:
            r[i] = c * 2.0
            return jnp.cos(c)

        return L.lax.fori_loop(0, 3, body, x) + r[...].sum()

    return f, (0.3,)


def _fori_loop_adds_and_closes_over_x(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(4))

        def body(i: Any, c: Any) -> Any:
            r[i] += c
            return c * x

        return L.lax.fori_loop(0, 4, body, x) * r[...].sum()

    return f, (0.9,)


def _fori_loop_read_modify_write(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(x * jnp.arange(4.0))

        def body(i: Any, _: Any) -> Any:
            r[i] = jnp.sin(r[i]) * r[(i + 1) % 4]
            return _

        L.lax.fori_loop(0, 3, body, None)
        return r[...].sum()

    return f, (0.9,)


def _scan_over_stacked_refs(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        out = L.new_ref(jnp.zeros((3, 2)))

        def body(c: Any, row: Any) -> Any:
            row[...] = c * 2.0
            return jnp.sin(c), None

        c, _ = L.lax.scan(body, x * jnp.ones(2), out)
        return c.sum() + (out[...] ** 2).sum()

    return f, (0.5,)


def _reverse_scan_reads_and_writes_stacked_refs(
    L: Any,
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        refs = L.new_ref(jnp.ones((3, 2)))

        def body(c: Any, a: Any) -> Any:
            row, xi = a
            v = row[...]
            row[...] = v * c + xi
            return c * 1.5, v.sum() * c

        c, ys = L.lax.scan(body, x, (refs, jnp.arange(3.0)), reverse=True)
        return c + ys.sum() + refs[...].sum()

    return f, (0.6,)


def _ref_made_from_x(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    def f(x: Any) -> Any:
        r = L.new_ref(x)

        def body(c: Any, _: Any) -> Any:
            r[...] = r[...] * c
            return c + 1.0, None

        L.lax.scan(body, 2.0, None, length=3)
        return r[...]

    return f, (1.1,)


def _ref_feeds_the_carry(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(x)

        def body(c: Any, xi: Any) -> Any:
            v = r[...]
            r[...] = jnp.sin(v) + xi
            return c + v, v * 2.0

        c, ys = L.lax.scan(body, 0.0, jnp.arange(3.0))
        return c + ys.sum()

    return f, (0.4,)


def _frozen_after_the_scan(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(()))

        def body(c: Any, xi: Any) -> Any:
            r[...] += jnp.exp(c * xi)
            return c, None

        L.lax.scan(body, x, jnp.arange(3.0))
        return L.ref.freeze(r)

    return f, (0.2,)


def _reverse_scan_of_a_vector_ref(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.ones(2))

        def body(c: Any, xi: Any) -> Any:
            r[...] = r[...] * c + xi
            return c * 1.5, c

        _, ys = L.lax.scan(body, x, jnp.arange(6.0).reshape(3, 2), reverse=True)
        return (r[...] * ys.sum()).sum()

    return f, (0.6,)


def _ref_argument(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any, r: Any) -> Any:
        def body(c: Any, xi: Any) -> Any:
            return c * r[0] + xi, c

        c, ys = L.lax.scan(body, x, jnp.arange(3.0))
        return c + ys.sum()

    return f, (0.7, L.new_ref(jnp.ones(2)))


def _ref_made_outside(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy
    outer = L.new_ref(jnp.arange(3.0))

    def f(x: Any) -> Any:
        def body(c: Any, _: Any) -> Any:
            return jnp.sin(c) * outer[2], None

        return L.lax.scan(body, x, None, length=3)[0]

    return f, (0.7,)


def _nested_scans(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(2))

        def outer_body(c: Any, _: Any) -> Any:
            def inner(d: Any, xi: Any) -> Any:
                r[...] += d * xi
                return d * 1.1, None

            return L.lax.scan(inner, c, jnp.ones((2, 2)))[0], None

        c, _ = L.lax.scan(outer_body, x, None, length=2)
        return c + r[...].sum()

    return f, (0.4,)


def _jit_call_takes_the_ref(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    @_typed(L.jit)
    def inner(x: Any, r: Any) -> Any:
        def body(c: Any, xi: Any) -> Any:
            r[...] += c * xi
            return c * 2.0, None

        return L.lax.scan(body, x, jnp.arange(3.0))[0]

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(()))
        return inner(x, r) + r[...]

    return f, (0.4,)


def _jit_call_closes_over_the_ref(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(()))

        @_typed(L.jit)
        def inner(x: Any) -> Any:
            def body(c: Any, xi: Any) -> Any:
                r[...] += c * xi
                return c * 2.0, None

            return L.lax.scan(body, x, jnp.arange(3.0))[0]

        return inner(x) + r[...]

    return f, (0.4,)


def _invariant_carry_read_twice(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(2))

        def body(c: Any, xi: Any) -> Any:
            r[...] = r[...] * c + xi
            return c, c * xi

        _, ys = L.lax.scan(body, x, jnp.ones((3, 2)))
        return ys.sum() + r[...].sum()

    return f, (0.4,)


def _invariants_feed_writes_and_ys(L: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.zeros(2))

        def body(c: Any, xi: Any) -> Any:
            a, b, d = jnp.sin(c), jnp.cos(c), jnp.exp(c)
            r[...] = r[...] * a + b * xi
            return c, d * xi + r[...] * b

        _, ys = L.lax.scan(body, x, jnp.ones((3, 2)))
        return ys.sum() + r[...].sum()

    return f, (0.3,)


def _invariants_reach_only_an_accumulation(
    L: Any,
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    # The hoisted `sin` and `cos` are read only by the `addupdate`, used in the other order:
    # JAX's partial evaluator orders them from that write (an effect it keeps a handle on).
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.new_ref(jnp.ones(2))

        def body(c: Any, xi: Any) -> Any:
            a, b = jnp.sin(c), jnp.cos(c)
            u = b * xi
            r[...] += a * xi * u
            return c, None

        L.lax.scan(body, x, jnp.ones((3, 2)))
        return r[...].sum()

    return f, (0.3,)


PROGRAMS: list[Program] = [
    _closed_over_accumulator,
    _closed_over_read,
    _fori_loop_writes,
    _fori_loop_adds_and_closes_over_x,
    _fori_loop_read_modify_write,
    _scan_over_stacked_refs,
    _reverse_scan_reads_and_writes_stacked_refs,
    _ref_made_from_x,
    _ref_feeds_the_carry,
    _frozen_after_the_scan,
    _reverse_scan_of_a_vector_ref,
    _ref_argument,
    _ref_made_outside,
    _nested_scans,
    _jit_call_takes_the_ref,
    _jit_call_closes_over_the_ref,
    _invariant_carry_read_twice,
    _invariants_feed_writes_and_ys,
    _invariants_reach_only_an_accumulation,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: getattr(p, "__name__", "").strip("_"))
def test_grad_jaxpr_and_value_are_jaxs(program: Program) -> None:
    theirs, args_j = program(jax)
    ours, args_l = program(lamina)
    expected = str(jax.make_jaxpr(jax.grad(theirs))(*args_j))
    assert str(lamina.make_jaxpr(lamina.grad(ours))(*args_l)) == expected
    np.testing.assert_allclose(
        np.asarray(lamina.grad(ours)(*args_l)), np.asarray(jax.grad(theirs)(*args_j)), rtol=1e-6
    )


def _vjp_of_a_ref_loop(L: Any) -> Callable[[Any], Any]:
    jnp = L.numpy

    def f(y: Any) -> Any:
        r = L.new_ref(y)

        def body(c: Any, _: Any) -> Any:
            r[...] = jnp.cos(r[...]) + c
            return c, None

        L.lax.scan(body, y, None, length=2)
        return r[...]

    def pulled_back(x: Any) -> Any:
        _, pullback = L.vjp(f, x)
        return pullback(1.0)[0]

    return pulled_back


def test_vjp_jaxpr_and_value_are_jaxs() -> None:
    theirs, ours = _vjp_of_a_ref_loop(jax), _vjp_of_a_ref_loop(lamina)
    assert str(lamina.make_jaxpr(ours)(0.3)) == str(jax.make_jaxpr(theirs)(0.3))
    np.testing.assert_allclose(np.asarray(ours(0.3)), np.asarray(theirs(0.3)), rtol=1e-6)


def _empty_ref(L: Any) -> Callable[[Any], Any]:
    jnp = L.numpy

    def f(x: Any) -> Any:
        r = L.empty_ref(L.ShapeDtypeStruct((), jnp.float32))
        r[...] = x

        def body(c: Any, _: Any) -> Any:
            r[...] = r[...] * 2.0 + c
            return c, None

        L.lax.scan(body, x, None, length=2)
        return r[...]

    return f


def test_grad_of_an_empty_ref_loop_prints_as_jaxs() -> None:
    # JAX 0.10.2 cannot evaluate `empty_ref` eagerly (no impl rule); its jaxpr is the oracle.
    theirs, ours = _empty_ref(jax), _empty_ref(lamina)
    assert str(lamina.make_jaxpr(lamina.grad(ours))(0.7)) == str(
        jax.make_jaxpr(jax.grad(theirs))(0.7)
    )
    assert float(lamina.grad(ours)(0.7)) == pytest.approx(7.0)
