"""`lax.zeta` and `lax.polygamma` against JAX 0.10.2 and SciPy: printed jaxprs (also of their
derivatives and batches), values (Lamina's float64 references against XLA's and SciPy's,
the special cases XLA defines), JAX's errors, the jvp rules (polygamma's, and digamma's through
polygamma) against finite differences, and vmap against a Python loop; and `scipy.special.zeta`
(with its custom JVP) and `polygamma` against `jax.scipy.special`'s."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core.config._config import config
from lamina_core.lax._zeta import _polygamma_reference, _zeta_reference

jax = pytest.importorskip("jax")
special = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.oracle
jl = jax.lax

NAMES = ["zeta", "polygamma"]
EDGES = np.array(
    [-np.inf, -3, -2.5, -2, -1, -0.5, 0, -0.0, 0.5, 1, 1.5, 2, 3, 4, 1e3, 1e10, np.inf, np.nan]
)


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    mine, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert mine == want, f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"


def _x64() -> Any:
    from jax._src import config as jax_config

    stack = contextlib.ExitStack()
    stack.enter_context(config(jax_enable_x64=True))
    stack.enter_context(jax_config.enable_x64(True))
    return stack


def _zeta_grid() -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(1.001, 60.0, 90)[:, None]
    q = np.geomspace(0.01, 200.0, 70)[None, :]
    return np.broadcast_arrays(x, q)  # type: ignore[return-value]


def _polygamma_grid() -> tuple[np.ndarray, np.ndarray]:
    m = np.arange(0.0, 12.0)[:, None]
    # XLA's sums are good for x > -4 only (see `test_float64_values_are_jaxs`).
    x = np.concatenate([np.linspace(-3.9, -0.1, 14), np.geomspace(0.01, 100.0, 40)])[None, :]
    return np.broadcast_arrays(m, x)  # type: ignore[return-value]


# The references themselves: with the runtime imported, eager `lax` calls run on XLA instead.


def test_zeta_reference_is_scipys() -> None:
    x, q = _zeta_grid()
    np.testing.assert_allclose(_zeta_reference(x, q), special.zeta(x, q), rtol=1e-13)
    # Negative non-integer q, integer x: the terms with q + n < 0 count too.
    x, q = np.broadcast_arrays(np.arange(2.0, 30.0)[:, None], np.linspace(-7.95, -0.05, 40))
    np.testing.assert_allclose(_zeta_reference(x, q), special.zeta(x, q), rtol=1e-13)


def test_polygamma_reference_is_scipys() -> None:
    m, x = np.broadcast_arrays(
        np.arange(0.0, 12.0)[:, None],
        np.concatenate([np.linspace(-7.3, -0.1, 20), np.geomspace(0.01, 100.0, 40)]),
    )
    got, want = _polygamma_reference(m, x), special.polygamma(m.astype(int), x)
    # digamma's reference (m = 0) is good to about 1e-11 near its root.
    np.testing.assert_allclose(got[0], want[0], rtol=1e-9)
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_float64_values_are_jaxs(name: str) -> None:
    if name == "zeta":
        x, q = _zeta_grid()
        # XLA sums a fixed number of terms: for q < -4 it is only good to 1e-5 or so.
        x2, q2 = np.broadcast_arrays(np.arange(2.0, 30.0)[:, None], np.linspace(-3.95, -0.05, 20))
        args = (np.concatenate([x.ravel(), x2.ravel()]), np.concatenate([q.ravel(), q2.ravel()]))
    else:
        args = tuple(a.ravel() for a in _polygamma_grid())  # type: ignore[assignment]
    with _x64():
        got = np.asarray(getattr(ll, name)(*args))
        want = np.asarray(jax.jit(getattr(jl, name))(*args))
    assert got.dtype == want.dtype == np.float64
    # digamma's reference (polygamma with m = 0) is good to about 1e-10 near its root.
    np.testing.assert_allclose(got, want, rtol=1e-9 if name == "polygamma" else 1e-13)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16"])
def test_special_cases_and_jaxprs_are_jaxs(name: str, dtype: Any) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    # In 32 bits and less XLA's sums overflow for huge x (and m) to nan or -inf: no references.
    edges = EDGES if dtype == np.float64 else EDGES[(EDGES != 1e3) & (EDGES != 1e10)]
    x, q = (a.ravel().astype(dtype) for a in np.meshgrid(edges, edges, indexing="ij"))
    with _x64():
        _same_jaxpr(ours, theirs, x, q)
        got, want = np.asarray(ours(x, q)), np.asarray(jax.jit(theirs)(x, q))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2)


@pytest.mark.parametrize("name", NAMES)
def test_float32_values_are_jaxs(name: str) -> None:
    x, q = _zeta_grid() if name == "zeta" else _polygamma_grid()
    x, q = x.astype(np.float32), q.astype(np.float32)
    got = np.asarray(getattr(ll, name)(x, q))
    want = np.asarray(jax.jit(getattr(jl, name))(x, q))
    assert got.dtype == want.dtype == np.float32
    # XLA's float32 sums lose a few ulps; results below float32's normal range even more.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "args",
    [
        (np.int32(1), np.int32(2)),
        (np.float32(1), np.int32(2)),
        (np.complex64(1), np.complex64(2)),
        (np.float32(1), np.float16(2)),
        (np.ones(3, np.float32), np.ones(4, np.float32)),
    ],
)
def test_errors_are_jaxs(name: str, args: Any) -> None:
    with pytest.raises(TypeError) as theirs:
        getattr(jl, name)(*args)
    with pytest.raises(TypeError) as mine:
        getattr(ll, name)(*args)
    assert str(mine.value) == str(theirs.value)


def test_derivative_errors_are_jaxs() -> None:
    x, q = np.float32(2.5), np.float32(1.5)
    for argnums in (0, 1):
        with pytest.raises(NotImplementedError) as theirs:
            jax.grad(jl.zeta, argnums=argnums)(x, q)
        with pytest.raises(NotImplementedError) as mine:
            lc.grad(ll.zeta, argnums=argnums)(x, q)
        assert str(mine.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs_m:
        jax.grad(jl.polygamma)(np.float32(1), q)
    with pytest.raises(ValueError) as mine_m:
        lc.grad(ll.polygamma)(np.float32(1), q)
    assert str(mine_m.value) == str(theirs_m.value)


@pytest.mark.parametrize("m", [0.0, 1.0, 3.0])
@pytest.mark.parametrize("x", [np.float32(0.7), np.float32(-2.5), 4.0])
def test_polygamma_grad_prints_and_computes_as_jax(m: float, x: Any) -> None:
    m = np.float32(m) if isinstance(x, np.float32) else m  # type: ignore[assignment]
    ours, theirs = lc.grad(ll.polygamma, argnums=1), jax.grad(jl.polygamma, argnums=1)
    _same_jaxpr(ours, theirs, m, x)
    # XLA's float32 sums cancel for negative x: the references are more accurate there.
    tol = 1e-5 if x > 0 else 1e-3
    np.testing.assert_allclose(ours(m, x), jax.jit(theirs)(m, x), rtol=tol)
    second = lc.grad(lc.grad(ll.polygamma, argnums=1), argnums=1)
    _same_jaxpr(second, jax.grad(jax.grad(jl.polygamma, argnums=1), argnums=1), m, x)


@pytest.mark.parametrize("x", [1.5, np.float32(0.3), np.float32(-1.7)])
def test_lgamma_second_derivative_goes_through_polygamma(x: Any) -> None:
    ours, theirs = lc.grad(lc.grad(ll.lgamma)), jax.grad(jax.grad(jl.lgamma))
    _same_jaxpr(ours, theirs, x)
    np.testing.assert_allclose(ours(x), jax.jit(theirs)(x), rtol=1e-5)
    _same_jaxpr(lc.grad(ll.digamma), jax.grad(jl.digamma), x)


def test_jvps_match_finite_differences_and_jax() -> None:
    m = np.array([0, 1, 2, 3, 1, 2, 0, 4], np.float32)
    x = np.array([-2.5, -0.3, 0.25, 1.0, 4.0, 8.5, 20.0, 3.0], np.float32)
    t = np.linspace(0.5, 1.5, x.size).astype(np.float32)
    ours = lambda v: ll.polygamma(m, v)  # noqa: E731
    theirs = lambda v: jl.polygamma(m, v)  # noqa: E731
    _same_jaxpr(
        lambda a, b: lc.jvp(ours, (a,), (b,)), lambda a, b: jax.jvp(theirs, (a,), (b,)), x, t
    )
    _, tangent = lc.jvp(ours, (x,), (t,))
    np.testing.assert_allclose(
        np.asarray(tangent), np.asarray(jax.jvp(theirs, (x,), (t,))[1]), rtol=1e-4
    )
    eps, x64, m64 = 1e-5, x.astype(np.float64), m.astype(np.float64)
    with config(jax_enable_x64=True):
        fd = (
            np.asarray(ll.polygamma(m64, x64 + eps * t))
            - np.asarray(ll.polygamma(m64, x64 - eps * t))
        ) / (2 * eps)
        _, exact = lc.jvp(lambda v: ll.polygamma(m64, v), (x64,), (t.astype(np.float64),))
    np.testing.assert_allclose(np.asarray(exact), fd, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("in_axes", [(0, 0), (1, 1), (0, None), (None, 1), (1, 0)])
def test_vmap_is_jaxs_and_a_loop(name: str, in_axes: tuple[int | None, int | None]) -> None:
    ours, theirs = getattr(ll, name), getattr(jl, name)
    a = np.arange(1.0, 25.0, dtype=np.float32).reshape(4, 6) / 4 + 1
    b = np.arange(24.0, 0.0, -1.0, dtype=np.float32).reshape(4, 6) / 3
    if in_axes == (1, 0):
        b = b.T
    if name == "polygamma":
        a = np.floor(a)
    args = [a if axis is not None else a[0, 0] for a, axis in zip((a, b), in_axes, strict=True)]
    args = [v if axis is not None else np.float32(v) for v, axis in zip(args, in_axes, strict=True)]
    _same_jaxpr(lc.vmap(ours, in_axes=in_axes), jax.vmap(theirs, in_axes=in_axes), *args)
    got = np.asarray(lc.vmap(ours, in_axes=in_axes)(*args))
    size = next(np.shape(v)[ax] for v, ax in zip(args, in_axes, strict=True) if ax is not None)
    rows = np.stack(
        [
            np.asarray(
                ours(
                    *[
                        v if ax is None else np.take(v, i, ax)
                        for v, ax in zip(args, in_axes, strict=True)
                    ]
                )
            )
            for i in range(size)
        ]
    )
    np.testing.assert_array_equal(got, rows)


def test_vmap_of_polygamma_grad_is_jaxs() -> None:
    m, x = np.float32(2), np.linspace(0.5, 5.0, 7).astype(np.float32)
    vg = lc.vmap(lc.grad(ll.polygamma, argnums=1), in_axes=(None, 0))
    _same_jaxpr(vg, jax.vmap(jax.grad(jl.polygamma, argnums=1), in_axes=(None, 0)), m, x)


# `scipy.special.zeta` and `polygamma`: promotion, JAX's checks, and zeta's custom JVP through
# the Euler-Maclaurin series (printed with JAX's simplified constants, as Lamina stages them).


@pytest.fixture
def _literal_constants() -> Any:
    from jax._src import config as jax_config

    with jax_config.use_simplified_jaxpr_constants(True):
        yield


@pytest.mark.parametrize(
    "args", [(2.5, 1.5), (np.float32(3.0), np.arange(1, 4)), (3, np.float16(0.5))]
)
def test_scipy_zeta_prints_and_computes_as_jax(args: Any) -> None:
    from jax.scipy import special as js

    from lamina_core.scipy import special as ls

    _same_jaxpr(ls.zeta, js.zeta, *args)
    np.testing.assert_allclose(
        np.float32(ls.zeta(*args)), np.float32(js.zeta(*args)), rtol=1e-3 if 3 in args else 1e-6
    )


@pytest.mark.usefixtures("_literal_constants")
@pytest.mark.parametrize("argnums", [0, 1])
@pytest.mark.parametrize("x64", [False, True])
def test_scipy_zeta_grad_is_jaxs_and_finite_differences(argnums: int, x64: bool) -> None:
    from jax.scipy import special as js

    from lamina_core.scipy import special as ls

    x, q = 2.5, 1.5
    with _x64() if x64 else contextlib.nullcontext():
        ours, theirs = lc.grad(ls.zeta, argnums=argnums), jax.grad(js.zeta, argnums=argnums)
        _same_jaxpr(ours, theirs, x, q)
        got = float(ours(x, q))
    if not x64:  # (JAX's values cost a compilation each: one dtype is enough)
        np.testing.assert_allclose(got, float(jax.jit(theirs)(x, q)), rtol=1e-6)
    eps = 1e-6
    step = np.eye(2)[argnums] * eps
    fd = (special.zeta(x + step[0], q + step[1]) - special.zeta(x - step[0], q - step[1])) / (
        2 * eps
    )
    np.testing.assert_allclose(got, fd, rtol=1e-4 if not x64 else 1e-8)


@pytest.mark.usefixtures("_literal_constants")
def test_scipy_zeta_vmap_of_grad_is_jaxs() -> None:
    from jax.scipy import special as js

    from lamina_core.scipy import special as ls

    q = np.linspace(0.5, 3.0, 5).astype(np.float32)
    ours = lc.vmap(lc.grad(ls.zeta, argnums=1), in_axes=(None, 0))
    theirs = jax.vmap(jax.grad(js.zeta, argnums=1), in_axes=(None, 0))
    _same_jaxpr(ours, theirs, np.float32(3.0), q)
    np.testing.assert_allclose(
        np.asarray(ours(np.float32(3.0), q)),
        np.asarray(jax.jit(theirs)(np.float32(3.0), q)),
        rtol=1e-5,
    )
    rows = [float(lc.grad(ls.zeta, argnums=1)(np.float32(3.0), v)) for v in q]
    np.testing.assert_allclose(np.asarray(ours(np.float32(3.0), q)), rows, rtol=1e-6)


@pytest.mark.parametrize(
    "args", [(1, 1.5), (np.int32(2), np.float32(0.5)), (np.arange(4), 2.5), (0, np.float16(3))]
)
def test_scipy_polygamma_prints_and_computes_as_jax(args: Any) -> None:
    from jax.scipy import special as js

    from lamina_core.scipy import special as ls

    _same_jaxpr(ls.polygamma, js.polygamma, *args)
    np.testing.assert_allclose(
        np.float32(ls.polygamma(*args)), np.float32(jax.jit(js.polygamma)(*args)), rtol=1e-3
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("polygamma", (1.0, 2.0)),
        ("polygamma", (1, 2.0 + 1j)),
        ("zeta", (2.0,)),
    ],
)
def test_scipy_errors_are_jaxs(name: str, args: Any) -> None:
    from jax.scipy import special as js

    from lamina_core.scipy import special as ls

    with pytest.raises((ValueError, NotImplementedError)) as theirs:
        getattr(js, name)(*args)
    with pytest.raises(theirs.type) as mine:
        getattr(ls, name)(*args)
    assert str(mine.value) == str(theirs.value)
