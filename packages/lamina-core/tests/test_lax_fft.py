"""`lax.fft` and `fft_p` against JAX 0.10.2: printed jaxprs, values (Lamina's NumPy reference
against XLA's), JAX's errors, and the rules three ways: jvp, grad and vmap print JAX's jaxprs
and compute its numbers, the derivatives agree with finite differences, vmap with a Python
loop."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl = jax.lax

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(7)


def _real(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def _cplx(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(np.complex64)


R, R5, C, H = _real(2, 3, 4), _real(2, 3, 5), _cplx(2, 3, 4), _cplx(2, 3, 3)
I32 = _rng.integers(-5, 5, (2, 3, 4)).astype(np.int32)


def _fft(kind: Any, lengths: tuple[int, ...]) -> Program:
    """`lax.fft` with `kind` (a name, or an `FftType` member's name when given as a 1-tuple)."""

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        fft_type = getattr(lax.FftType, kind[0]) if isinstance(kind, tuple) else kind
        return lambda x: lax.fft(x, fft_type, lengths)

    return program


CASES: dict[str, tuple[Program, np.ndarray]] = {
    "fft_1d": (_fft("fft", (4,)), C),
    "fft_3d": (_fft("FFT", (2, 3, 4)), C),
    "ifft_2d": (_fft("ifft", (3, 4)), C),
    "ifft_enum": (_fft(("IFFT",), (4,)), C),
    "rfft_1d": (_fft("rfft", (4,)), R),
    "rfft_2d_odd": (_fft(("RFFT",), (3, 5)), R5),
    "irfft_1d_even": (_fft("irfft", (4,)), H),
    "irfft_1d_odd": (_fft("irfft", (5,)), H),
    "irfft_2d": (_fft("IRFFT", (3, 4)), H),
    "fft_of_real": (_fft("fft", (4,)), R),
    "fft_of_int": (_fft("fft", (3, 4)), I32),
    "rfft_of_int": (_fft("rfft", (4,)), I32),
    "no_lengths": (_fft("fft", ()), R),
}


def _ours(program: Program) -> Callable[..., Any]:
    return program(lc.numpy, ll)


def _theirs(program: Program) -> Callable[..., Any]:
    return program(jax.numpy, jl)


def _close(got: Any, want: Any, tol: float = 2e-5) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    mine, want = str(lc.make_jaxpr(ours)(*args)), str(jax.make_jaxpr(theirs)(*args))
    assert mine == want, f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_lax_fft_prints_and_computes_as_jax(case: str) -> None:
    program, x = CASES[case]
    _same_jaxpr(_ours(program), _theirs(program), x)
    _close(_ours(program)(x), jax.jit(_theirs(program))(x))


def test_fft_type_is_jaxs() -> None:
    assert [(t.name, int(t)) for t in ll.FftType] == [(t.name, int(t)) for t in jl.FftType]
    assert ll.fft_p.name == "fft"
    closed = lc.make_jaxpr(lambda x: ll.fft(x, "rfft", (4,)))(R)
    inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns[0]
    assert inner.primitive is ll.fft_p and inner.params["fft_type"] is ll.FftType.RFFT


def test_the_numpy_reference_is_double_precision() -> None:
    x = _rng.standard_normal((3, 8))
    got = lc.lax.fft(x.astype(np.complex64), "ifft", (3, 8))
    np.testing.assert_allclose(np.asarray(got), np.fft.ifft2(x), rtol=1e-6, atol=1e-7)


ERRORS: dict[str, tuple[Program, np.ndarray]] = {
    "unknown_name": (_fft("bogus", (4,)), C),
    "complex_rfft": (_fft("rfft", (4,)), C),
    "half_rfft": (_fft("rfft", (4,)), R.astype(np.float16)),
    "too_many_lengths": (_fft("fft", (1, 2, 3, 4)), C),
    "fft_minor_dims": (_fft("fft", (5,)), C),
    "rfft_minor_dims": (_fft("rfft", (2, 4)), R),
    "irfft_minor_dims": (_fft("irfft", (2, 4)), H),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_are_jaxs(case: str) -> None:
    program, x = ERRORS[case]
    with pytest.raises((ValueError, TypeError)) as theirs:
        _theirs(program)(x)
    with pytest.raises(type(theirs.value)) as mine:
        _ours(program)(x)
    assert str(mine.value) == str(theirs.value)


def test_unknown_type_value_is_jaxs() -> None:
    with pytest.raises(TypeError) as theirs:
        jl.fft(C, 3, (4,))
    with pytest.raises(TypeError) as mine:
        ll.fft(C, 3, (4,))  # type: ignore[arg-type]  # the wrong type is the point
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize(
    ("kind", "x"), [("RFFT", C), ("FFT", R), ("IFFT", R), ("IRFFT", R), ("FFT", np.float32(1))]
)
def test_primitive_errors_are_jaxs(kind: str, x: np.ndarray) -> None:
    # Bound directly, the primitive's own checks speak (`lax.fft` converts its operand first).
    def bind(lax: ModuleType) -> Callable[[Any], Any]:
        return lambda a: lax.fft_p.bind(a, fft_type=lax.FftType[kind], fft_lengths=(4,))

    with pytest.raises(ValueError) as theirs:
        jax.make_jaxpr(bind(jl))(x)
    with pytest.raises(ValueError) as mine:
        lc.make_jaxpr(bind(ll))(x)
    assert str(mine.value) == str(theirs.value)


# --- differentiation --------------------------------------------------------------------------

AD_CASES: dict[str, tuple[str, tuple[int, ...], np.ndarray]] = {
    "fft": ("fft", (3, 4), C),
    "ifft": ("ifft", (4,), C),
    "fft_of_real": ("fft", (4,), R),
    "rfft_even": ("rfft", (4,), R),
    "rfft_odd_2d": ("rfft", (3, 5), R5),
    "irfft_even_2d": ("irfft", (3, 4), H),
    "irfft_odd": ("irfft", (5,), H),
}
# The masks' even and odd cases of both real transforms run by default; the rest are slow.
AD_DEFAULT = ("rfft_even", "rfft_odd_2d", "irfft_even_2d", "irfft_odd", "fft")
AD_PARAMS = [
    case if case in AD_DEFAULT else pytest.param(case, marks=pytest.mark.slow)
    for case in sorted(AD_CASES)
]


def _loss(kind: str, lengths: tuple[int, ...]) -> Program:
    """A real scalar weighing every entry of the transform differently."""

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        def loss(x: Any) -> Any:
            y = lax.fft(x, kind, lengths)
            w = jnp.arange(y.size, dtype=np.float32).reshape(y.shape) / y.size
            return jnp.sum(jnp.real(y) * w + jnp.imag(y) * (1 - w) + jnp.abs(y) * w)

        return loss

    return program


def _fd_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-3) -> np.ndarray:
    """Central differences of `f` (in float64), as JAX's grad reports them for complex `x`:
    `df/dre - i df/dim`."""
    x64 = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    grad = np.zeros(x.shape, x64.dtype)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x64)
        step[index] = eps
        grad[index] = (f(x64 + step) - f(x64 - step)) / (2 * eps)
        if np.iscomplexobj(x):
            im = (f(x64 + 1j * step) - f(x64 - 1j * step)) / (2 * eps)
            grad[index] -= 1j * im  # type: ignore[call-overload]  # a complex array
    return grad


def _numpy_loss(kind: str, lengths: tuple[int, ...]) -> Callable[[np.ndarray], float]:
    axes = list(range(-len(lengths), 0))
    transforms = {"fft": np.fft.fftn, "ifft": np.fft.ifftn, "rfft": np.fft.rfftn}

    def loss(x: np.ndarray) -> float:
        y = (
            np.fft.irfftn(x, lengths, axes)
            if kind == "irfft"
            else transforms[kind](x, lengths, axes)
        )
        w = np.arange(y.size).reshape(y.shape) / y.size
        return float(np.sum(np.real(y) * w + np.imag(y) * (1 - w) + np.abs(y) * w))

    return loss


@pytest.mark.parametrize("case", AD_PARAMS)
def test_grad_prints_computes_and_differences_as_jax(case: str) -> None:
    kind, lengths, x = AD_CASES[case]
    program = _loss(kind, lengths)
    ours, theirs = lc.grad(_ours(program)), jax.grad(_theirs(program))
    _same_jaxpr(ours, theirs, x)
    got = ours(x)
    _close(got, jax.jit(theirs)(x), 1e-4)
    np.testing.assert_allclose(np.asarray(got), _fd_grad(_numpy_loss(kind, lengths), x), atol=2e-3)


@pytest.mark.parametrize("case", sorted(AD_CASES))
def test_jvp_and_vjp_print_and_compute_as_jax(case: str) -> None:
    kind, lengths, x = AD_CASES[case]
    ours, theirs = _ours(_fft(kind, lengths)), _theirs(_fft(kind, lengths))
    t = (x[::-1] * 0.5).copy()
    _same_jaxpr(
        lambda a, b: lc.jvp(ours, (a,), (b,)), lambda a, b: jax.jvp(theirs, (a,), (b,)), x, t
    )
    out, tangent = lc.jvp(ours, (x,), (t,))
    # A linear map's tangent is the map of the tangent.
    _close(tangent, theirs(t))
    _close(out, theirs(x))
    ct = np.asarray(theirs(t))

    def pull(a: Any, c: Any, vjp: Any, f: Any) -> Any:
        return vjp(f, a)[1](c)

    _same_jaxpr(
        lambda a, c: pull(a, c, lc.vjp, ours), lambda a, c: pull(a, c, jax.vjp, theirs), x, ct
    )
    _close(lc.vjp(ours, x)[1](ct)[0], jax.vjp(theirs, x)[1](ct)[0], 1e-4)


def test_second_order_grad_is_jaxs() -> None:
    # The loss has `abs`, so its gradient is not constant: the transposes are differentiated.
    def outer(grad: Any, jnp: ModuleType, loss: Any) -> Any:
        return grad(lambda x: jnp.sum(grad(loss)(x) ** 2))

    loss = _loss("rfft", (4,))
    ours = outer(lc.grad, lc.numpy, _ours(loss))
    theirs = outer(jax.grad, jax.numpy, _theirs(loss))
    x = R[0, 0]
    _same_jaxpr(ours, theirs, x)
    _close(ours(x), jax.jit(theirs)(x), 1e-4)


# --- batching ---------------------------------------------------------------------------------

VMAP_CASES: dict[str, tuple[str, tuple[int, ...], np.ndarray, int]] = {
    "fft_axis0": ("fft", (4,), C, 0),
    "fft_2d_axis2": ("fft", (2, 3), C, 2),
    "ifft_axis1": ("ifft", (4,), C, 1),
    "rfft_axis2": ("rfft", (2, 3), R, 2),
    "rfft_axis1": ("rfft", (5,), R5, 1),
    "irfft_axis0": ("irfft", (3, 4), H, 0),
    "irfft_axis2": ("irfft", (2, 5), _cplx(2, 3, 4).transpose(0, 2, 1).copy(), 1),
}


@pytest.mark.parametrize("case", sorted(VMAP_CASES))
def test_vmap_prints_and_computes_as_jax_and_a_loop(case: str) -> None:
    kind, lengths, x, axis = VMAP_CASES[case]
    ours = lc.vmap(_ours(_fft(kind, lengths)), in_axes=axis)
    theirs = jax.vmap(_theirs(_fft(kind, lengths)), in_axes=axis)
    _same_jaxpr(ours, theirs, x)
    got = ours(x)
    _close(got, jax.jit(theirs)(x))
    rows = [_ours(_fft(kind, lengths))(np.take(x, i, axis)) for i in range(x.shape[axis])]
    _close(got, np.stack([np.asarray(r) for r in rows]))


def test_vmap_of_grad_is_jaxs() -> None:
    program = _loss("irfft", (4,))
    ours, theirs = lc.vmap(lc.grad(_ours(program))), jax.vmap(jax.grad(_theirs(program)))
    _same_jaxpr(ours, theirs, H[0])
    _close(ours(H[0]), jax.jit(theirs)(H[0]), 1e-4)
