"""Issue 37's regressions, against JAX: `jit(inline=True)` stages its callee's equations into
the caller's jaxpr under any trace; `jit(partial(f, ...))` is named after `f`; and the float0
cotangent of an integer input is a host array of JAX's type, eagerly and from `jit`, on the
first and on C++-dispatched calls."""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina
import lamina_runtime

pytestmark = pytest.mark.oracle

X = np.arange(6, dtype=np.float32).reshape(2, 3)
F0 = np.zeros((), jax.dtypes.float0)


def _both(case: Callable[[ModuleType], Any]) -> tuple[Any, Any]:
    return case(jax), case(lamina)


def _python_calls(jitted: Any) -> int:
    """The calls of `jitted` C++ dispatch handed to Python (the others it repeated itself)."""
    function = lamina_runtime.jit_function_of(jitted)
    assert function is not None
    return function.dispatch_misses


# ---- jit(inline=True) ------------------------------------------------------------------------


def _double(api: ModuleType) -> Any:
    return api.jit(lambda b: b * 2, inline=True)


def _closing_over(api: ModuleType) -> Any:
    def f(a: Any) -> Any:
        return api.jit(lambda b: b * a, inline=True)(a)

    return api.make_jaxpr(f)(X)


def _printing(api: ModuleType) -> Any:
    def body(b: Any) -> Any:
        api.debug.print("v {}", b)
        return b * 2

    return api.make_jaxpr(lambda a: api.jit(body, inline=True)(a) + 1)(X)


def _with_ref(api: ModuleType) -> Any:
    def f(a: Any) -> Any:
        r = api.new_ref(a)
        api.jit(lambda rr: rr.__setitem__(..., rr[...] * 2), inline=True)(r)
        return r[...]

    return api.make_jaxpr(f)(X)


INLINE_CASES: list[tuple[str, Callable[[ModuleType], Any]]] = [
    ("make_jaxpr", lambda api: api.make_jaxpr(lambda a: _double(api)(a) + 1)(X)),
    ("under jit", lambda api: api.make_jaxpr(api.jit(lambda a: _double(api)(a) + 1))(X)),
    ("under grad", lambda api: api.make_jaxpr(api.grad(lambda a: _double(api)(a).sum()))(X)),
    ("under vmap", lambda api: api.make_jaxpr(api.vmap(lambda a: _double(api)(a) + 1))(X)),
    (
        "under jvp",
        lambda api: api.make_jaxpr(lambda a, t: api.jvp(_double(api), (a,), (t,)))(X, X),
    ),
    ("under vjp", lambda api: api.make_jaxpr(lambda a: api.vjp(_double(api), a)[1](a))(X)),
    (
        "grad of a jit around it",
        lambda api: api.make_jaxpr(
            api.grad(lambda a: api.jit(lambda c: _double(api)(c) * c)(a).sum())
        )(X),
    ),
    ("under checkpoint", lambda api: api.make_jaxpr(api.checkpoint(_double(api)))(X)),
    (
        "scan body",
        lambda api: api.make_jaxpr(
            lambda a: api.lax.scan(lambda c, y: (_double(api)(c), y), a, a)[0]
        )(X),
    ),
    (
        "nested inline",
        lambda api: api.make_jaxpr(
            api.jit(lambda b: api.jit(lambda c: c * 3, inline=True)(b) + 1, inline=True)
        )(X),
    ),
    (
        "static argument",
        lambda api: api.make_jaxpr(
            lambda a: api.jit(lambda b, k: b * k, inline=True, static_argnums=1)(a, 3.0)
        )(X),
    ),
    (
        "constant argument",
        lambda api: api.make_jaxpr(lambda a: api.jit(lambda b: b + 1.0, inline=True)(2.0) * a)(X),
    ),
    ("closing over a tracer", _closing_over),
    ("with an effect", _printing),
    ("updating a Ref", _with_ref),
    (
        "keep_unused",
        lambda api: api.make_jaxpr(
            api.jit(lambda a: api.jit(lambda b: b * 2, inline=True, keep_unused=True)(a))
        )(X),
    ),
]


@pytest.mark.parametrize("case", [c for _, c in INLINE_CASES], ids=[n for n, _ in INLINE_CASES])
def test_inline_jit_stages_its_equations_as_jax(case: Callable[[ModuleType], Any]) -> None:
    theirs, ours = _both(case)
    assert str(ours) == str(theirs)


def test_inline_jit_printed_exactly() -> None:
    printed = str(lamina.make_jaxpr(lambda a: _double(lamina)(a) + 1)(X))
    assert printed == (
        "{ lambda ; a:f32[2,3]. let\n"
        "    b:f32[2,3] = mul a 2.0:f32[]\n"
        "    c:f32[2,3] = add b 1.0:f32[]\n"
        "  in (c,) }"
    )


def test_inline_jit_with_shardings_stays_a_call() -> None:
    # JAX inlines only a call given no shardings or layouts.
    def case(api: ModuleType) -> Any:
        g = api.jit(lambda b: b * 2, inline=True, out_shardings=None)
        return api.make_jaxpr(lambda a: g(a))(X)

    theirs, ours = _both(case)
    assert str(ours) == str(theirs)


def test_inline_jit_eagerly_compiles_and_runs() -> None:
    theirs, ours = _both(lambda api: _double(api)(X))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert type(ours) is lamina.Array
    g = _double(lamina)
    g(X)
    g(X)
    assert _python_calls(g) == 1  # then repeated by C++


def test_lowered_module_of_a_caller_as_jax() -> None:
    def case(api: ModuleType) -> str:
        return str(api.jit(lambda a: _double(api)(a) + 1).lower(X).as_text())

    theirs, ours = _both(case)
    assert ours == theirs


# ---- names of jitted partials ----------------------------------------------------------------


def _f(a: Any, k: float = 1.0) -> Any:
    return a * k


class _Callable:
    def __call__(self, a: Any) -> Any:
        return a + 1


FUNCTIONS: list[tuple[str, Callable[[], Callable[..., Any]]]] = [
    ("partial", lambda: functools.partial(_f, k=2.0)),
    ("partial of a partial", lambda: functools.partial(functools.partial(_f, k=2.0))),
    ("partial of a lambda", lambda: functools.partial(lambda a, k: a * k, k=2.0)),
    ("callable object", _Callable),
    ("partial of a callable object", lambda: functools.partial(_Callable())),
]
FUNS = pytest.mark.parametrize("make", [m for _, m in FUNCTIONS], ids=[n for n, _ in FUNCTIONS])


@FUNS
def test_jit_equation_named_as_jax(make: Callable[[], Callable[..., Any]]) -> None:
    fun = make()
    theirs, ours = _both(lambda api: api.make_jaxpr(api.jit(fun))(X))
    assert str(ours) == str(theirs)
    theirs, ours = _both(lambda api: api.make_jaxpr(lambda a: api.jit(fun)(a) * 2)(X))
    assert str(ours) == str(theirs)


@FUNS
def test_lowered_module_named_as_jax(make: Callable[[], Callable[..., Any]]) -> None:
    fun = make()
    theirs, ours = _both(lambda api: api.jit(fun).lower(X).as_text().splitlines()[0])
    assert ours == theirs


def test_lowered_module_of_a_partial_is_named_after_its_function() -> None:
    text = lamina.jit(functools.partial(_f, k=2.0)).lower(X).as_text()
    assert text.startswith("module @jit__f ")


@FUNS
def test_traced_and_wrapper_names_as_jax(make: Callable[[], Callable[..., Any]]) -> None:
    fun = make()
    for transform in ("jit", "grad", "vmap", "checkpoint", "value_and_grad", "jacfwd", "jacrev"):

        def names(api: ModuleType, transform: str = transform) -> tuple[Any, ...]:
            wrapped = getattr(api, transform)(fun)
            return (wrapped.__name__, wrapped.__qualname__, wrapped.__module__)

        theirs, ours = _both(names)
        assert ours == theirs, transform
    theirs, ours = _both(lambda api: api.jit(fun).trace(X).fun_name)
    assert ours == theirs


@FUNS
def test_custom_jvp_named_as_jax(make: Callable[[], Callable[..., Any]]) -> None:
    fun = make()

    def case(api: ModuleType) -> Any:
        wrapped = api.custom_jvp(fun)
        wrapped.defjvp(lambda p, t: (fun(*p), t[0]))
        return api.make_jaxpr(wrapped)(X)

    theirs, ours = _both(case)
    assert str(ours) == str(theirs)


def test_error_names_the_wrapped_function() -> None:
    fun = functools.partial(lambda a, k: float(a) * k, k=2.0)

    def case(api: ModuleType) -> tuple[str, str]:
        with pytest.raises(Exception) as info:
            api.jit(fun)(1.0)
        return type(info.value).__name__, str(info.value)

    theirs, ours = _both(case)
    assert ours == theirs


# ---- float0 cotangents -----------------------------------------------------------------------


def _float0_facts(value: Any) -> tuple[Any, ...]:
    return (
        type(value).__name__,
        isinstance(value, np.ndarray),
        repr(value),
        str(value),
        value.dtype,
        value.shape,
        np.asarray(value).dtype,
        type(np.asarray(value)),
        bool(np.all(value == np.zeros(value.shape, jax.dtypes.float0))),
    )


def _grad_both(api: ModuleType) -> Any:
    return api.grad(lambda a, i: a * i, argnums=(0, 1), allow_int=True)


def _int_grad(api: ModuleType) -> Any:
    return api.jit(lambda i: api.grad(lambda a, i: a * i, argnums=1, allow_int=True)(2.0, i))


FLOAT0_CASES: list[tuple[str, Callable[[ModuleType], Any]]] = [
    ("eager", lambda api: _grad_both(api)(2.0, 3)[1]),
    ("vjp", lambda api: api.vjp(lambda a, i: a * i, 2.0, 3)[1](1.0)[1]),
    ("jvp", lambda api: api.jvp(lambda a, i: (a * i, i), (2.0, 3), (1.0, F0))[1][1]),
    (
        "dict",
        lambda api: api.grad(lambda d: d["a"] * d["i"], allow_int=True)({"a": 2.0, "i": 3})["i"],
    ),
    (
        "vmap",
        lambda api: api.vmap(api.grad(lambda a, i: a * i, argnums=1, allow_int=True), (None, 0))(
            2.0, np.arange(3)
        ),
    ),
    (
        "jit of vmap",
        lambda api: api.jit(
            api.vmap(api.grad(lambda a, i: a * i, argnums=1, allow_int=True), (None, 0))
        )(2.0, np.arange(3)),
    ),
    ("jit of grad", lambda api: api.jit(_grad_both(api))(2.0, 3)[1]),
    ("grad inside jit", lambda api: _int_grad(api)(3)),
    ("jit constant", lambda api: api.jit(lambda: np.zeros((2,), jax.dtypes.float0))()),
    ("jit argument", lambda api: api.jit(lambda z: z)(np.zeros((2,), jax.dtypes.float0))),
]


@pytest.mark.parametrize("case", [c for _, c in FLOAT0_CASES], ids=[n for n, _ in FLOAT0_CASES])
def test_float0_results_as_jax(case: Callable[[ModuleType], Any]) -> None:
    theirs, ours = _both(case)
    assert _float0_facts(ours) == _float0_facts(theirs)


def test_float0_result_repr() -> None:
    g = _grad_both(lamina)(2.0, 3)[1]
    assert repr(g) == "TypedNdArray((b'',), dtype=void)"
    assert g.dtype == lamina.dtypes.float0
    assert g == np.zeros((), lamina.dtypes.float0)
    assert type(pickle.loads(pickle.dumps(g))) is type(g)


@pytest.mark.parametrize(
    "make",
    [lambda api: api.jit(_grad_both(api)), _int_grad],
    ids=["jit of grad", "grad inside jit"],
)
def test_float0_results_of_repeated_calls_as_jax(make: Callable[[ModuleType], Any]) -> None:
    args = (2.0, 3) if make is not _int_grad else (3,)
    theirs_fn, ours_fn = make(jax), make(lamina)
    for _ in range(3):  # the first call traces; later ones are repeated by C++ dispatch
        theirs, ours = theirs_fn(*args), ours_fn(*args)
        t_leaves, o_leaves = jax.tree.leaves(theirs), lamina.tree_util.tree_leaves(ours)
        assert [_float0_facts(t) for t in t_leaves if t.dtype == jax.dtypes.float0] == [
            _float0_facts(o) for o in o_leaves if o.dtype == lamina.dtypes.float0
        ]
        assert [repr(t) for t in t_leaves] == [repr(o) for o in o_leaves]
    assert _python_calls(ours_fn) == 1


def test_float0_arguments_are_not_dispatched_by_value() -> None:
    f = lamina.jit(lambda z, a: (z, a + 1))
    for _ in range(3):
        z, a = f(np.zeros((2,), jax.dtypes.float0), 1.0)
        assert _float0_facts(z) == _float0_facts(
            jax.jit(lambda z, a: (z, a + 1))(np.zeros((2,), jax.dtypes.float0), 1.0)[0]
        )
        assert float(a) == 2.0


def test_jacrev_with_respect_to_an_int_as_jax() -> None:
    def case(api: ModuleType) -> str:
        return repr(api.jacrev(lambda a, i: a * i, argnums=1, allow_int=True)(2.0, 3))

    theirs, ours = _both(case)
    assert ours == theirs


FLOAT0_ERRORS: list[tuple[str, Callable[[ModuleType], Any]]] = [
    ("array == float0", lambda api: api.numpy.ones(()) == F0),
    ("array + grad", lambda api: api.numpy.ones(()) + _grad_both(api)(2.0, 3)[1]),
    ("add", lambda api: api.numpy.add(F0, 1.0)),
    ("sin", lambda api: api.numpy.sin(F0)),
    ("multiply", lambda api: api.numpy.multiply(np.ones(3), np.zeros(3, jax.dtypes.float0))),
    ("power", lambda api: api.numpy.power(F0, 2)),
    ("floor_divide", lambda api: api.numpy.floor_divide(F0, 2)),
    ("under jit", lambda api: api.jit(lambda a: a + 1.0)(F0)),
]


@pytest.mark.parametrize("case", [c for _, c in FLOAT0_ERRORS], ids=[n for n, _ in FLOAT0_ERRORS])
def test_operations_on_float0_raise_as_jax(case: Callable[[ModuleType], Any]) -> None:
    def raised(api: ModuleType) -> tuple[str, str]:
        with pytest.raises(TypeError) as info:
            case(api)
        return type(info.value).__name__, str(info.value)

    theirs, ours = _both(raised)
    assert ours == theirs
