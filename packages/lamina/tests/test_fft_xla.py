"""`lax.fft` and `lamina.numpy.fft` on XLA against JAX 0.10.2: the lowered module text equals
`jax.jit(f).lower(...).as_text()` (one `stablehlo.fft` per transform, in a private `@fft`
function as JAX's nested jit), and jitted, eager, differentiated and batched programs compute
JAX's numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
import lamina.numpy.fft

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(11)
R = _rng.standard_normal((3, 4, 6)).astype(np.float32)
C = (_rng.standard_normal((3, 4, 6)) + 1j * _rng.standard_normal((3, 4, 6))).astype(np.complex64)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _loss(jnp: ModuleType, y: Any) -> Any:
    return jnp.sum(jnp.real(y) * jnp.imag(y) + jnp.abs(y))


PROGRAMS: dict[str, tuple[Program, np.ndarray]] = {
    "lax_fft": (lambda jnp, lax: lambda x: lax.fft(x, "fft", (4, 6)), C),
    "lax_ifft_enum": (lambda jnp, lax: lambda x: lax.fft(x, lax.FftType.IFFT, (6,)), C),
    "lax_rfft_3d": (lambda jnp, lax: lambda x: lax.fft(x, "rfft", (3, 4, 6)), R),
    "lax_irfft": (lambda jnp, lax: lambda x: lax.fft(x, "irfft", (4, 10)), C),
    "fft_n": (lambda jnp, lax: lambda x: jnp.fft.fft(x, n=5, axis=0), R),
    "ifft_ortho": (lambda jnp, lax: lambda x: jnp.fft.ifft(x, norm="ortho"), C),
    "rfft_forward": (lambda jnp, lax: lambda x: jnp.fft.rfft(x, n=8, norm="forward"), R),
    "irfft": (lambda jnp, lax: jnp.fft.irfft, C),
    "hfft": (lambda jnp, lax: lambda x: jnp.fft.hfft(x, axis=1), C),
    "ihfft": (lambda jnp, lax: jnp.fft.ihfft, R),
    "fft2_axes": (lambda jnp, lax: lambda x: jnp.fft.fft2(x, axes=(0, 2)), C),
    "irfft2_s": (lambda jnp, lax: lambda x: jnp.fft.irfft2(x, s=(3, 7)), C),
    "fftn_4d": (lambda jnp, lax: lambda x: jnp.fft.fftn(x.reshape(3, 2, 2, 6)), C),
    "irfftn_backward": (lambda jnp, lax: lambda x: jnp.fft.irfftn(x, norm="backward"), C),
    "freq_shift": (
        lambda jnp, lax: lambda x: jnp.fft.fftshift(x * jnp.fft.fftfreq(6, 0.5), axes=-1),
        R,
    ),
    "grad_rfft": (
        lambda jnp, lax: jax_or_lamina(jnp).grad(lambda x: _loss(jnp, jnp.fft.rfft(x))),
        R,
    ),
    "grad_irfftn": (
        lambda jnp, lax: jax_or_lamina(jnp).grad(lambda x: _loss(jnp, jnp.fft.irfftn(x))),
        C,
    ),
    "vmap_rfft2": (lambda jnp, lax: jax_or_lamina(jnp).vmap(jnp.fft.rfft2, in_axes=2), R),
    "vmap_irfft": (lambda jnp, lax: jax_or_lamina(jnp).vmap(jnp.fft.irfft, in_axes=1), C),
}


def jax_or_lamina(jnp: ModuleType) -> ModuleType:
    return lamina if jnp is lamina.numpy else jax


def _close(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


_SLOW = {"lax_fft", "ifft_ortho", "hfft", "fft2_axes", "irfftn_backward", "vmap_irfft"}
"""Cases whose transforms and lowerings others cover too: run by the slow session."""


@pytest.mark.parametrize(
    "case",
    [c if c not in _SLOW else pytest.param(c, marks=pytest.mark.slow) for c in sorted(PROGRAMS)],
)
def test_lowering_is_jaxs_and_runs_as_jax(case: str) -> None:
    program, x = PROGRAMS[case]
    ours, theirs = program(lamina.numpy, lamina.lax), program(jax.numpy, jax.lax)
    text, want = lamina.jit(ours).lower(x).as_text(), jax.jit(theirs).lower(x).as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    expected = jax.jit(theirs)(x)
    _close(lamina.jit(ours)(x), expected)
    _close(ours(x), expected)


def test_lamina_numpy_fft_is_a_module_and_an_attribute() -> None:
    assert lamina.numpy.fft.rfftn is lamina.numpy.fft.__dict__["rfftn"]
    public = sorted(n for n in dir(jax.numpy.fft) if not n.startswith("_"))
    assert sorted(lamina.numpy.fft.__all__) == public
    assert lamina.lax.fft_p.name == "fft" and int(lamina.lax.FftType.IRFFT) == 3
