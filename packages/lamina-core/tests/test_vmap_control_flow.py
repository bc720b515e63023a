# ruff: noqa: E501  (one case per line reads best)
"""`vmap` of `cond`, `switch`, `while_loop`, `fori_loop`, `scan` and `map` against JAX 0.10.2.

Every case goes through `check_vmap`: the printed jaxpr of `make_jaxpr(vmap(f, ...))` byte for
byte, its values (NumPy reference or XLA), `vmap(jit(f))`'s values, and a Python loop over the
batch. The cases cover each rule's branches: `cond` with a mapped index (JAX's `select_n` and
`stop_gradient` form) and an unmapped one (a `cond` of batched branches, outputs mapped in one
branch forced mapped in all), `scan`'s fixpoint on mapped carries with mapped consts, carries
and `xs` at any axis, `while` with an unmapped predicate (carries mapped after the predicate's
rank) and a mapped one (every carry mapped, `bool[B]` predicate); nested vmaps, `out_axes`,
pytrees, `vmap(jit(...))`, and collectives over the vmapped axis inside the bodies.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import tree_util
from lamina_core.testing import Oracle, check_vmap, sweep
from lamina_core.trace._values import to_numpy

pytestmark = pytest.mark.oracle

f32 = np.float32
i32 = np.int32


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


def ints(*values: int) -> np.ndarray:
    return np.array(values, i32)


BOOLS = np.array([True, False, True])

# A program is `(api, jnp, lax) -> f`, `api` being `jax` or `lamina_core` (vmap, jit).
# (name, program, args, in_axes, out_axes)
Case = tuple[str, Callable[..., Any], tuple[Any, ...], Any, Any]

COND: list[Case] = [
    ("C4 mapped predicate", lambda J, jnp, lax: lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), (BOOLS, arr(3)), 0, 0),
    ("constant predicate", lambda J, jnp, lax: lambda x: lax.cond(True, jnp.sin, jnp.cos, x), (arr(3),), 0, 0),
    ("unmapped predicate, mapped operand", lambda J, jnp, lax: lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), (np.bool_(False), arr(3, 2)), (None, 0), 0),
    ("unmapped predicate, operand at axis 1", lambda J, jnp, lax: lambda p, x: lax.cond(p, lambda a: a * 2.0, jnp.cos, x), (np.bool_(True), arr(2, 3)), (None, 1), 0),
    ("mapped predicate, operand at axis 1", lambda J, jnp, lax: lambda p, x: lax.cond(p, lambda a: a * 2.0, jnp.cos, x), (BOOLS, arr(2, 3)), (0, 1), 0),
    ("predicate from a mapped operand", lambda J, jnp, lax: lambda x: lax.cond(x > 0, lambda a: a * 2.0, lambda a: -a, x), (arr(3),), 0, 0),
    ("predicate from an unmapped operand", lambda J, jnp, lax: lambda x, y: lax.cond(y > 0, lambda a, b: a * b, lambda a, b: a + 1.0, x, y), (arr(3), f32(2.0)), (0, None), 0),
    ("mapped and unmapped operands, mapped predicate", lambda J, jnp, lax: lambda p, x, y: lax.cond(p, lambda a, b: a + b, lambda a, b: a - b, x, y), (BOOLS, arr(3, 2), arr(2)), (0, 0, None), 0),
    ("only an unmapped operand reaches the output", lambda J, jnp, lax: lambda p, x, y: lax.cond(p, lambda a, b: (a, b * 2.0), lambda a, b: (a * 3.0, b), x, y), (np.bool_(True), arr(3), f32(1.5)), (None, 0, None), 0),
    ("output mapped in one branch only", lambda J, jnp, lax: lambda p, x, y: lax.cond(p, lambda a, b: a + b, lambda a, b: b * 2.0, x, y), (np.bool_(False), arr(3), f32(1.5)), (None, 0, None), 0),
    ("pytree operands and outputs", lambda J, jnp, lax: lambda p, d: lax.cond(p, lambda t: {"s": t["a"] + t["b"][0], "t": (t["b"][1],)}, lambda t: {"s": t["a"] * t["b"][0], "t": (t["b"][1] - 1.0,)}, d), (BOOLS, {"a": arr(3, 2), "b": (arr(3, 2, lo=0.1), arr(3))}), 0, 0),
    ("pytree outputs, mixed mapping", lambda J, jnp, lax: lambda p, x, y: lax.cond(p, lambda a, b: (a + b, b), lambda a, b: (a - b, b * 2.0), x, y), (BOOLS, arr(3), f32(1.5)), (0, 0, None), 0),
    ("integer outputs, mapped predicate", lambda J, jnp, lax: lambda p, n: lax.cond(p, lambda k: k + 1, lambda k: k * 3, n), (BOOLS, ints(1, 2, 3)), 0, 0),
    ("no operands, mapped predicate", lambda J, jnp, lax: lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0), (BOOLS,), 0, 0),
    ("closed-over mapped value", lambda J, jnp, lax: lambda x, y: lax.cond(x.sum() > 0, lambda: y * 2.0, lambda: y + x.sum()), (arr(3, 2), arr(3)), 0, 0),
    ("out_axes 1", lambda J, jnp, lax: lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), (BOOLS, arr(3, 2)), 0, 1),
    ("nested conds, inner predicate mapped", lambda J, jnp, lax: lambda p, q, x: lax.cond(p, lambda a: lax.cond(q, jnp.sin, jnp.cos, a), lambda a: a * 2.0, x), (np.bool_(True), BOOLS, arr(3)), (None, 0, 0), 0),
    ("nested conds, both mapped", lambda J, jnp, lax: lambda p, q, x: lax.cond(p, lambda a: lax.cond(q, jnp.sin, jnp.cos, a), lambda a: a * 2.0, x), (BOOLS, BOOLS[::-1].copy(), arr(3)), 0, 0),
    ("switch, three branches, mapped index", lambda J, jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), (ints(0, 2, 1), arr(3)), 0, 0),
    ("switch, mapped index out of range (clamped)", lambda J, jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), (ints(-1, 5, 1), arr(3)), 0, 0),
    ("switch, unmapped index", lambda J, jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda a: a * 2.0], x), (i32(2), arr(3, 2)), (None, 0), 0),
    ("switch, mapped index, unmapped operand", lambda J, jnp, lax: lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x), (ints(2, 0, 1), arr(2)), (0, None), 0),
    ("switch, pytree", lambda J, jnp, lax: lambda i, x, y: lax.switch(i, [lambda a, b: (a, b), lambda a, b: (b, a), lambda a, b: (a + b, a * b)], x, y), (ints(0, 1, 2), arr(3), arr(3, lo=0.2)), 0, 0),
    ("vmap of jit of cond", lambda J, jnp, lax: J.jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)), (BOOLS, arr(3)), 0, 0),
    ("nested vmap, predicate mapped by the inner", lambda J, jnp, lax: lambda p, x: J.vmap(lambda q, a: lax.cond(q, jnp.sin, jnp.cos, a), in_axes=(0, None))(p, x), (arr(2, 3) > 0, arr(2)), 0, 0),
    ("nested vmap, predicate mapped by the outer", lambda J, jnp, lax: lambda p, x: J.vmap(lambda a: lax.cond(p, jnp.sin, jnp.cos, a))(x), (BOOLS, arr(3, 2)), 0, 0),
]  # fmt: skip

SCAN: list[Case] = [
    ("mapped xs", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), (arr(3, 5),), 0, 0),
    ("mapped xs at axis 1", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), (arr(5, 3),), 1, 0),
    ("mapped xs at axis 2", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, jnp.sin(x)), jnp.zeros(2), xs), (arr(4, 2, 3),), 2, 0),
    ("mapped carry only", lambda J, jnp, lax: lambda c0, xs: lax.scan(lambda c, x: (c + x, c * x), c0, xs), (arr(3), arr(5)), (0, None), 0),
    ("mapped const only", lambda J, jnp, lax: lambda w, xs: lax.scan(lambda c, x: (c * w + x, c), 0.0, xs), (arr(3), arr(5)), (0, None), 0),
    ("mapped const at axis 1", lambda J, jnp, lax: lambda w, xs: lax.scan(lambda c, x: (c + w * x, c), jnp.zeros(2), xs), (arr(2, 3), arr(5)), (1, None), 0),
    ("carry mapped by the body (fixpoint)", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: ((c[0] + x, c[1] + 1.0), c[0]), (0.0, 0.0), xs), (arr(3, 4),), 0, 0),
    ("carry mapped through another carry", lambda J, jnp, lax: lambda w: lax.scan(lambda c, _: ((c[1], c[2], c[0] + w), c[0]), (0.0, 0.0, 0.0), None, length=4), (arr(3),), 0, 0),
    ("unmapped integer counter", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: ((c[0] + 1, c[1] + x * c[0]), x), (0, 0.0), xs), (arr(3, 4),), 0, 0),
    ("ys unmapped", lambda J, jnp, lax: lambda c0, xs: lax.scan(lambda c, x: (c * 2.0, x + 1.0), c0, xs), (arr(3), arr(4)), (0, None), 0),
    ("ys None", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0], (arr(3, 4),), 0, 0),
    ("no xs, length", lambda J, jnp, lax: lambda c0: lax.scan(lambda c, _: (c * 0.5, c), c0, None, length=4), (arr(3),), 0, 0),
    ("pytree carry and xs", lambda J, jnp, lax: lambda c0, xs: lax.scan(lambda c, x: ({"a": c["a"] + x[0], "b": c["b"] * x[1]}, (c["a"], x[0] - x[1])), c0, xs), ({"a": arr(3), "b": arr(3, lo=0.5)}, (arr(3, 4), arr(4))), ({"a": 0, "b": None}, (0, None)), 0),
    ("out_axes (0, 1)", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), (arr(3, 5),), 0, (0, 1)),
    ("out_axes 1 on ys of rank 2", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, jnp.outer(x, c)), jnp.zeros(2), xs)[1], (arr(3, 4, 2),), 0, 1),
    ("reverse and unroll", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs, reverse=True, unroll=2), (arr(3, 5),), 0, 0),
    ("cumulative sum of vectors", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x, c + x), jnp.zeros(2), xs), (arr(4, 3, 2),), 1, 0),
    ("cond in the body", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (lax.cond(x > 0, lambda a: a + x, lambda a: a - x, c), c), 0.0, xs), (arr(3, 5),), 0, 0),
    ("while in the body", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (lax.while_loop(lambda v: v < 4.0, lambda v: v * 2.0 + 0.1, jnp.abs(x) + c), c), 0.0, xs), (arr(3, 4, lo=0.1),), 0, 0),
    ("nested vmap", lambda J, jnp, lax: J.vmap(lambda c0, xs: lax.scan(lambda c, x: (c * x + 1.0, c), c0, xs), in_axes=(0, None)), (arr(3, 2), arr(3, 4)), (None, 0), 0),
    ("nested vmap, both mapped", lambda J, jnp, lax: J.vmap(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), in_axes=1), (arr(2, 4, 3),), 0, 1),
    ("vmap of jit of scan", lambda J, jnp, lax: J.jit(lambda c0, xs: lax.scan(lambda c, x: (c + x, jnp.sin(c)), c0, xs)), (arr(3), arr(3, 4)), 0, 0),
    ("vmap of a jitted body", lambda J, jnp, lax: lambda xs: lax.scan(J.jit(lambda c, x: (c + x, c * x)), 0.0, xs), (arr(3, 5),), 0, 0),
    ("map", lambda J, jnp, lax: lambda xs: lax.map(jnp.sin, xs), (arr(3, 5),), 0, 0),
    ("map, mapped at axis 1", lambda J, jnp, lax: lambda xs: lax.map(lambda r: r.sum(), xs), (arr(4, 3, 2),), 1, 0),
    ("map over an unmapped xs", lambda J, jnp, lax: lambda w, xs: lax.map(lambda r: r * w, xs), (arr(3), arr(4)), (0, None), 0),
    ("map with batch_size", lambda J, jnp, lax: lambda xs: lax.map(jnp.cos, xs, batch_size=2), (arr(3, 5),), 0, 0),
    ("fori_loop with static bounds (a scan)", lambda J, jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x), (arr(3),), 0, 0),
]  # fmt: skip

WHILE: list[Case] = [
    ("C6 mapped predicate", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x), (arr(3, lo=0.5, hi=3.0),), 0, 0),
    ("unmapped predicate, mapped carry", lambda J, jnp, lax: lambda x, k: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * k), (0, x)), (arr(3), f32(1.5)), (0, None), 0),
    ("unmapped predicate, carry at axis 1", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)), (arr(2, 3),), 1, 0),
    ("mapped body const", lambda J, jnp, lax: lambda x, k: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * k), (0, x)), (f32(1.0), arr(3)), (None, 0), 0),
    ("mapped cond const", lambda J, jnp, lax: lambda x, lim: lax.while_loop(lambda c: c < lim, lambda c: c * 2.0, x), (f32(0.5), arr(3, lo=2.0, hi=9.0)), (None, 0), 0),
    ("mapped predicate through the fixpoint", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c[1] < 6.0, lambda c: (c[0] + 1, c[1] + c[2], c[2]), (0, 0.0, x)), (arr(3, lo=0.5, hi=2.0),), 0, 0),
    ("mapped predicate, pytree carry", lambda J, jnp, lax: lambda x, y: lax.while_loop(lambda c: c["n"] < c["lim"], lambda c: dict(c, n=c["n"] + 1, v=c["v"] * y), {"n": 0, "lim": x, "v": y}), (ints(1, 3, 2), arr(3, 2, lo=0.5)), (0, None), 0),
    ("mapped predicate, out_axes 1", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, x), (arr(3, 2, lo=0.5, hi=3.0),), 0, 1),
    ("mapped predicate, operand at axis 1", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 2.0, x), (arr(2, 3, lo=0.5, hi=3.0),), 1, 0),
    ("fori_loop with a mapped upper bound", lambda J, jnp, lax: lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x), (arr(3), ints(1, 2, 3)), 0, 0),
    ("fori_loop with a mapped lower bound", lambda J, jnp, lax: lambda x, n: lax.fori_loop(n, 4, lambda i, c: c * 1.5 + i, x), (f32(1.0), ints(0, 2, 3)), (None, 0), 0),
    ("fori_loop with a dynamic unmapped bound", lambda J, jnp, lax: lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x), (arr(3), i32(3)), (0, None), 0),
    ("vmap of jit of while", lambda J, jnp, lax: J.jit(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)), (arr(3, lo=0.5, hi=3.0),), 0, 0),
    ("nested vmap, predicate mapped by the inner only", lambda J, jnp, lax: lambda x, n: J.vmap(lambda k: lax.fori_loop(0, k, lambda i, c: c * 2.0, x))(n), (arr(3), ints(1, 2)), (0, None), 0),
    ("nested vmap, predicate mapped by both", lambda J, jnp, lax: J.vmap(lambda x: lax.while_loop(lambda c: c < 5.0, lambda c: c * 2.0 + 0.5, x)), (arr(3, 2, lo=0.1, hi=4.0),), 1, 0),
    ("cond in the body, mapped predicate", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, lax.cond(c[1] > 0, lambda v: v - 1.0, lambda v: v + 2.0, c[1])), (0, x)), (arr(3),), 0, 0),
    ("scan in the body", lambda J, jnp, lax: lambda xs: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, lax.scan(lambda a, x: (a + x, a), c[1], xs)[0]), (0, 0.0)), (arr(3, 4),), 0, 0),
]  # fmt: skip


def _api_of(oracle: Oracle, jnp: ModuleType) -> ModuleType:
    """JAX's API module for JAX's programs, Lamina's for Lamina's."""
    return oracle.jax if jnp is oracle.jnp else lc


def _check(oracle: Oracle, case: Case, **kwargs: Any) -> None:
    _, program, args, in_axes, out_axes = case
    check_vmap(
        oracle,
        lambda jnp, lax: program(_api_of(oracle, jnp), jnp, lax),
        *args,
        in_axes=in_axes,
        out_axes=out_axes,
        **kwargs,
    )


def _every_third() -> Callable[[str], str]:
    """Kinds of three consecutive cases: one case in three runs by default."""
    count = itertools.count()
    return lambda _: str(next(count) // 3)


@pytest.mark.parametrize(
    "case", sweep(COND, [c[0] for c in COND], unpack=False, kind=_every_third())
)
def test_vmap_of_cond(oracle: Oracle, case: Case) -> None:
    _check(oracle, case)


@pytest.mark.parametrize(
    "case", sweep(SCAN, [c[0] for c in SCAN], unpack=False, kind=_every_third())
)
def test_vmap_of_scan(oracle: Oracle, case: Case) -> None:
    _check(oracle, case)


@pytest.mark.parametrize(
    "case", sweep(WHILE, [c[0] for c in WHILE], unpack=False, kind=_every_third())
)
def test_vmap_of_while(oracle: Oracle, case: Case) -> None:
    _check(oracle, case)


# Collectives over the vmapped axis inside the bodies, batched with them (axis_name="i").
NAMED: list[Case] = [
    ("psum in a cond branch, unmapped predicate", lambda J, jnp, lax: lambda p, x: lax.cond(p, lambda a: a - lax.psum(a, "i"), jnp.sin, x), (np.bool_(True), arr(3, 2)), (None, 0), 0),
    ("psum in a cond branch, mapped predicate", lambda J, jnp, lax: lambda p, x: lax.cond(p, lambda a: a - lax.psum(a, "i"), jnp.sin, x), (BOOLS, arr(3, 2)), 0, 0),
    ("pmean as a cond predicate", lambda J, jnp, lax: lambda x: lax.cond(lax.pmean(x, "i") > 0, lambda a: a * 2.0, lambda a: a - 1.0, x), (arr(3),), 0, 0),
    ("psum in a scan body", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + lax.psum(x, "i"), c * x), 0.0, xs), (arr(3, 4),), 0, 0),
    ("axis_index in a scan body", lambda J, jnp, lax: lambda xs: lax.scan(lambda c, x: (c + x * lax.axis_index("i"), c), 0.0, xs), (arr(3, 4),), 0, 0),
    ("pmax of the carry in a scan body", lambda J, jnp, lax: lambda c0: lax.scan(lambda c, _: (c - lax.pmax(c, "i") + 1.0, c), c0, None, length=3), (arr(4),), 0, 0),
    ("psum in a while body, unmapped predicate", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + lax.psum(c[1], "i")), (0, x)), (arr(3),), 0, 0),
    ("psum in a while predicate (unmapped)", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: lax.psum(c, "i") < 20.0, lambda c: c * 2.0, x), (arr(3, lo=0.5, hi=1.5),), 0, 0),
    ("psum in a while body, mapped predicate", lambda J, jnp, lax: lambda x: lax.while_loop(lambda c: c < 8.0, lambda c: c + lax.pmax(c, "i"), x), (arr(3, lo=0.5, hi=2.0),), 0, 0),
    ("psum in a fori_loop (scan) body", lambda J, jnp, lax: lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(c, "i") * i, x), (arr(3),), 0, 0),
]  # fmt: skip


@pytest.mark.parametrize("case", NAMED, ids=[c[0] for c in NAMED])
def test_collectives_in_bodies(oracle: Oracle, case: Case) -> None:
    _check(oracle, case, axis_name="i")


def test_nested_named_vmaps_through_a_scan(oracle: Oracle) -> None:
    """The inner vmap's scan body holds collectives over both the inner and the outer names."""

    def program(J: Any, jnp: Any, lax: Any) -> Callable[..., Any]:
        body = lambda c, x: (c + lax.psum(x, ("i", "j")), c - lax.pmean(x, "i"))  # noqa: E731
        return lambda xs: J.vmap(lambda r: lax.scan(body, 0.0, r), axis_name="j")(xs)

    _check(oracle, ("", program, (arr(2, 3, 4),), 0, 0), axis_name="i", jitted=False)


# Values: vmap against Lamina's own Python loop over the batch, run eagerly one example at a
# time (the second reference beside JAX's loop, which `check_vmap` already uses).
LOOPED = [c for c in COND + SCAN + WHILE if c[3] == 0 and c[4] == 0]


@pytest.mark.parametrize("case", LOOPED, ids=[c[0] for c in LOOPED])
def test_vmap_equals_laminas_own_loop(case: Case) -> None:
    _, program, args, _, _ = case
    f = program(lc, lc.numpy, lc.lax)
    batched = tree_util.tree_leaves(lc.vmap(f)(*args))
    size = tree_util.tree_leaves(args)[0].shape[0]
    per_example = [
        tree_util.tree_leaves(f(*tree_util.tree_map(lambda a, b=b: a[b], args)))
        for b in range(size)
    ]
    for k, got in enumerate(batched):
        want = np.stack([np.asarray(to_numpy(one[k])) for one in per_example])
        np.testing.assert_allclose(np.asarray(to_numpy(got)), want, rtol=2e-6, atol=2e-6)


SHARED_BODIES: dict[str, Callable[[Any, Any], Callable[..., Any]]] = {
    "scan": lambda jnp, lax: (
        lambda xs: lax.scan(_scan_body, 0.0, xs)[0] + lax.scan(_scan_body, 1.0, xs)[0]
    ),
    "cond, unmapped predicate": lambda jnp, lax: (
        lambda xs: lax.cond(True, _double, jnp.sin, xs) + lax.cond(False, _double, jnp.sin, xs)
    ),
    "while, mapped predicate": lambda jnp, lax: (
        lambda xs: (
            lax.while_loop(_below_ten, _double, xs) + lax.while_loop(_below_ten, _double, xs + 1.0)
        )
    ),
}


def _scan_body(c: Any, x: Any) -> Any:
    return c + x, c * x


def _double(x: Any) -> Any:
    return x * 2.0


def _below_ten(x: Any) -> Any:
    return x.sum() < 10.0


@pytest.mark.parametrize("name", sorted(SHARED_BODIES))
def test_a_body_used_twice_is_batched_once(oracle: Oracle, name: str) -> None:
    """Two loops over the same body batch it once: the second names the first (JAX's `let`)."""
    program = SHARED_BODIES[name]
    x = arr(3, 4, lo=0.5, hi=3.0)
    ours = lc.make_jaxpr(lc.vmap(program(lc.numpy, lc.lax)))(x)
    theirs = oracle.jax.make_jaxpr(oracle.jax.vmap(program(oracle.jnp, oracle.lax)))(x)
    assert str(theirs).startswith("let "), "the case no longer shares a body in JAX"
    assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
