"""The errors JAX users rely on, raised with JAX's classes and messages (issue 13, item 8):
every class of `jax.errors`, where JAX raises it, with its text (file paths and line numbers
left out); leak reports; tracer copies; `jax.dtypes.canonicalize_dtype(None)`."""

from __future__ import annotations

import builtins
import copy
import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina


def _branchy(x: Any) -> Any:
    if x > 0:
        return x
    return -x


def _leak_then_use(api: Any, transform: str) -> Any:
    leaked: list[Any] = []

    def leak(x: Any) -> Any:
        leaked.append(x * 2)
        return x

    if transform == "jit":
        api.jit(leak)(1.0)
    else:
        api.grad(leak)(1.0)
    return api.numpy.sin(leaked[0])


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("F7 bool under jit", lambda api: api.jit(_branchy)(1.0)),
    ("F8c int under jit", lambda api: api.jit(lambda x: int(x))(np.int32(1))),
    ("float under jit", lambda api: api.jit(lambda x: float(x))(1.0)),
    ("index under jit", lambda api: api.jit(lambda x: [0, 1][x])(np.int32(1))),
    ("asarray under jit", lambda api: api.jit(lambda x: np.asarray(x))(1.0)),
    ("bool under make_jaxpr", lambda api: api.make_jaxpr(_branchy)(np.float32(1))),
]


def _outcome(api: Any, call: Callable[[Any], Any]) -> tuple[str, str]:
    with pytest.raises(Exception) as info:
        call(api)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
def test_message_is_jax(name: str, call: Callable[[Any], Any]) -> None:
    assert _outcome(lamina, call) == _outcome(jax, call)


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_leaked_tracer_names_its_kind_as_jax(transform: str) -> None:
    ours = _outcome(lamina, lambda api: _leak_then_use(api, transform))
    theirs = _outcome(jax, lambda api: _leak_then_use(api, transform))
    assert ours[0] == theirs[0] == "UnexpectedTracerError"
    assert ours[1].splitlines()[:2] == theirs[1].splitlines()[:2]


def test_python_control_flow_works_under_grad_without_jit() -> None:
    assert float(lamina.grad(_branchy)(2.0)) == float(jax.grad(_branchy)(2.0)) == 1.0


def test_errors_module() -> None:
    assert issubclass(
        lamina.errors.TracerBoolConversionError, lamina.errors.ConcretizationTypeError
    )
    assert issubclass(lamina.errors.ConcretizationTypeError, TypeError)


# Each error JAX users meet, where JAX raises it: the class (`lamina.errors.X` itself, as
# `jax.errors.X`), and the text with file paths and line numbers left out.

_PATHS = re.compile(r'(File )?"?(/[^\s"]+|<[\w-]+>)\.?(py)?"?:\d+(:\d+)?( \(\w+\))?')


def _normalized(text: str) -> str:
    return re.sub(r"\b\d{6,}\b", "N", _PATHS.sub("<path>", text))


def _raised(call: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), _normalized(str(info.value))


def _case_id(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _derived_bool(api: Any) -> Any:
    def f(x: Any) -> Any:
        y = api.numpy.ones(3) * 2.0  # a value made by JAX operations, not from the argument
        return x if bool(y.sum() > 0) else -x

    return api.jit(f)(1.0)


ERROR_CASES: list[Any] = [
    ("TracerArrayConversionError", "np.asarray", lambda api: api.jit(np.asarray)(1.0)),
    (
        "TracerArrayConversionError",
        "np.array of sum",
        lambda api: api.jit(lambda x: np.array(x.sum()))(np.ones(2)),
    ),
    pytest.param(
        "TracerArrayConversionError",
        "__array__ in vmap",
        lambda api: api.vmap(np.sin)(np.ones(2)),
        marks=pytest.mark.xfail(
            strict=True, reason="JAX adds where the BatchTracer was created; Lamina does not"
        ),
    ),
    ("TracerBoolConversionError", "if", lambda api: api.jit(_branchy)(1.0)),
    ("TracerBoolConversionError", "derived", _derived_bool),
    ("TracerIntegerConversionError", "index", lambda api: api.jit(lambda i: [1, 2][i])(1)),
    ("TracerIntegerConversionError", "range", lambda api: api.jit(lambda n: range(n))(3)),
    ("ConcretizationTypeError", "float", lambda api: api.jit(lambda x: float(x))(1.0)),
    ("ConcretizationTypeError", "float builtin", lambda api: api.jit(float)(1.0)),
    ("TypeError", "shape", lambda api: api.jit(api.numpy.zeros)(3)),
    ("ConcretizationTypeError", "arange", lambda api: api.jit(api.numpy.arange)(3)),
    ("ConcretizationTypeError", "devices()", lambda api: api.jit(lambda x: x.devices())(1.0)),
    (
        "NonConcreteBooleanIndexError",
        "mask",
        lambda api: api.jit(lambda x: x[x > 0])(np.ones(3)),
    ),
    (
        "NonConcreteBooleanIndexError",
        "mask set",
        lambda api: api.jit(lambda x: x.at[x > 0].set(0.0))(np.ones(3)),
    ),
    pytest.param(
        "UnexpectedTracerError",
        "leaked into a later call",
        lambda api: _leak_then_use(api, "jit"),
        marks=pytest.mark.xfail(
            strict=True, reason="JAX adds the stack frames where the value was created"
        ),
    ),
]


@pytest.mark.parametrize(("kind", "name", "case"), ERROR_CASES, ids=_case_id)
def test_error_class_and_text_as_jax(kind: str, name: str, case: Callable[[Any], Any]) -> None:
    theirs = _raised(lambda: case(jax))
    ours = _raised(lambda: case(lamina))
    if hasattr(jax.errors, kind):
        assert theirs[0] is getattr(jax.errors, kind)
        assert ours[0] is getattr(lamina.errors, kind)
    else:
        assert theirs[0] is ours[0] is getattr(builtins, kind)
    assert ours[1] == theirs[1]


def test_became_a_tracer_lines_are_jax() -> None:
    texts = [_raised(functools.partial(_derived_bool, api))[1] for api in (jax, lamina)]
    assert "This value became a tracer due to JAX operations on these lines" in texts[0]
    assert texts[1] == texts[0]


def test_errors_module_lists_jax_errors() -> None:
    theirs = sorted(n for n in dir(jax.errors) if not n.startswith("_"))
    assert sorted(lamina.errors.__all__) == theirs
    for name in theirs:
        ours, original = getattr(lamina.errors, name), getattr(jax.errors, name)
        assert ours.__name__ == original.__name__
        assert [c.__name__ for c in ours.__mro__ if c.__module__ == "builtins"] == [
            c.__name__ for c in original.__mro__ if c.__module__ == "builtins"
        ]


def test_runtime_error_is_jax_runtime_error() -> None:
    def failing(api: Any) -> Any:
        def callback(x: Any) -> Any:
            raise ValueError("from the callback")

        def f(x: Any) -> Any:
            shape = jax.ShapeDtypeStruct((), np.float32)  # type: ignore[no-untyped-call]
            return api.pure_callback(callback, shape, x)

        return np.asarray(api.jit(f)(np.float32(1.0)))

    theirs, ours = _raised(lambda: failing(jax)), _raised(lambda: failing(lamina))
    assert theirs[0] is jax.errors.JaxRuntimeError
    assert ours[0] is lamina.errors.JaxRuntimeError
    assert ours[1].splitlines()[0] == theirs[1].splitlines()[0]


def _copies(api: Any) -> str:
    def f(x: Any) -> Any:
        return (
            copy.copy(x),
            copy.deepcopy(x),
            x.copy(),
            x.__copy__(),
            x.__deepcopy__({}),
            list(reversed(x)),
        )

    return str(api.make_jaxpr(f)(np.arange(3, dtype=np.float32)))


def test_tracer_copies_and_reversed_as_jax() -> None:
    assert _copies(lamina) == _copies(jax)


@pytest.mark.parametrize("x64", [False, True])
def test_canonicalize_dtype_none_as_jax(x64: bool) -> None:
    with jax.enable_x64(x64):
        theirs = jax.dtypes.canonicalize_dtype(None)
    with lamina.enable_x64(x64):
        ours = lamina.dtypes.canonicalize_dtype(None)
    assert ours == theirs
