"""`jit`'s caches are keyed as JAX's: on the function (held weakly), its static arguments, the
arguments' types and the configuration tracing reads, not on the `jit` wrapper.

Each scenario runs once with Lamina and once with JAX (the oracle) and counts traces with a side
effect in the Python function, as JAX's documentation does; both must trace as often and return
the same values, the gotchas of JAX's documentation included (a global changed after the first
call is not seen; a new lambda is a new function).
"""

from __future__ import annotations

import functools
import gc
import logging
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina
import lamina_runtime as lr
from lamina_core.transforms import TraceCaches, trace_caches

f32 = np.float32
X = np.arange(3, dtype=f32)
SCALE = 1.0
"""Read by a scenario's function as a global, and changed after its first call."""

Scenario = Callable[[ModuleType], tuple[int, list[Any]]]
"""`scenario(api) -> (traces, results)`: what it ran, counted and returned with `api`."""


def _counted() -> tuple[list[int], Callable[[], None]]:
    count = [0]

    def tick() -> None:
        count[0] += 1

    return count, tick


def _run(api: ModuleType, body: Callable[[Callable[[], None]], list[Any]]) -> tuple[int, list[Any]]:
    count, tick = _counted()
    results = body(tick)
    return count[0], [np.asarray(r).tolist() for r in results]


def _new_wrappers(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any) -> Any:
            tick()
            return x * 2

        return [api.jit(f)(X) for _ in range(3)]

    return _run(api, body)


def _new_lambdas(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def plus_one(x: Any) -> Any:
            tick()
            return x + 1

        # `lambda x: plus_one(x)` is a new function each time, though its code is the same.
        return [api.jit(lambda x: plus_one(x))(X) for _ in range(3)]

    return _run(api, body)


def _distinct_functions_of_one_code(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def make(k: float) -> Callable[[Any], Any]:
            def f(x: Any) -> Any:
                tick()
                return x + k

            return f

        f, g = make(1.0), make(2.0)
        return [api.jit(f)(X), api.jit(g)(X), api.jit(f)(X), api.jit(g)(X)]

    return _run(api, body)


def _global_changed_after_first_call(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        global SCALE

        def f(x: Any) -> Any:
            tick()
            return x * SCALE

        SCALE = 1.0
        first = api.jit(f)(X)
        SCALE = 10.0  # a cached trace does not see it, in a new wrapper either
        try:
            return [first, api.jit(f)(X), api.jit(f)(X + 1)]
        finally:
            SCALE = 1.0

    return _run(api, body)


def _captured_variable_changed(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        k = 1.0

        def f(x: Any) -> Any:
            tick()
            return x + k

        first = api.jit(f)(X)
        k = 5.0  # the same function object: its cached trace answers
        return [first, api.jit(f)(X), api.jit(lambda x: x + k)(X)]

    return _run(api, body)


def _new_partials(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def h(a: float, x: Any) -> Any:
            tick()
            return x * a

        fresh = [api.jit(functools.partial(h, 2.0))(X) for _ in range(3)]
        p = functools.partial(h, 3.0)
        return [*fresh, *[api.jit(p)(X) for _ in range(3)]]

    return _run(api, body)


class _Model:
    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.tick: Callable[[], None] = lambda: None

    def apply(self, x: Any) -> Any:
        self.tick()
        return x * self.scale


def _bound_methods(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        m, other = _Model(2.0), _Model(3.0)
        m.tick = other.tick = tick
        # A new bound method each time, its wrapper gone before the next: a new function.
        fresh = [api.jit(m.apply)(X) for _ in range(2)]
        m.scale = 4.0  # so the next trace sees it
        kept = api.jit(m.apply)
        first = kept(X)
        m.scale = 5.0  # an equal bound method of a live one finds its trace: not seen
        equal = api.jit(m.apply)(X)
        return [*fresh, first, equal, api.jit(other.apply)(X)]

    return _run(api, body)


def _equal_callables(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        class Affine:
            def __init__(self, k: float) -> None:
                self.k = k

            def __eq__(self, other: object) -> bool:
                return isinstance(other, Affine) and other.k == self.k

            def __hash__(self) -> int:
                return hash(self.k)

            def __call__(self, x: Any) -> Any:
                tick()
                return x + self.k

        a, b, c = Affine(1.0), Affine(1.0), Affine(2.0)
        return [api.jit(a)(X), api.jit(b)(X), api.jit(c)(X)]

    return _run(api, body)


def _static_arguments(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any, n: int = 1) -> Any:
            tick()
            return x * n

        by_num = functools.partial(api.jit, f, static_argnums=1)
        by_name = functools.partial(api.jit, f, static_argnames="n")
        return [
            by_num()(X, 2),
            by_num()(X, 2),
            by_name()(X, 2),  # the same static argument, named: the same trace
            by_num()(X, 3),
            by_name()(X, n=2),  # passed by keyword: another argument tree
        ]

    return _run(api, body)


def _options_that_do_not_change_the_trace(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any) -> Any:
            tick()
            return x * 2

        return [
            api.jit(f)(X),
            api.jit(f, donate_argnums=0)(np.array(X)),
            api.jit(f, keep_unused=True)(X),
            api.jit(f, inline=True)(X),
        ]

    return _run(api, body)


def _argument_types(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any) -> Any:
            tick()
            return x * 2

        args = [X, X + 1, X.astype(np.int32), 1.0, 2.0, f32(1.0), 3, X[:2]]
        return [api.jit(f)(a) for a in args]

    return _run(api, body)


def _configuration(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any) -> Any:
            tick()
            return x + 1

        out = [api.jit(f)(1)]
        with api.enable_x64(True):
            out.append(api.jit(f)(1))
        out.append(api.jit(f)(1))
        return out

    return _run(api, body)


def _inner_and_transformed(api: ModuleType) -> tuple[int, list[Any]]:
    def body(tick: Callable[[], None]) -> list[Any]:
        def f(x: Any) -> Any:
            tick()
            return x * x

        def outer(x: Any) -> Any:
            return api.jit(f)(x) + 1

        return [
            api.jit(f)(X),
            api.jit(outer)(X),  # the inner trace is the top-level one's
            api.jit(outer)(X),
            api.grad(lambda x: api.jit(f)(x).sum())(X),
            api.grad(lambda x: api.jit(f)(x).sum())(X),
            api.vmap(api.jit(f))(X),
        ]

    return _run(api, body)


SCENARIOS: dict[str, Scenario] = {
    "same function, new wrappers": _new_wrappers,
    "new lambda each call": _new_lambdas,
    "distinct functions of one code": _distinct_functions_of_one_code,
    "global changed after the first call": _global_changed_after_first_call,
    "captured variable changed after the first call": _captured_variable_changed,
    "new and kept partials": _new_partials,
    "bound methods": _bound_methods,
    "equal callables": _equal_callables,
    "static arguments": _static_arguments,
    "options that do not change the trace": _options_that_do_not_change_the_trace,
    "argument types": _argument_types,
    "configuration": _configuration,
    "inner jit, grad and vmap": _inner_and_transformed,
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_traces_as_often_as_jax_and_returns_what_jax_returns(name: str) -> None:
    scenario = SCENARIOS[name]
    assert scenario(lamina) == scenario(jax)


def test_a_new_wrapper_reuses_the_lowering_and_cxx_dispatch_entries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def mlp(params: Any, x: Any) -> Any:
        for w, b in params:
            x = lamina.numpy.tanh(x @ w + b)
        return x

    params = [(np.eye(4, dtype=f32), np.zeros(4, f32))] * 3
    x = lr.device_put(np.ones((2, 4), f32))
    # each compilation is logged as JAX logs it, on JAX's logger
    with caplog.at_level(logging.DEBUG, logger="jax._src.interpreters.pxla"):
        first = lamina.jit(mlp)
        first(params, x)
        wrappers = [lamina.jit(mlp) for _ in range(3)]
        outs = [w(params, x) for w in wrappers]
    compiles = [r for r in caplog.records if r.getMessage().startswith("Compiling jit(mlp)")]
    assert len(compiles) == 1
    for w, out in zip(wrappers, outs, strict=True):
        function = lr.jit_function_of(w)
        assert function is not None and function.dispatch_misses == 0  # C++ repeated the call
        expected = np.tanh(np.tanh(np.tanh(np.ones((2, 4)))))
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_wrappers_with_other_options_share_the_trace_but_not_the_compiled_call() -> None:
    def f(x: Any) -> Any:
        return x * 2

    plain, kept = (
        lr.jit_function_of(lamina.jit(f)),
        lr.jit_function_of(lamina.jit(f, keep_unused=True)),
    )
    assert plain is not None and kept is not None
    assert plain._traces is kept._traces
    assert plain._calls is not kept._calls


def test_a_function_s_caches_go_when_it_is_collected() -> None:
    def make() -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            return x + 1

        return f

    f = make()
    lamina.jit(f)(X)
    assert f in trace_caches
    size = len(trace_caches)
    alive = weakref.ref(f)
    gc.disable()  # the wrapper holds no cycle: reference counting alone frees it all
    try:
        del f
        assert alive() is None
        assert len(trace_caches) == size - 1
    finally:
        gc.enable()


def test_a_bound_method_s_caches_go_with_its_last_wrapper() -> None:
    model = _Model(2.0)
    wrapper = lamina.jit(model.apply)
    wrapper(X)
    assert model.apply in trace_caches  # an equal bound method finds them
    del wrapper
    assert model.apply not in trace_caches


def test_the_index_is_bounded_and_live_wrappers_keep_their_caches() -> None:
    index = TraceCaches(capacity=2)
    functions = [lambda x: x, lambda x: x + 1, lambda x: x + 2]
    caches = [index.of(f) for f in functions]
    assert len(index) == 2
    assert functions[0] not in index and functions[2] in index
    assert index.of(functions[1]) is caches[1]
    assert index.of(functions[0]) is not caches[0]  # forgotten: new caches


def test_functions_that_cannot_be_held_weakly_or_hashed_still_jit() -> None:
    count = [0]

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]  # JAX refuses such a function

        def __call__(self, x: Any) -> Any:
            count[0] += 1
            return x + 1

    class Slotted:
        __slots__ = ()

        def __call__(self, x: Any) -> Any:
            count[0] += 1
            return x + 2

    for fun, expected in ((Unhashable(), X + 1), (Slotted(), X + 2)):
        count[0] = 0
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(lamina.jit(fun)(X)), expected)
        assert fun not in trace_caches and count[0] == 2  # each wrapper its own caches


def test_clear_cache_of_one_wrapper_forgets_the_function_s_traces() -> None:
    count = [0]

    def f(x: Any) -> Any:
        count[0] += 1
        return x - 1

    first = lamina.jit(f)
    first(X)
    other = lamina.jit(f)
    first.clear_cache()
    lamina.jit(f)(X)
    assert count[0] == 2
    np.testing.assert_array_equal(np.asarray(other(X)), X - 1)


def test_clear_caches_forgets_every_function() -> None:
    count = [0]

    def f(x: Any) -> Any:
        count[0] += 1
        return x * 3

    lamina.jit(f)(X)
    lamina.clear_caches()
    assert f not in trace_caches
    lamina.jit(f)(X)
    assert count[0] == 2


@pytest.mark.parametrize(
    ("option", "value"),
    [("jax_check_static_indices", True), ("jax_embedded_constants_max_bytes", 1 << 20)],
)
def test_options_jax_traces_again_for_are_in_the_key(option: str, value: Any) -> None:
    count = [0]
    table = np.arange(64, dtype=f32)

    def f(x: Any) -> Any:
        count[0] += 1
        return x + table[:3]

    lamina.jit(f)(X)
    with lamina.config(**{option: value}):
        lamina.jit(f)(X)
    lamina.jit(f)(X)
    assert count[0] == 2
