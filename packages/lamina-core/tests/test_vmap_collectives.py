# ruff: noqa: E501  (one case per line reads best)
"""Collectives under `vmap(..., axis_name=...)` against JAX: psum, pmean, pmax, pmin,
axis_index, ppermute, pshuffle, all_gather, psum_scatter, all_to_all and pbroadcast; nested
vmaps with two names; pytrees; grad through psum; jit(vmap) on XLA; and JAX's errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import tree_util
from lamina_core.testing import Oracle, check_vmap, sweep
from lamina_core.trace._values import to_numpy

pytestmark = pytest.mark.oracle

f32 = np.float32


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


def ramp(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=f32).reshape(shape)


# (name, program(jnp, lax) -> f, args, in_axes, out_axes)
CASES: list[tuple[str, Any, tuple[Any, ...], Any, Any]] = [
    ("B14 x - psum", lambda jnp, lax: lambda x: x - lax.psum(x, "i"), (arr(3),), 0, 0),
    ("psum rows", lambda jnp, lax: lambda x: x - lax.psum(x, "i"), (arr(3, 2),), 0, 0),
    ("psum in_axes 1", lambda jnp, lax: lambda x: x - lax.psum(x, "i"), (arr(3, 2),), 1, 0),
    ("psum out_axes None", lambda jnp, lax: lambda x: lax.psum(x, "i"), (arr(3, 2),), 0, None),
    ("psum out_axes 1", lambda jnp, lax: lambda x: lax.psum(x * 2.0, "i"), (arr(4, 3),), 0, 1),
    ("psum of a constant", lambda jnp, lax: lambda x: x * lax.psum(1, "i"), (arr(3, 2),), 0, 0),
    ("psum of a float constant", lambda jnp, lax: lambda x: x + lax.psum(2.5, "i"), (arr(4),), 0, 0),
    ("psum of an unmapped operand", lambda jnp, lax: lambda x, y: x * lax.psum(y, "i"), (arr(3, 2), arr(2)), (0, None), 0),
    ("psum of ints", lambda jnp, lax: lambda x: lax.psum(x, "i"), (np.arange(5, dtype=np.int32),), 0, 0),
    ("psum of bools", lambda jnp, lax: lambda x: lax.psum(x, "i"), (np.array([True, False, True]),), 0, 0),
    ("psum of a pytree", lambda jnp, lax: lambda x: lax.psum({"a": x, "b": (x * 2.0,)}, "i"), (arr(3, 2),), 0, 0),
    ("psum with a positional axis", lambda jnp, lax: lambda x: lax.psum(x, ("i", 0)), (arr(3, 4, 2),), 0, 0),
    ("axis_size", lambda jnp, lax: lambda x: x / lax.psum(1, ("i",)), (arr(5),), 0, 0),
    ("pmean", lambda jnp, lax: lambda x: lax.pmean(x, "i"), (arr(3, 2),), 0, 0),
    ("pmean of a pytree", lambda jnp, lax: lambda x, y: lax.pmean((x, y), "i"), (arr(3, 2), arr(3)), 0, 0),
    ("pmax", lambda jnp, lax: lambda x: lax.pmax(x, "i"), (arr(3, 2),), 0, 0),
    ("pmin", lambda jnp, lax: lambda x: lax.pmin(x, "i"), (arr(3, 2),), 1, 0),
    ("pmax of an unmapped operand", lambda jnp, lax: lambda x, y: x + lax.pmax(y, "i"), (arr(3, 2), arr(2)), (0, None), 0),
    ("softmax over the named axis", lambda jnp, lax: lambda x: jnp.exp(x - lax.pmax(x, "i")) / lax.psum(jnp.exp(x - lax.pmax(x, "i")), "i"), (arr(4, 3),), 0, 0),
    ("axis_index", lambda jnp, lax: lambda x: x + lax.axis_index("i"), (arr(3, 2),), 0, 0),
    ("axis_index alone", lambda jnp, lax: lambda x: lax.axis_index("i") * 2, (arr(4),), 0, 0),
    ("all_gather", lambda jnp, lax: lambda x: lax.all_gather(x, "i"), (arr(3, 2),), 0, 0),
    ("all_gather tiled", lambda jnp, lax: lambda x: lax.all_gather(x, "i", tiled=True), (arr(3, 2),), 0, 0),
    ("all_gather axis 1", lambda jnp, lax: lambda x: lax.all_gather(x, "i", axis=1), (arr(3, 2),), 0, 0),
    ("all_gather in_axes 1", lambda jnp, lax: lambda x: lax.all_gather(x, "i", axis=-1), (arr(2, 3),), 1, 0),
    ("all_gather of an unmapped operand", lambda jnp, lax: lambda x, y: x + lax.all_gather(y, "i")[0], (arr(3, 2), arr(2)), (0, None), 0),
    ("ppermute", lambda jnp, lax: lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)]), (ramp(3, 2),), 0, 0),
    ("pshuffle", lambda jnp, lax: lambda x: lax.pshuffle(x, "i", [2, 0, 1]), (ramp(3, 2),), 0, 0),
    ("psum_scatter", lambda jnp, lax: lambda x: lax.psum_scatter(x, "i"), (ramp(3, 3),), 0, 0),
    ("psum_scatter tiled", lambda jnp, lax: lambda x: lax.psum_scatter(x, "i", tiled=True), (ramp(3, 6),), 0, 0),
    ("psum_scatter dimension 1", lambda jnp, lax: lambda x: lax.psum_scatter(x, "i", scatter_dimension=1), (ramp(3, 2, 3),), 0, 0),
    ("all_to_all same axis", lambda jnp, lax: lambda x: lax.all_to_all(x, "i", 0, 0), (ramp(3, 3, 2),), 0, 0),
    ("all_to_all split 0 concat 1", lambda jnp, lax: lambda x: lax.all_to_all(x, "i", 0, 1), (ramp(3, 3, 2),), 0, 0),
    ("all_to_all split 1 concat 0", lambda jnp, lax: lambda x: lax.all_to_all(x, "i", 1, 0), (ramp(3, 2, 3),), 0, 0),
    ("all_to_all tiled", lambda jnp, lax: lambda x: lax.all_to_all(x, "i", 0, 1, tiled=True), (ramp(3, 6, 2),), 0, 0),
    ("psum_scatter of an unmapped operand", lambda jnp, lax: lambda x, y: x + lax.psum_scatter(y, "i"), (ramp(3), ramp(3)), (0, None), 0),
    ("psum_scatter tiled of an unmapped operand", lambda jnp, lax: lambda x, y: x + lax.psum_scatter(y, "i", tiled=True), (ramp(3), ramp(6)), (0, None), 0),
    ("ppermute of an unmapped operand", lambda jnp, lax: lambda x, y: x + lax.ppermute(y, "i", [(0, 1), (1, 2), (2, 0)]), (ramp(3), ramp(2)), (0, None), 0),
    ("all_to_all of an unmapped operand (JAX's broadcast)", lambda jnp, lax: lambda x, y: lax.all_to_all(y, "i", 0, 0), (ramp(3), ramp(3, 2)), (0, None), 0),
    ("pswapaxes", lambda jnp, lax: lambda x: lax.pswapaxes(x, "i", 0), (ramp(3, 3),), 0, 0),
    # The batching rule's `take` wraps its indices with a `_where` of the types of the user's
    # `where`: JAX prints the two sub-jaxprs apart (lax's drivers have a `jit` of their own).
    ("jnp.where beside a ppermute taking with its types", lambda jnp, lax: lambda x, i: (jnp.where(i < 0, i + 3, i), lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)])), (ramp(3), np.array([0, -1, 2], np.int32)), (0, None), 0),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "program", "args", "in_axes", "out_axes"), sweep(CASES, [c[0] for c in CASES])
)
def test_collective_as_jax(
    oracle: Oracle, name: str, program: Any, args: Any, in_axes: Any, out_axes: Any
) -> None:
    check_vmap(oracle, program, *args, in_axes=in_axes, out_axes=out_axes, axis_name="i")


def _api_of(oracle: Oracle, jnp: Any) -> Any:
    """JAX's API module for JAX's programs, Lamina's for Lamina's (vmap, jit, grad)."""
    return oracle.jax if jnp is oracle.jnp else lc


NESTED: list[tuple[str, Any, tuple[Any, ...]]] = [
    ("psum over both names", lambda J, lax: lambda x: J.vmap(lambda y: lax.psum(y, ("i", "j")), axis_name="j")(x), (arr(2, 3, 4),)),
    ("psum over both names, reversed", lambda J, lax: lambda x: J.vmap(lambda y: y - lax.psum(y, ("j", "i")), axis_name="j")(x), (arr(2, 3),)),
    ("psum over the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.psum(y, "i"), axis_name="j")(x), (arr(2, 3, 4),)),
    ("psum over the inner name", lambda J, lax: lambda x: J.vmap(lambda y: y * lax.psum(y, "j"), axis_name="j")(x), (arr(2, 3),)),
    ("outer psum of an inner-unmapped value", lambda J, lax: lambda x: J.vmap(lambda y: y + lax.psum(x, "i"), axis_name="j")(x * 2.0), (arr(2, 4),)),
    ("psum of a constant over both", lambda J, lax: lambda x: J.vmap(lambda y: y * lax.psum(1, ("i", "j")), axis_name="j")(x), (arr(2, 3),)),
    ("pmax over both", lambda J, lax: lambda x: J.vmap(lambda y: lax.pmax(y, ("i", "j")), axis_name="j")(x), (arr(2, 3),)),
    ("pmean over the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.pmean(y, "i"), axis_name="j")(x), (arr(2, 3),)),
    ("axis_index of both", lambda J, lax: lambda x: J.vmap(lambda y: y + lax.axis_index("i") * 10 + lax.axis_index("j"), axis_name="j")(x), (arr(2, 3),)),
    ("all_gather of the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.all_gather(y, "i"), axis_name="j")(x), (arr(2, 3),)),
    ("psum_scatter of the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.psum_scatter(y, "i"), axis_name="j")(x), (ramp(2, 3, 2),)),
    ("ppermute of the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.ppermute(y, "i", [(0, 1), (1, 0)]), axis_name="j")(x), (ramp(2, 3),)),
    ("axis_index of a tuple of names", lambda J, lax: lambda x: J.vmap(lambda y: y + lax.axis_index(("i", "j")), axis_name="j")(x), (ramp(2, 3),)),
    ("psum over a list of names", lambda J, lax: lambda x: J.vmap(lambda y: y + lax.psum(y, ["i", "j"]), axis_name="j")(x), (ramp(2, 3),)),
    ("all_to_all of the outer name", lambda J, lax: lambda x: J.vmap(lambda y: lax.all_to_all(y, "i", 0, 0), axis_name="j")(x), (ramp(2, 3, 2, 4),)),
    ("all_to_all over both names", lambda J, lax: lambda x: J.vmap(lambda y: lax.all_to_all(y, ("i", "j"), 0, 0), axis_name="j")(x), (ramp(2, 3, 6, 2),)),
    ("all_to_all over both names, reversed", lambda J, lax: lambda x: J.vmap(lambda y: lax.all_to_all(y, ("j", "i"), 0, 1), axis_name="j")(x), (ramp(2, 3, 6, 2),)),
    ("all_to_all over both names, tiled", lambda J, lax: lambda x: J.vmap(lambda y: lax.all_to_all(y, ("i", "j"), 1, 0, tiled=True), axis_name="j")(x), (ramp(2, 3, 2, 12),)),
    ("vmap of jit over both names", lambda J, lax: lambda x: J.vmap(J.jit(lambda y: y - lax.psum(y, ("i", "j"))), axis_name="j")(x), (ramp(2, 3),)),
    ("vmap of grad over both names", lambda J, lax: lambda x: J.vmap(J.grad(lambda y: y * lax.psum(y, ("i", "j"))), axis_name="j")(x), (ramp(2, 3),)),
    ("the same name twice: the inner one wins", lambda J, lax: lambda x: J.vmap(lambda y: lax.psum(y, "i"), axis_name="i")(x), (arr(2, 3),)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "program", "args"), sweep(NESTED, [c[0] for c in NESTED]))
def test_nested_named_vmaps(oracle: Oracle, name: str, program: Any, args: Any) -> None:
    check_vmap(
        oracle,
        lambda jnp, lax: program(_api_of(oracle, jnp), lax),
        *args,
        axis_name="i",
        jitted=False,
    )


def _values_close(got: Any, want: Any) -> None:
    got_leaves = tree_util.tree_leaves(got)
    want_leaves = [np.asarray(w) for w in tree_util.tree_leaves(want)]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g = np.asarray(to_numpy(g))
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_eager_vmap_values(oracle: Oracle) -> None:
    """Without staging: the batched collectives run eagerly (psum over positional axes)."""
    x = arr(4, 3)

    def prog(lax: Any) -> Callable[..., Any]:
        return lambda v: (
            lax.psum(v, "i"),
            lax.pmax(v, "i"),
            lax.pmean(v, "i"),
            lax.axis_index("i"),
        )

    got = lc.vmap(prog(lc.lax), axis_name="i")(x)
    want = oracle.jax.vmap(prog(oracle.lax), axis_name="i")(x)
    _values_close(got, want)


def test_grad_through_psum_under_vmap(oracle: Oracle) -> None:
    def f(lax: Any, jnp: Any) -> Any:
        return lambda x: jnp.sum(x * lax.psum(x, "i"))

    x = arr(3, 2)
    ours = lc.make_jaxpr(lc.vmap(lc.grad(f(lc.lax, lc.numpy)), axis_name="i"))(x)
    theirs = oracle.jax.make_jaxpr(
        oracle.jax.vmap(oracle.jax.grad(f(oracle.lax, oracle.jnp)), axis_name="i")
    )(x)
    assert str(ours) == str(theirs)
    _values_close(
        oracle.evaluate(ours, [x]),
        [oracle.jax.vmap(oracle.jax.grad(f(oracle.lax, oracle.jnp)), axis_name="i")(x)],
    )


def test_grad_of_vmap_with_psum(oracle: Oracle) -> None:
    def f(jax: Any, lax: Any, jnp: Any) -> Any:
        inner = jax.vmap(lambda v: jnp.sum(v * lax.psum(v, "i")), axis_name="i")
        return jax.grad(lambda x: jnp.sum(inner(x)))

    x = arr(3, 2)
    ours = lc.make_jaxpr(f(lc, lc.lax, lc.numpy))(x)
    theirs = oracle.jax.make_jaxpr(f(oracle.jax, oracle.lax, oracle.jnp))(x)
    assert str(ours) == str(theirs)
    _values_close(oracle.evaluate(ours, [x]), [f(oracle.jax, oracle.lax, oracle.jnp)(x)])


GRADS: list[tuple[str, Any, tuple[Any, ...]]] = [
    ("grad of psum", lambda J, lax: J.grad(lambda y: lax.psum(y * y, "i")), (ramp(3),)),
    ("grad of all_gather tiled", lambda J, lax: J.grad(lambda y: (lax.all_gather(y, "i", tiled=True) ** 2).sum()), (ramp(3, 2),)),
    ("grad of all_to_all", lambda J, lax: J.grad(lambda y: (lax.all_to_all(y, "i", 0, 0) ** 2).sum()), (ramp(3, 3),)),
    ("grad of psum_scatter tiled", lambda J, lax: J.grad(lambda y: (lax.psum_scatter(y, "i", tiled=True) ** 2).sum()), (ramp(3, 6),)),
    ("grad of pmean", lambda J, lax: J.grad(lambda y: (lax.pmean(y, "i") * y).sum()), (ramp(4, 2),)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "program", "args"), GRADS, ids=[c[0] for c in GRADS])
def test_grad_of_collectives_under_vmap(oracle: Oracle, name: str, program: Any, args: Any) -> None:
    check_vmap(oracle, lambda jnp, lax: program(_api_of(oracle, jnp), lax), *args, axis_name="i")


def test_grad_through_all_gather_and_ppermute(oracle: Oracle) -> None:
    def f(jax: Any, lax: Any, jnp: Any) -> Any:
        def per_example(v: Any) -> Any:
            g = lax.all_gather(v, "i")
            p = lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
            return jnp.sum(g * g) + jnp.sum(p * v)

        return jax.vmap(jax.grad(per_example), axis_name="i")

    x = arr(3, 2)
    ours = lc.make_jaxpr(f(lc, lc.lax, lc.numpy))(x)
    theirs = oracle.jax.make_jaxpr(f(oracle.jax, oracle.lax, oracle.jnp))(x)
    assert str(ours) == str(theirs)
    _values_close(oracle.evaluate(ours, [x]), [f(oracle.jax, oracle.lax, oracle.jnp)(x)])


def test_jvp_of_psum_under_vmap(oracle: Oracle) -> None:
    def f(jax: Any, lax: Any) -> Any:
        return jax.vmap(
            lambda x, t: jax.jvp(lambda v: lax.psum(v * v, "i"), (x,), (t,)), axis_name="i"
        )

    x, t = arr(3, 2), arr(3, 2, lo=0.1, hi=0.5)
    ours = lc.make_jaxpr(f(lc, lc.lax))(x, t)
    theirs = oracle.jax.make_jaxpr(f(oracle.jax, oracle.lax))(x, t)
    assert str(ours) == str(theirs)
    _values_close(oracle.evaluate(ours, [x, t]), list(f(oracle.jax, oracle.lax)(x, t)))


def test_jit_of_vmap_with_collectives(oracle: Oracle) -> None:
    """jit(vmap(...)): what remains (psum/pmax over positional axes) is compiled as one
    program; run with `--lamina-execute=xla-jit` to evaluate it on XLA."""

    def f(jax: Any, lax: Any) -> Any:
        def per_example(x: Any) -> Any:
            return (
                x - lax.pmean(x, "i"),
                lax.pmax(x, "i"),
                lax.pmin(x * 2.0, "i"),
                lax.axis_index("i"),
            )

        return jax.jit(jax.vmap(per_example, axis_name="i"))

    x = arr(4, 3)
    ours = lc.make_jaxpr(f(lc, lc.lax))(x)
    theirs = oracle.jax.make_jaxpr(f(oracle.jax, oracle.lax))(x)
    assert str(ours) == str(theirs)
    _values_close(oracle.evaluate(ours, [x]), list(f(oracle.jax, oracle.lax)(x)))


def test_psum_with_empty_axes_is_the_identity(oracle: Oracle) -> None:
    x = arr(3)
    assert lc.lax.psum(x, ()) is x
    assert oracle.lax.psum(x, ()) is x


def test_psum_of_python_constant_is_the_axis_size(oracle: Oracle) -> None:
    """A Python number is the same at every index: its psum is a Python number, as JAX's."""
    seen: dict[str, list[Any]] = {"ours": [], "theirs": []}

    def record(key: str, lax: Any) -> Callable[[Any], Any]:
        def f(v: Any) -> Any:
            seen[key].append((lax.psum(1, "i"), lax.axis_size("i"), lax.psum(2.0, ("i",))))
            return v

        return f

    lc.vmap(record("ours", lc.lax), axis_name="i")(arr(5))
    oracle.jax.vmap(record("theirs", oracle.lax), axis_name="i")(arr(5))
    assert seen["ours"] == seen["theirs"] == [(5, 5, 10.0)]
    assert [type(v) for v in seen["ours"][0]] == [type(v) for v in seen["theirs"][0]]


def test_jit_traces_again_for_another_axis_size(oracle: Oracle) -> None:
    """The bound axes are part of jit's cache key, as in JAX's trace context."""
    g = lc.jit(lambda x: x * lc.lax.psum(1, "i"))
    for n in (3, 4):
        got = lc.vmap(g, axis_name="i")(arr(n))
        np.testing.assert_array_equal(np.asarray(to_numpy(got)), arr(n) * n)


# --- errors ------------------------------------------------------------------------------


def _same_error(oracle: Oracle, build: Callable[[Any, Any, Any], Callable[[], Any]]) -> str:
    with pytest.raises(Exception) as theirs:
        build(oracle.jax, oracle.lax, oracle.jnp)()
    with pytest.raises(type(theirs.value)) as ours:
        build(lc, lc.lax, lc.numpy)()
    assert _sets_sorted(str(ours.value)) == _sets_sorted(str(theirs.value))
    return str(ours.value)


def _sets_sorted(message: str) -> str:
    """`message` with the items of each printed set of strings sorted: a set prints in an order
    that depends on the hash seed of the process that compiled its literal."""
    return re.sub(
        r"\{('[^{}]*')\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message
    )


ERRORS: list[tuple[str, Callable[[Any, Any, Any], Callable[[], Any]]]] = [
    ("unbound name under vmap", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.psum(x, "k"), axis_name="i"))(arr(3))),
    ("unbound name, staged", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.psum(x, "i"))(arr(3))),
    ("unbound name, eager constant", lambda jax, lax, jnp: lambda: lax.psum(1, "i")),
    ("pmax unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.pmax(x, "i"))(arr(3))),
    ("axis_index unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: x + lax.axis_index("i"))(arr(3))),
    ("unnamed vmap binds no name", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.psum(x, "i")))(arr(3))),
    ("None is not an axis name", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.psum(x, None)))(arr(3))),
    ("ppermute unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.ppermute(x, "i", [(0, 1)]))(arr(3))),
    ("all_gather unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.all_gather(x, "i"))(arr(3))),
    ("mapped output with out_axes None", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: x, axis_name="i", out_axes=None)(arr(3))),
    ("axis_index_groups with positional axes", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.psum(x, ("i", 0), axis_index_groups=[[0, 1, 2]]), axis_name="i")(arr(3, 2))),
    ("axis_index_groups not covering", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 2]]), axis_name="i")(arr(3, 2))),
    ("pshuffle of a non-permutation", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.pshuffle(x, "i", [0, 0, 1]), axis_name="i")(arr(3))),
    ("all_to_all size mismatch", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.all_to_all(x, "i", 0, 0), axis_name="i")(arr(3, 2))),
    ("all_to_all tiled size not divisible", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True), axis_name="i")(arr(3, 4))),
    ("psum_scatter unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.psum_scatter(x, "i"))(arr(3))),
    ("all_to_all unbound", lambda jax, lax, jnp: lambda: jax.make_jaxpr(lambda x: lax.all_to_all(x, "i", 0, 0))(arr(3))),
    ("psum_scatter tiled not divisible", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.psum_scatter(x, "i", tiled=True), axis_name="i"))(arr(3, 4))),
    ("all_gather bad to", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.all_gather(x, "i", to="nope"), axis_name="i")(arr(3))),
    ("pbroadcast under vmap (JAX's take refuses its list)", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(lambda x: lax.pbroadcast(x, "i", 1), axis_name="i"))(arr(3))),
    ("ppermute must be a full permutation under vmap", lambda jax, lax, jnp: lambda: jax.vmap(lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2)]), axis_name="i")(arr(3))),
    ("pmax has no derivative", lambda jax, lax, jnp: lambda: jax.make_jaxpr(jax.vmap(jax.grad(lambda x: lax.pmax(x, "i")), axis_name="i"))(arr(3))),
]  # fmt: skip


@pytest.mark.parametrize(("name", "build"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_as_jax(oracle: Oracle, name: str, build: Any) -> None:
    _same_error(oracle, build)
