"""Testing helpers for transformations: JAX's `check_grads`, and the autodiff oracle.

`check_grads` checks a function's derivatives numerically, as `jax.test_util.check_grads`:
forward mode against central finite differences, reverse mode against forward mode by the
inner-product identity `<ct, J t> == <J^T ct, t>`, recursively up to `order`.

`check_ad` runs one program through JAX and Lamina under `jvp`, `grad` (or `vjp` for
non-scalar outputs) and `grad(jit(...))`: the printed jaxprs must be byte-identical and the
values equal to tolerance. This module never imports JAX; tests pass it in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

import lamina_core
from lamina_core.ir import ShapedArray, dtypes
from lamina_core.testing._core import ORACLE_COMPILER_OPTIONS
from lamina_core.trace import check_jaxpr, to_numpy, typeof
from lamina_core.tree import tree_util


def _aval(x: Any) -> ShapedArray:
    aval = typeof(x)
    assert isinstance(aval, ShapedArray), aval
    return aval


def _inexact(dtype: np.dtype) -> bool:
    return dtypes.issubdtype(dtype, np.inexact)


def _is_inexact(x: Any) -> bool:
    return _inexact(_aval(x).dtype)


def tangent_like(x: Any, seed: int = 0) -> Any:
    """A deterministic, well-spread tangent for `x` (`float0` zeros for integer inputs)."""
    aval = _aval(x)
    shape, dtype = aval.shape, aval.dtype
    if not _inexact(dtype):
        return np.zeros(shape, dtypes.float0)
    n = int(np.prod(shape)) if shape else 1
    base = np.cos(np.arange(n, dtype=np.float64) * 1.37 + 0.41 + seed)
    if dtype.kind == "c":
        base = base + 1j * np.sin(np.arange(n) * 0.91 + seed)
    return base.reshape(shape).astype(dtype)


def _tol(dtype: np.dtype, order: int) -> float:
    if dtype.itemsize <= 2 or dtype == np.complex64 or dtype == np.float32:
        return {1: 2e-2, 2: 5e-2}.get(order, 5e-2) if dtype.itemsize > 2 else 1e-1
    return 1e-5


def _eps(dtype: np.dtype) -> float:
    return 1e-3 if dtype.itemsize <= 4 or dtype == np.complex64 else 1e-6


def _vdot(a: Sequence[Any], b: Sequence[Any]) -> np.complex128:
    total = np.complex128(0)
    for x, y in zip(a, b, strict=True):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
            continue
        total += np.sum(_wide(x) * _wide(y))
    # Real parts: for functions of complex values the identity holds for the real inner product.
    return np.complex128(total.real)


def _leaves(x: Any) -> list[np.ndarray]:
    return [np.asarray(to_numpy(v)) for v in tree_util.tree_leaves(x)]


def _assert_close(got: Sequence[Any], want: Sequence[Any], tol: float, what: str) -> None:
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        if w.dtype == dtypes.float0 or g.dtype == dtypes.float0:
            continue
        np.testing.assert_allclose(_wide(g), _wide(w), rtol=tol, atol=tol, err_msg=what)


def _wide(x: np.ndarray) -> np.ndarray:
    """`x` as complex128 (through float64 for the narrow floats NumPy cannot cast directly)."""
    if x.dtype.kind != "c":
        x = x.astype(np.float64)
    return x.astype(np.complex128)


def _numerical_jvp(
    f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any]
) -> list[Any]:
    def shifted(sign: float) -> list[np.ndarray]:
        moved = []
        for x, t in zip(args, tangents, strict=True):
            x = np.asarray(to_numpy(x))
            t = np.asarray(t)
            if t.dtype == dtypes.float0:
                moved.append(x)
            else:
                moved.append((x + sign * _eps(x.dtype) * t).astype(x.dtype))
        return _leaves(f(*moved))

    plus, minus = shifted(1.0), shifted(-1.0)
    eps = _eps(
        np.asarray(
            to_numpy(
                next(
                    a
                    for a, t in zip(args, tangents, strict=True)
                    if np.asarray(t).dtype != dtypes.float0
                )
            )
        ).dtype
    )
    return [
        ((_wide(p) - _wide(m)) / (2 * eps)) if _inexact(p.dtype) else p
        for p, m in zip(plus, minus, strict=True)
    ]


def check_jvp(
    f: Callable[..., Any], args: Sequence[Any], order: int = 1, tol: float | None = None
) -> None:
    tangents = [tangent_like(a, seed=3) for a in args]
    _, out_t = lamina_core.jvp(f, tuple(args), tuple(tangents))
    want = _numerical_jvp(f, args, tangents)
    dtype = _aval(args[0]).dtype
    _assert_close(
        _leaves(out_t),
        want,
        tol if tol is not None else _tol(dtype, order),
        "jvp vs finite differences",
    )


def check_vjp(
    f: Callable[..., Any], args: Sequence[Any], order: int = 1, tol: float | None = None
) -> None:
    tangents = [tangent_like(a, seed=3) for a in args]
    out, pullback = lamina_core.vjp(f, *args)
    _, out_t = lamina_core.jvp(f, tuple(args), tuple(tangents))
    cts = tree_util.tree_map(lambda o: tangent_like(o, seed=7), out)
    in_cts = pullback(cts)
    lhs = _vdot(_leaves(cts), _leaves(out_t))
    rhs = _vdot(_leaves(in_cts), [np.asarray(t) for t in tangents])
    dtype = _aval(args[0]).dtype
    scale = max(1.0, abs(lhs), abs(rhs))
    t = tol if tol is not None else _tol(dtype, order)
    assert abs(lhs - rhs) <= t * scale, f"vjp: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}"


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    tol: float | None = None,
    *,
    atol: float | None = None,
    rtol: float | None = None,
) -> None:
    """Check `f`'s derivatives at `args` numerically, up to `order` (as `jax.test_util`).

    `tol` (or the larger of `atol` and `rtol`, JAX's names) bounds both the absolute and the
    relative error; by default it depends on the dtype and the order.
    """
    if tol is None and (atol is not None or rtol is not None):
        tol = max(atol or 0.0, rtol or 0.0)
    args = tuple(args)
    for current in range(1, order + 1):
        if "fwd" in modes:
            check_jvp(f, args, current, tol)
        if "rev" in modes:
            check_vjp(f, args, current, tol)
        if current == order:
            break
        tangents = tuple(tangent_like(a, seed=11) for a in args)
        inner = f
        if "fwd" in modes:

            def f(*xs: Any, inner: Callable[..., Any] = inner, tangents: Any = tangents) -> Any:
                return lamina_core.jvp(inner, xs, tangents)[1]

        else:

            def f(*xs: Any, inner: Callable[..., Any] = inner) -> Any:
                out, pullback = lamina_core.vjp(inner, *xs)
                return pullback(tree_util.tree_map(lambda o: tangent_like(o, seed=5), out))


# --- the autodiff oracle ------------------------------------------------------------------


def _scalar_float_output(f: Callable[..., Any], args: Sequence[Any]) -> bool:
    closed = lamina_core.make_jaxpr(f)(*args)
    avals = closed.out_avals
    return len(avals) == 1 and avals[0].shape == () and np.dtype(avals[0].dtype).kind == "f"


def transforms(
    api: Any, f: Callable[..., Any], args: Sequence[Any], kind: str, like: Callable[..., Any]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """`(function, arguments)` for transformation `kind` of `f` in `api` (jax or lamina_core);
    `like` is Lamina's version of `f`, which decides between grad and vjp."""
    n = len(args)
    diff = tuple(i for i, a in enumerate(args) if _is_inexact(a))
    if kind == "jvp":
        tangents = tuple(tangent_like(a, seed=1) for a in args)

        def jvp_f(*xt: Any) -> Any:
            return api.jvp(f, tuple(xt[:n]), tuple(xt[n:]))

        return jvp_f, (*args, *tangents)
    # A lambda around `f`: jitting a function that is itself a jit nests differently per library.
    target = api.jit(lambda *a: f(*a)) if kind == "grad_jit" else f
    if _scalar_float_output(like, args):
        return api.grad(target, argnums=diff), tuple(args)
    out = lamina_core.make_jaxpr(like, return_shape=True)(*args)[1]
    cts = tree_util.tree_map(lambda s: tangent_like(np.zeros(s.shape, s.dtype), seed=2), out)

    def vjp_f(*a: Any) -> Any:
        _, pullback = api.vjp(target, *a[:n])
        return pullback(a[n])

    return vjp_f, (*args, cts)


KINDS = ("jvp", "grad", "grad_jit")


def _jax_values(
    jax: ModuleType, runs: Sequence[tuple[str, Any, Callable[..., Any], tuple[Any, ...]]]
) -> list[Any]:
    """JAX's outputs of every run's `(function, arguments)`, all computed by one jitted
    program: one compilation where a jit per kind compiles each."""
    functions = [f for _, _, f, _ in runs]

    def every(*groups: tuple[Any, ...]) -> list[Any]:
        return [f(*g) for f, g in zip(functions, groups, strict=True)]

    run = jax.jit(every, compiler_options=ORACLE_COMPILER_OPTIONS)
    outs: list[Any] = run(*(a for _, _, _, a in runs))
    return outs


def check_ad(
    oracle: Any,
    program: Callable[[ModuleType, ModuleType], Callable[..., Any]],
    *args: Any,
    kinds: Sequence[str] = KINDS,
    printed: bool | Sequence[str] = True,
    order: int = 2,
    tol: float | None = None,
) -> None:
    """`program` under jvp, grad/vjp and grad(jit): JAX's text, JAX's values, finite differences.

    `printed` may list the kinds whose text must match (the rest check values only).
    """
    ours_f = program(lamina_core.numpy, lamina_core.lax)
    theirs_f = program(oracle.jnp, oracle.lax)
    runs: list[tuple[str, Sequence[Any], Callable[..., Any], tuple[Any, ...]]] = []
    for kind in kinds:
        lf, largs = transforms(lamina_core, ours_f, args, kind, ours_f)
        jf, jargs = transforms(oracle.jax, theirs_f, args, kind, ours_f)
        ours = lamina_core.make_jaxpr(lf)(*largs)
        theirs = oracle.jax.make_jaxpr(jf)(*jargs)
        must_print = printed if isinstance(printed, bool) else kind in printed
        if must_print:
            assert str(ours) == str(theirs), (
                f"{kind}\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
            )
        check_jaxpr(ours)
        runs.append((kind, oracle.evaluate(ours, tree_util.tree_leaves(largs)), jf, jargs))
    for (kind, got, _, _), out in zip(runs, _jax_values(oracle.jax, runs), strict=True):
        want = oracle.jax.tree_util.tree_leaves(out)
        assert len(got) == len(want), kind
        for g, w in zip(got, want, strict=True):
            w = np.asarray(w)
            g = np.asarray(to_numpy(g))
            assert g.shape == w.shape, (kind, g.shape, w.shape)
            if w.dtype == dtypes.float0:
                # Compiled programs return float0 outputs as bool zeros (no device float0).
                assert g.dtype in (dtypes.float0, np.dtype(bool)), (kind, g.dtype)
                continue
            assert g.dtype == w.dtype, (kind, g.dtype, w.dtype)
            t = 1e-5 if w.dtype.itemsize >= 4 else 2e-2
            np.testing.assert_allclose(g, w, rtol=t, atol=t, err_msg=kind)
    if order:
        check_grads(ours_f, args, order, tol=tol)


__all__ = [
    "KINDS",
    "check_ad",
    "check_grads",
    "check_jvp",
    "check_vjp",
    "tangent_like",
    "transforms",
]
