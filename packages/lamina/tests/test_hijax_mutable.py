"""Mutable hi types (a Box holding a pytree, a Log appending values) against JAX 0.10.2
(issue 38): created, read and written eagerly, under `jit` (as arguments, made inside,
closed over, nested), in `scan`, `fori_loop`, `while_loop` and `cond`, under `jvp` and
`grad`; values, printed jaxprs and errors, from the same definitions in both
implementations (`mutable_box_types`, JAX's own tests' Box written with the public API); and
flax's hijax `Variable`s under `lamina.as_jax`."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar, cast

import jax
import jax.experimental as jax_experimental
import jax.experimental.hijax as jax_hijax
import numpy as np
import pytest

import lamina
import lamina.experimental as lamina_experimental
import lamina.experimental.hijax as lamina_hijax
from lamina_core.testing import load_test_module

pytestmark = pytest.mark.oracle
box_api = load_test_module(Path(__file__).parent, "mutable_box_types").box_api

Scenario = Callable[[SimpleNamespace], Any]
F = TypeVar("F", bound=Callable[..., Any])


def jit_of(ns: SimpleNamespace) -> Callable[[F], F]:
    """`ns`'s `jit`, typed as a decorator keeping the signature."""
    return cast("Callable[[F], F]", ns.api.jit)


def custom_vjp_of(ns: SimpleNamespace) -> Callable[[F], Any]:
    return cast("Callable[[F], Any]", ns.api.custom_vjp)


def _ns(api: Any, hijax: Any, experimental: Any) -> SimpleNamespace:
    ns: SimpleNamespace = box_api(api, hijax, experimental)
    ns.api, ns.jnp, ns.ex, ns.hijax = api, api.numpy, experimental, hijax
    return ns


LAMINA = _ns(lamina, lamina_hijax, lamina_experimental)
JAX = _ns(jax, jax_hijax, jax_experimental)
# JAX 0.10.2's mutable types must read their final arrays as its internal `FlatTree`: a Log
# there is only its own (what its tests use).
JAX.Log = importlib.import_module("jax._src.hijax").Log


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _leaves(e)]
    return [x]


def _assert_same(got: Any, want: Any) -> None:
    if isinstance(want, str) or want is None or isinstance(want, bool):
        assert got == want
        return
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want)
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), (got, want)
    for a, b in zip(g, w, strict=True):
        if b is None or isinstance(b, (str, bool)):
            assert a == b
            continue
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert np.asarray(a).dtype == np.asarray(b).dtype, (a, b)


def _outcome(scenario: Scenario, ns: SimpleNamespace) -> Any:
    try:
        return scenario(ns)
    except Exception as e:  # the error is the outcome to compare
        return f"{type(e).__name__}: {e}"


SCENARIOS: dict[str, Scenario] = {}


def scenario(fn: Scenario) -> Scenario:
    SCENARIOS[fn.__name__] = fn
    return fn


def eager_and_jit(fn: Callable[[SimpleNamespace, bool], Any]) -> Callable[..., Any]:
    """A scenario run as it is and under `jit` (two scenarios)."""
    for jit in (False, True):
        SCENARIOS[f"{fn.__name__}-{'jit' if jit else 'eager'}"] = functools.partial(fn, jit=jit)  # type: ignore[call-arg]  # `jit` by name
    return fn


# ---- eager and jit ---------------------------------------------------------------------------


@scenario
def eager(ns: SimpleNamespace) -> Any:
    b = ns.Box(1.0)
    b.set(b.get() + 2.0)
    return b.get(), ns.ex.cur_qdd(b).leaf_avals == (ns.api.typeof(3.0),)


@eager_and_jit
def qdd_tracks_sets(ns: SimpleNamespace, jit: bool) -> Any:
    out: list[bool] = []
    val1, val2 = 1.0, ns.jnp.arange(3)
    box1 = ns.Box(val1)

    def f(box2: Any) -> None:
        def leaf(b: Any) -> Any:
            return ns.ex.cur_qdd(b).leaf_avals

        out.append(leaf(box2) == (ns.api.typeof(val1),))
        box2.set(val2)
        out.append(leaf(box2) == (ns.api.typeof(val2),))
        box3 = ns.new_box()
        box3.set(val2)
        out.append(leaf(box3) == (ns.api.typeof(val2),))
        box3.set(val1)
        out.append(leaf(box3) == (ns.api.typeof(val1),))
        out.append(leaf(box1) == (ns.api.typeof(val1),))
        box1.set(val2)
        out.append(leaf(box1) == (ns.api.typeof(val2),))

    (ns.api.jit(f) if jit else f)(ns.Box(val1))
    return out


@scenario
def jit_made_inside(ns: SimpleNamespace) -> Any:
    @jit_of(ns)
    def f(x: Any) -> Any:
        box = ns.Box(x)
        box.set(box.get() + box.get())
        return box.get()

    return f(1), f(2.0)


@scenario
def jit_argument(ns: SimpleNamespace) -> Any:
    traces = [0]

    @jit_of(ns)
    def f(box: Any, x: Any) -> None:
        traces[0] += 1
        box.set(box.get() + x)

    b1, b2 = ns.Box(1.0), ns.Box(2.0)
    f(b1, 1.0)
    f(b2, 2.0)
    return b1.get(), b2.get(), traces[0]


@scenario
def jit_argument_in_pytree(ns: SimpleNamespace) -> Any:
    traces = [0]

    @jit_of(ns)
    def f(dct: Any, x: Any) -> None:
        traces[0] += 1
        box = dct["box"]
        box.set(box.get() + x)

    boxes = [ns.Box(1.0), ns.Box(2.0), ns.Box(3)]  # the int box: another type, traced anew
    for b, a in zip(boxes, (1.0, 2.0, 2.0), strict=True):
        f({"box": b, "a": a}, a)
    return [b.get() for b in boxes], traces[0]


@scenario
def jit_closure(ns: SimpleNamespace) -> Any:
    traces = [0]
    box = ns.Box(1.0)

    @jit_of(ns)
    def f(x: Any) -> None:
        traces[0] += 1
        box.set(box.get() + x)

    f(2.0)
    first = box.get()
    f(5.0)
    return first, box.get(), traces[0]


@scenario
def jit_closure_nested(ns: SimpleNamespace) -> Any:
    box = ns.Box(5.0)

    @jit_of(ns)
    def f(x: Any) -> None:
        box.set(box.get() + x)

    @jit_of(ns)
    def g(x: Any) -> None:
        f(x)

    g(3.0)
    made_outside = ns.new_box()

    @jit_of(ns)
    def h(x: Any) -> Any:
        made_outside.set(x)
        inner = ns.new_box()
        inner.set(x)

        @jit_of(ns)
        def k(y: Any) -> None:
            made_outside.set(made_outside.get() + y)
            inner.set(inner.get() * y)

        k(1.0)
        k(3.0)
        return made_outside.get(), inner.get()

    return box.get(), h(2.0), made_outside.get()


@scenario
def type_changing(ns: SimpleNamespace) -> Any:
    box = ns.Box(ns.jnp.arange(1))
    ns.box_set(box, ns.jnp.arange(2))
    sizes = [len(box._val)]

    @jit_of(ns)
    def f(box: Any, x: Any) -> None:
        ns.box_set(box, x)

    for n in (3, 4):
        f(box, ns.jnp.arange(n))
        sizes.append(len(box._val))
    return sizes


@scenario
def pytree_contents(ns: SimpleNamespace) -> Any:
    box, traces = ns.Box(None), [0]

    @jit_of(ns)
    def f(box: Any, x: Any) -> None:
        traces[0] += 1
        if ns.box_get(box) is None:
            ns.box_set(box, x)
        else:
            ns.box_set(box, [x, x])

    seen = []
    for x in (1.0, 2.0, 3.0, 4.0):
        f(box, x)
        seen.append(ns.box_get(box))
    return seen, traces[0]


@scenario
def closed_over_type_changing(ns: SimpleNamespace) -> Any:
    box, box2, traces = ns.Box(None), ns.Box(None), [0]

    @jit_of(ns)
    def f() -> None:
        traces[0] += 1
        x = box.get()
        if x is None:
            box.set(0)
        elif type(x) is dict:
            box.set(dict(x, a=5))
            box2.set(3)
        else:
            box.set(x + 1)

    out: list[Any] = []
    for reset, calls in ((None, 3), (None, 4), ({"b": 3}, 1)):
        if out:
            box.set(reset)
        for _ in range(calls):
            f()
        out.append([box.get(), box2.get(), traces[0]])
    return out


@scenario
def nested_type_changes(ns: SimpleNamespace) -> Any:
    @jit_of(ns)
    def f(x: Any) -> Any:
        box = ns.Box()
        box.set(x + 1)

        @jit_of(ns)
        def g() -> None:
            box.set([x, x])
            box.set([x, x, x])

        g()
        y, z, w = box.get()
        box.set([x])
        g()
        return [*box.get(), y, z, w]

    return f(0)


@scenario
def returned_from_jit(ns: SimpleNamespace) -> Any:
    return ns.api.jit(lambda x: ns.Box(x))(1.0)


@scenario
def log_nested_jit(ns: SimpleNamespace) -> Any:
    log = ns.Log()

    @jit_of(ns)
    def f(log: Any, x: Any) -> None:
        log.append("x", x + 1)

        @jit_of(ns)
        def g() -> None:
            log.append("x", x + 2)
            log.append("x", x + 3)

        g()
        g()

    f(log, 0)
    return log._dct


# ---- control flow ----------------------------------------------------------------------------


@scenario
def log_in_scans(ns: SimpleNamespace) -> Any:
    api, jnp = ns.api, ns.jnp
    out = []
    log = ns.Log()

    def body(_: Any, x: Any) -> Any:
        log.append("x", x + 1)
        api.jit(lambda: log.append("x", 2 * x) or log.append("x", 2 * x + 1))()
        api.jit(api.jit(lambda: log.append("x", x + 20)))()
        return (), ()

    api.lax.scan(body, (), jnp.arange(3))
    out.append(log._dct)
    log, box = ns.Log(), ns.Box(0)

    def inner() -> None:  # JAX's nested scans: a box carried, a log written
        i = box.get()
        log.append("x", i)
        api.jit(lambda: log.append("y", i * 2))()
        box.set(i + 1)

    def inner_body(c: Any, x: Any) -> Any:
        inner()
        return (), ()

    def middle_body(c: Any, x: Any) -> Any:
        api.lax.scan(inner_body, (), (), length=5)
        return (), ()

    api.lax.scan(middle_body, (), (), length=3)
    out.append(log._dct)
    return out


@eager_and_jit
def log_through_custom_vjp_in_scan(ns: SimpleNamespace, jit: bool) -> Any:
    log = ns.Log()

    @custom_vjp_of(ns)
    def foo(log: Any, x: Any) -> Any:
        return x

    def foo_bwd(log: Any, g: Any) -> Any:
        log.append("g", g)
        return None, g

    foo.defvjp(lambda log, x: (x, log), foo_bwd)

    def f(log: Any, c: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            return foo(log, c) * x, ()

        return ns.api.lax.scan(body, c, ns.jnp.arange(1.0, 4.0))[0]

    ns.api.grad(functools.partial(ns.api.jit(f) if jit else f, log))(1.0)
    return log._dct


@eager_and_jit
def scan_closed_over(ns: SimpleNamespace, jit: bool) -> Any:
    box = ns.Box(1.0)

    def double_it_10() -> Any:
        def body(c: Any, x: Any) -> Any:
            box.set(box.get() * 2 + x)
            return c + 1, x * 2

        return ns.api.lax.scan(body, 0, ns.jnp.arange(10.0))

    carry, ys = (ns.api.jit(double_it_10) if jit else double_it_10)()
    return carry, ys, box.get()


@scenario
def fori_loop_closed_over(ns: SimpleNamespace) -> Any:
    box = ns.Box(0.0)

    def body(i: Any, c: Any) -> Any:
        box.set(box.get() + c * i)
        return c + 1.0

    return ns.api.jit(lambda x: ns.api.lax.fori_loop(0, 4, body, x))(1.0), box.get()


@eager_and_jit
def while_loop_closed_over(ns: SimpleNamespace, jit: bool) -> Any:
    box = ns.Box(1.0)

    def f() -> Any:
        zero = ns.jnp.zeros((), "int32")

        def body(i: Any) -> Any:
            box.set(box.get() * 2.0)
            return i + 1

        return ns.api.lax.while_loop(lambda i: i + zero < 5, body, 0)

    return (ns.api.jit(f) if jit else f)(), box.get()


@scenario
def while_loop_type_change(ns: SimpleNamespace) -> Any:
    box = ns.Box([1.0])

    def body(i: Any) -> Any:
        box.set(box.get() * 2)
        return i + 1

    return ns.api.lax.while_loop(lambda i: i < 5, body, 0)


@scenario
def cond_cases(ns: SimpleNamespace) -> Any:
    @jit_of(ns)
    def doubleit(x: Any) -> Any:
        b = ns.new_box()
        b.set(x)
        b.set(b.get() + b.get())
        return b.get()

    pure = ns.api.jit(lambda x: ns.api.lax.cond(x > 0, doubleit, lambda x: x, x))

    @jit_of(ns)
    def argument(x: Any) -> Any:
        b = ns.new_box()
        b.set(x)
        ns.api.lax.cond(x > 0, lambda box: box.set(box.get() + 1), lambda _: None, b)
        return b.get()

    def closed_over(x: Any) -> Any:
        b = ns.new_box()
        b.set(1.0)
        ns.api.lax.cond(x > 0.0, lambda _: b.set(b.get() + 1.0), lambda _: None, 1.0)
        return b.get()

    return [f(x) for f in (pure, argument, closed_over) for x in (1.0, -1.0)]


# ---- autodiff --------------------------------------------------------------------------------


@eager_and_jit
def jvp_and_grad(ns: SimpleNamespace, jit: bool) -> Any:
    box = ns.Box(1.0)

    def f(x: Any) -> Any:
        y = 2 * x
        box.set(box.get() + ns.api.lax.stop_gradient(y))
        return y

    g = ns.api.jit(f) if jit else f
    y, y_dot = ns.api.jvp(g, (1.0,), (1.0,))
    return float(y), float(y_dot), box.get(), ns.api.grad(g)(1.0), box.get()


@eager_and_jit
def jvp_of_box_argument(ns: SimpleNamespace, jit: bool) -> Any:
    def f(box: Any, x: Any) -> Any:
        box.set(box.get() + x)
        return x

    box, box_dot = ns.Box(5.0), ns.Box(1.0)
    y, y_dot = ns.api.jvp(ns.api.jit(f) if jit else f, (box, 2.0), (box_dot, 1.0))
    return float(y), float(y_dot), box.get(), box_dot.get()


@scenario
def box_autodiff_stash_tangents(ns: SimpleNamespace) -> Any:
    # A primitive whose jvp rule writes its input's tangent into a box (JAX's test).
    class StashTangents(ns.hijax.HiPrimitive):  # type: ignore[misc,name-defined]
        def is_high(self, *_: Any) -> bool:
            return True

        def abstract_eval(self, box_aval: Any, x_aval: Any) -> Any:
            return x_aval, {ns.box_effect}

        def to_lojax(self, box: Any, x: Any) -> Any:
            return x

        def jvp(self, primals: Any, tangents: Any) -> Any:
            (box, x), (_, x_dot) = primals, tangents
            ns.box_set(box, x_dot)
            return x, x_dot

    stash_p = StashTangents("stash_tangents")
    box = ns.Box(0.0)
    f = ns.api.jit(lambda box, x: stash_p.bind(box, x))
    ns.api.jvp(functools.partial(f, box), (3.0,), (5.0,))
    return ns.box_get(box)


@scenario
def grad_with_box_argument(ns: SimpleNamespace) -> Any:
    box, x = ns.Box(ns.jnp.array(2.0)), ns.jnp.array(3.0)

    def loss_fn(x: Any, box: Any) -> Any:
        box.set(ns.api.lax.stop_gradient(x * 2))
        return x**2 + box.get()

    return ns.api.grad(loss_fn)(x, box), box.get()


@scenario
def grad_with_box_closed_over(ns: SimpleNamespace) -> Any:
    box = ns.Box(ns.jnp.array(2.0))

    def loss_fn(x: Any) -> Any:
        box.set(ns.api.lax.stop_gradient(x * 3))
        return x**2 + box.get()

    return ns.api.grad(loss_fn)(ns.jnp.array(4.0)), box.get()


@scenario
def aot_stages(ns: SimpleNamespace) -> Any:
    box = ns.Box(1.0)

    @jit_of(ns)
    def f(box: Any) -> None:
        box.set(box.get() + 1.0)

    assert "stablehlo" in f.lower(box).as_text()  # type: ignore[attr-defined]  # a jit
    compiled = f.lower(box).compile()  # type: ignore[attr-defined]  # a jit
    for _ in range(3):
        compiled(box)
    return box.get()


@eager_and_jit
def custom_vjp_closed_over(ns: SimpleNamespace, jit: bool) -> Any:
    box = ns.Box(0.0)

    @custom_vjp_of(ns)
    def foo(x: Any) -> Any:
        return x

    def foo_bwd(_: Any, g: Any) -> Any:
        box.set(g)
        return (g,)

    foo.defvjp(lambda x: (foo(x), None), foo_bwd)

    def f(x: Any) -> Any:
        return 2 * foo(2 * x)

    ns.api.grad(ns.api.jit(f) if jit else f)(1.0)
    return box.get()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_as_jax(name: str) -> None:
    scenario = SCENARIOS[name]
    _assert_same(_outcome(scenario, LAMINA), _outcome(scenario, JAX))


# ---- printed jaxprs --------------------------------------------------------------------------


def _programs(ns: SimpleNamespace) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    api, jnp, box = ns.api, ns.jnp, ns.Box(1.0)

    def update(b: Any, x: Any) -> Any:
        b.set(b.get() + x)
        return x * 2

    def made_inside(x: Any) -> Any:
        b = ns.new_box()
        b.set(x)
        b.set(b.get() + b.get())
        return b.get()

    def closed_over(x: Any) -> None:
        box.set(box.get() + x)

    def scan() -> Any:
        def body(c: Any, x: Any) -> Any:
            box.set(box.get() * 2 + x)
            return c + 1, x * 2

        return api.lax.scan(body, 0, jnp.arange(3.0))

    def while_loop() -> Any:
        def body(i: Any) -> Any:
            box.set(box.get() * 2.0)
            return i + 1

        return api.lax.while_loop(lambda i: i < 5, body, 0)

    def cond_argument(x: Any) -> Any:
        b = ns.new_box()
        b.set(x)
        api.lax.cond(x > 0, lambda bx: bx.set(bx.get() + 1), lambda _: None, b)
        return b.get()

    def cond_closed_over(x: Any) -> Any:
        api.lax.cond(x > 0.0, lambda _: box.set(box.get() + 1.0), lambda _: None, 1.0)
        return box.get()

    def stopped(x: Any) -> Any:
        y = x * 2
        box.set(box.get() + api.lax.stop_gradient(y))
        return y

    def fori(x: Any) -> Any:
        return api.lax.fori_loop(0, 3, lambda i, c: (box.set(box.get() + c), c + 1.0)[1], x)

    def pytree(b: Any) -> None:
        a, c = ns.box_get(b)
        ns.box_set(b, {"x": c, "y": [a, a]})

    return {
        "argument": (update, (ns.Box(1.0), 1.0)),
        "jit_argument": (api.jit(update), (ns.Box(1.0), 1.0)),
        "made_inside": (made_inside, (1.0,)),
        "jit_made_inside": (api.jit(made_inside), (1.0,)),
        "closed_over": (closed_over, (1.0,)),
        "jit_closed_over": (api.jit(closed_over), (1.0,)),
        "scan": (scan, ()),
        "jit_scan": (api.jit(scan), ()),
        "while_loop": (while_loop, ()),
        "cond_argument": (cond_argument, (1.0,)),
        "cond_closed_over": (cond_closed_over, (1.0,)),
        "grad": (api.grad(stopped), (1.0,)),
        "grad_jit": (api.grad(api.jit(stopped)), (1.0,)),
        "jvp": (lambda x: api.jvp(stopped, (x,), (1.0,)), (1.0,)),
        "fori_loop": (fori, (1.0,)),
        "pytree": (pytree, (ns.Box([jnp.float32(1), jnp.arange(2)]),)),
        "returned": (lambda x: ns.Box(x), (1.0,)),
    }


@pytest.mark.parametrize("name", sorted(_programs(JAX)))
def test_jaxpr_as_jax(name: str) -> None:
    fun, args = _programs(LAMINA)[name]
    jfun, jargs = _programs(JAX)[name]
    assert str(lamina.make_jaxpr(fun)(*args)) == str(jax.make_jaxpr(jfun)(*jargs))


# ---- flax's hijax Variables under `lamina.as_jax` ------------------------------------------

FLAX_PROGRAM = """
import flax
import jax
import jax.numpy as jnp
from flax import nnx

flax.config.update("flax_hijax_variable", True)
v = nnx.Variable(jnp.array(1.0))
print(type(v).__name__, jax.typeof(v))


def f(x):
    v[...] = v[...] + x
    return v[...] * 2


print(f(2.0), v[...])
print(jax.jit(f)(2.0), v[...])
print(jax.make_jaxpr(f)(2.0))
print(jax.grad(lambda x: v[...] * x)(3.0))
"""


@pytest.mark.skipif(importlib.util.find_spec("flax") is None, reason="flax is not installed")
def test_flax_hijax_variables_as_jax(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    script.write_text(FLAX_PROGRAM)
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args, str(script)], cwd=tmp_path, env=environ,
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    on_lamina, on_jax = run("-m", "lamina.as_jax"), run()
    assert on_jax.returncode == 0, on_jax.stderr
    assert on_lamina.returncode == 0, on_lamina.stderr
    assert on_lamina.stdout == on_jax.stdout
    assert "get_variable" in on_jax.stdout  # the Variable is a hi value of the jaxpr
