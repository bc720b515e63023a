"""The control-flow corpus (issue 15) against JAX 0.10.2: every program of
`control_flow_programs.py` traced, run, differentiated and batched by Lamina and by JAX.

Each check is its own test id, `test_<check>[<program>]`:

- `jaxpr`: `make_jaxpr` printed text, byte for byte;
- `eager`, `jit`: values (dtypes, shapes, numbers to float32 tolerance);
- `grad_jaxpr`, `grad`: `grad` of the sum of the float outputs with respect to the first
  argument (programs whose first argument is floating point);
- `jvp_jaxpr`, `jvp`: `jvp` along every floating-point argument (the values are `slow`);
- `vmap_jaxpr`, `vmap`: `vmap` over a batch of 3 on axis 0 of every argument (floats scaled,
  integers shifted, so predicates and loop bounds become batched).

Where JAX raises, Lamina must raise the same exception class with the same first line. The
error cases compare the whole message, with file paths, line numbers, object addresses and the
modules of printed classes normalised.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.testing import load_test_module

pytestmark = pytest.mark.oracle

corpus = load_test_module(Path(__file__).parent, "control_flow_programs")
PROGRAMS: list[Any] = corpus.PROGRAMS
ERRORS: list[Any] = corpus.ERRORS
BATCH = 3
SCALES = (1.0, 0.9, 1.1)
INT_SHIFTS = (0, 1, -1)

_PATH = re.compile(r"(/[^\s:'\"()]+)+\.py(:\d+)?")
_ADDRESS = re.compile(r"0x[0-9a-f]+")
# `<class 'jax._src.core.ShapedArray'>` and `<class 'lamina_core.ir._avals.ShapedArray'>` name the
# same concept from each side's own module.
_CLASS = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")


def _normalised(message: str) -> str:
    message = _CLASS.sub(r"<class '\1'>", message)
    return _ADDRESS.sub("0x…", _PATH.sub("FILE", message))


def _is_float(x: Any) -> bool:
    return np.issubdtype(np.asarray(x).dtype, np.floating)


def _bound(L: ModuleType, program: Any) -> Callable[..., Any]:
    return functools.partial(program.fn, L)


def _float_sum(L: ModuleType, out: Any) -> Any:
    """The sum of every floating-point leaf of `out`: the scalar the grad checks differentiate."""
    total: Any = 0.0
    for leaf in L.tree_util.tree_leaves(out):
        if np.issubdtype(leaf.dtype, np.floating):
            total = total + L.numpy.sum(leaf)
    return total


def _loss(L: ModuleType, program: Any) -> Callable[..., Any]:
    f = _bound(L, program)
    return lambda *args: _float_sum(L, f(*args))


def _jvp(L: ModuleType, program: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`jvp` along the float arguments, the others held fixed, as a function of the primals
    and tangents; and those primals and tangents."""
    f = _bound(L, program)
    args = program.args
    where = [k for k, a in enumerate(args) if _is_float(a)]

    def of_floats(*floats: Any) -> Any:
        full = list(args)
        for k, v in zip(where, floats, strict=True):
            full[k] = v
        return f(*full)

    def jvp(*primals_and_tangents: Any) -> Any:
        n = len(where)
        return L.jvp(of_floats, primals_and_tangents[:n], primals_and_tangents[n:])

    primals = tuple(args[k] for k in where)
    tangents = tuple(
        (np.ones_like(p) * np.asarray(0.5 + k, p.dtype)).astype(p.dtype)
        for k, p in enumerate(primals)
    )
    return jvp, primals + tangents


def _batched_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for a in args:
        a = np.asarray(a)
        if _is_float(a):
            copies = [(a * np.asarray(k, a.dtype)).astype(a.dtype) for k in SCALES]
        elif a.dtype == np.bool_:
            copies = [a, ~a, a]
        else:
            copies = [(a + np.asarray(k, a.dtype)).astype(a.dtype) for k in INT_SHIFTS]
        out.append(np.stack(copies))
    return tuple(out)


def _text(L: ModuleType, f: Callable[..., Any], args: tuple[Any, ...]) -> str:
    if L is jax:
        with jax_config.use_simplified_jaxpr_constants(True):
            return str(jax.make_jaxpr(f)(*args))
    return str(lamina.make_jaxpr(f)(*args))


def _leaves(L: ModuleType, out: Any) -> list[tuple[str, tuple[int, ...], Any]]:
    return [
        (np.asarray(x).dtype.name, np.asarray(x).shape, np.asarray(x))
        for x in L.tree_util.tree_leaves(out)
    ]


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except Exception as e:
        return "error", (type(e).__name__, _normalised(str(e)).splitlines()[:1])


def _same_outcome(
    ours: tuple[str, Any], theirs: tuple[str, Any], compare: Callable[[Any, Any], None]
) -> None:
    if theirs[0] == "error":
        assert ours == theirs, f"JAX raised {theirs[1]}; Lamina gave {ours}"
        return
    if ours[0] == "error":
        pytest.fail(f"Lamina raised {ours[1]}; JAX did not")
    compare(ours[1], theirs[1])


def _same_text(ours: str, theirs: str) -> None:
    assert ours == theirs


def _close_values(ours: Any, theirs: Any) -> None:
    got, want = _leaves(lamina, ours), _leaves(jax, theirs)
    assert [(d, s) for d, s, _ in got] == [(d, s) for d, s, _ in want], "dtypes or shapes differ"
    for (_, _, a), (_, _, b) in zip(got, want, strict=True):
        if np.issubdtype(b.dtype, np.inexact):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)
        else:
            np.testing.assert_array_equal(a, b)


def _check_text(make: Callable[[ModuleType], tuple[Callable[..., Any], tuple[Any, ...]]]) -> None:
    ours = _outcome(lambda: _text(lamina, *make(lamina)))
    theirs = _outcome(lambda: _text(jax, *make(jax)))
    _same_outcome(ours, theirs, _same_text)


def _check_values(run: Callable[[ModuleType], Any]) -> None:
    ours = _outcome(lambda: run(lamina))
    theirs = _outcome(lambda: run(jax))
    _same_outcome(ours, theirs, _close_values)


IDS = [p.name for p in PROGRAMS]
DIFFERENTIABLE = [p for p in PROGRAMS if _is_float(p.args[0])]
WITH_FLOATS = [p for p in PROGRAMS if any(_is_float(a) for a in p.args)]


def _params(programs: list[Any]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("program", programs, ids=[p.name for p in programs])


def _sampled(programs: list[Any], per_kind: int = 2) -> pytest.MarkDecorator:
    """Like `_params`, but only the first `per_kind` programs of each kind (the first word of the
    name: cond, switch, while, fori, scan, ...) run by default; the others are `slow`."""
    seen: dict[str, int] = {}
    params = []
    for p in programs:
        kind = p.name.split("_")[0]
        seen[kind] = seen.get(kind, 0) + 1
        marks = [] if seen[kind] <= per_kind else [pytest.mark.slow]
        params.append(pytest.param(p, marks=marks, id=p.name))
    return pytest.mark.parametrize("program", params)


def test_corpus_is_broad() -> None:
    assert len(PROGRAMS) >= 90
    assert len(set(IDS)) == len(IDS)


@_params(PROGRAMS)
def test_jaxpr(program: Any) -> None:
    _check_text(lambda L: (_bound(L, program), program.args))


# The values of every program are compared by the slow `jit` and `vmap` checks; by default a
# couple of programs of each kind, the printed jaxprs of all of them.
@_sampled(PROGRAMS)
def test_eager(program: Any) -> None:
    _check_values(lambda L: _bound(L, program)(*program.args))


# The jitted values repeat the eager ones through one more compile per program: slow.
@pytest.mark.slow
@_params(PROGRAMS)
def test_jit(program: Any) -> None:
    _check_values(lambda L: L.jit(_bound(L, program))(*program.args))


@_params(DIFFERENTIABLE)
def test_grad_jaxpr(program: Any) -> None:
    _check_text(lambda L: (L.grad(_loss(L, program)), program.args))


def _grad_values(L: ModuleType, program: Any) -> Any:
    """Lamina's grad run eagerly; JAX's under one jit of the grad with the other arguments
    closed over (as constants, as in its eager grad): op by op, JAX compiles every op."""
    first, *rest = program.args
    grad = L.grad(lambda x: _loss(L, program)(x, *rest))
    return grad(first) if L is lamina else jax.jit(grad)(first)


@_sampled(DIFFERENTIABLE)
def test_grad(program: Any) -> None:
    _check_values(lambda L: _grad_values(L, program))


@_params(WITH_FLOATS)
def test_jvp_jaxpr(program: Any) -> None:
    _check_text(lambda L: _jvp(L, program))


# The heaviest check for what it adds: the jvp jaxprs are compared byte for byte above, and the
# grad values exercise the same derivative rules numerically.
@pytest.mark.slow
@_params(WITH_FLOATS)
def test_jvp(program: Any) -> None:
    def run(L: ModuleType) -> Any:
        jvp, args = _jvp(L, program)
        return jvp(*args)

    _check_values(run)


@_params(PROGRAMS)
def test_vmap_jaxpr(program: Any) -> None:
    _check_text(lambda L: (L.vmap(_bound(L, program)), _batched_args(program.args)))


# The batched values: the vmap jaxprs are compared byte for byte above; slow.
@pytest.mark.slow
@_params(PROGRAMS)
def test_vmap(program: Any) -> None:
    _check_values(lambda L: L.vmap(_bound(L, program))(*_batched_args(program.args)))


def _error(call: Callable[[], Any]) -> tuple[str, str]:
    try:
        call()
    except Exception as e:
        return type(e).__name__, _normalised(str(e))
    return "no error", ""


@pytest.mark.parametrize("case", ERRORS, ids=[c.name for c in ERRORS])
def test_error(case: Any) -> None:
    theirs = _error(lambda: case.fn(jax))
    assert theirs[0] != "no error", "JAX accepts this call: the case is wrong"
    ours = _error(lambda: case.fn(lamina))
    assert ours == theirs
