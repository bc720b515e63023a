"""`lax.linalg`'s `symmetric_product`, `cholesky_update`, `ormqr` and `qdwh` against JAX 0.10.2:
values (Lamina's NumPy references and its lax programs against JAX's), printed jaxprs, vmap
against a Python loop, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core.lax import linalg as ll

jax = pytest.importorskip("jax")
jl_private = pytest.importorskip("jax._src.lax.linalg")
pytestmark = pytest.mark.oracle
jl = jax.lax.linalg

_rng = np.random.default_rng(31)


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    got, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert got == want, f"\n--- lamina ---\n{got}\n--- jax ---\n{want}"


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


def _same_error(ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(type(want.value)) as got:
        ours()
    assert str(got.value) == str(want.value)


def _same_call_error(ours: Callable[..., Any], theirs: Callable[..., Any], args: Any) -> None:
    _same_error(lambda: ours(*args), lambda: theirs(*args))


@pytest.mark.parametrize("symmetrize_output", [False, True])
def test_symmetric_product(symmetrize_output: bool) -> None:
    a, c = _general(2, 3, 4), _general(2, 3, 3)

    def ours(a: Any, c: Any) -> Any:
        return ll.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=symmetrize_output)

    def theirs(a: Any, c: Any) -> Any:
        return jl.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=symmetrize_output)

    _close(ours(a, c), jax.jit(theirs)(a, c))
    _same_jaxpr(ours, theirs, a, c)
    got = lc.vmap(ours, in_axes=(2, None))(np.moveaxis(a, 0, 2), c[0])
    want = np.stack([np.asarray(ours(a[i], c[0])) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
    _same_jaxpr(
        lc.vmap(ours, in_axes=(2, None)),
        jax.vmap(theirs, in_axes=(2, None)),
        np.moveaxis(a, 0, 2),
        c[0],
    )


def test_symmetric_product_errors() -> None:
    a, c = _general(3, 4), _general(3, 3)
    for args in [(a, c[:2, :2]), (a.astype(np.complex64), c), (a, c[:, :2])]:
        _same_call_error(ll.symmetric_product, jl.symmetric_product, args)


def test_cholesky_update() -> None:
    m = _general(4, 6)
    r = np.linalg.cholesky(m @ m.T).T.astype(np.float32)
    w = _general(4)
    got, want = ll.cholesky_update(r, w), jax.jit(jl.cholesky_update)(r, w)
    _close(got, want)
    np.testing.assert_allclose(
        np.asarray(got).T @ np.asarray(got), r.T @ r + np.outer(w, w), rtol=1e-4, atol=1e-4
    )
    # The lax program the CPU lowering traces computes the same update.
    from lamina_core.lax.linalg._products import jax_cholesky_update

    _close(lc.jit(jax_cholesky_update)(r, w), want)
    _same_jaxpr(ll.cholesky_update, jl.cholesky_update, r, w)
    for args in [(r, w[:3]), (r[:3], w), (r[None], w), (r.astype(np.complex64), w)]:
        _same_call_error(ll.cholesky_update, jl.cholesky_update, args)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_ormqr(dtype: Any) -> None:
    a = _general(2, 5, 3, dtype=dtype)
    h, taus = (np.asarray(x) for x in jl_private.geqrf(a))
    c = _general(2, 5, 2, dtype=dtype)
    for left in (True, False):
        for transpose in (False, True):
            cc = c if left else np.swapaxes(c, -1, -2)

            def ours(h: Any, t: Any, c: Any, left: bool = left, tr: bool = transpose) -> Any:
                return ll.ormqr(h, t, c, left=left, transpose=tr)

            def theirs(h: Any, t: Any, c: Any, left: bool = left, tr: bool = transpose) -> Any:
                return jl.ormqr(h, t, c, left=left, transpose=tr)

            _close(ours(h, taus, cc), jax.jit(theirs)(h, taus, cc))
            _same_jaxpr(ours, theirs, h, taus, cc)
    got = lc.vmap(ll.ormqr, in_axes=(0, 0, None))(h, taus, c[0])
    want = np.stack([np.asarray(ll.ormqr(h[i], taus[i], c[0])) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    _same_error(lambda: ll.ormqr(h, taus, c[:, :3]), lambda: jl.ormqr(h, taus, c[:, :3]))
    _same_error(lambda: ll.ormqr(h, taus, c, left=False), lambda: jl.ormqr(h, taus, c, left=False))


@pytest.mark.parametrize(("shape", "dtype"), [((5, 3), np.float32), ((3, 3), np.complex64)])
def test_qdwh(shape: tuple[int, int], dtype: Any) -> None:
    x = _general(*shape, dtype=dtype)
    got, want = ll.qdwh(x), jl.qdwh(x)
    for g, w in zip(got, want, strict=True):
        _close(g, w, 1e-3)
    u, h = np.asarray(got[0]), np.asarray(got[1])
    np.testing.assert_allclose(u @ h, x, atol=1e-4)
    np.testing.assert_allclose(np.conj(u).T @ u, np.eye(shape[1]), atol=1e-4)


def test_qdwh_options_and_errors() -> None:
    x = _general(5, 4)
    x[:, 3] = 0
    x[4] = 0
    options: list[dict[str, Any]] = [
        {"dynamic_shape": (4, 3)},
        {"max_iterations": 1},
        {"eps": 1e-3},
    ]
    for kwargs in options:
        for g, w in zip(ll.qdwh(x, **kwargs), jl.qdwh(x, **kwargs), strict=True):
            _close(g, w, 1e-3)
    _same_error(lambda: ll.qdwh(x.T), lambda: jl.qdwh(x.T))
