"""The spherical harmonics `sph_harm_y(n, m, theta, phi, n_max=...)` of `jax.scipy.special`,
computed as JAX 0.10.2 computes them: the normalized associated Legendre functions P_l^m of
cos(theta) for every l, m <= n_max (the diagonal from a cumulative product of sqrt(1 - x**2),
the first off-diagonal from x times it, the rest by the three-term recurrence in l as a
`fori_loop` of masked einsums), then P_|n|^|m| times e**(i |m| phi), conjugated with the sign
(-1)**m for negative m. `n_max` must be static (it sizes the table); it defaults to max(n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.trace import ConcretizationTypeError, Tracer
from lamina_core.transforms import Jitted

Array = Any


def _recurrence_masks(l_max: int, dtype: Any) -> tuple[Array, Array]:
    """The coefficients of P_{l-1}^m and P_{l-2}^m in the normalized recurrence for P_l^m,
    placed (by the mask i + j = k) where step i of the loop applies them."""
    m_mat, l_mat = jnp.meshgrid(
        jnp.arange(l_max + 1, dtype=dtype), jnp.arange(l_max + 1, dtype=dtype), indexing="ij"
    )
    c0 = l_mat * l_mat
    c1 = m_mat * m_mat
    c2 = 2.0 * l_mat
    c3 = (l_mat - 1.0) * (l_mat - 1.0)
    d0 = jnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
    d1 = jnp.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    d0_indices = jnp.triu_indices(l_max + 1, 1)
    d1_indices = jnp.triu_indices(l_max + 1, 2)
    zeros = jnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = zeros.at[d0_indices].set(d0[d0_indices])
    d1_mask = zeros.at[d1_indices].set(d1[d1_indices])
    i, j, k = jnp.ogrid[: l_max + 1, : l_max + 1, : l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    return jnp.einsum("jk,ijk->ijk", d0_mask, mask), jnp.einsum("jk,ijk->ijk", d1_mask, mask)


def _normalized_legendre_of(l_max: int, x: Array) -> Array:
    """P_l^m(x) for m, l <= l_max, shape (l_max + 1, l_max + 1, len(x)), orthonormal."""
    n_x = shape_of(x)[0]
    p = jnp.zeros((l_max + 1, l_max + 1, n_x), dtype=dtype_of(x))
    a_idx = jnp.arange(1, l_max + 1, dtype=dtype_of(x))
    b_idx = jnp.arange(l_max, dtype=dtype_of(x))
    initial = 0.5 / jnp.sqrt(np.pi)
    f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
    f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    p = p.at[(0, 0)].set(initial)
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, n_x)), axis=0)
    p_diag = initial * jnp.einsum("i,ij->ij", f_a, y)
    diag = jnp.diag_indices(l_max + 1)
    p = p.at[(diag[0][1:], diag[1][1:])].set(p_diag)
    p_offdiag = jnp.einsum("ij,ij->ij", jnp.einsum("i,j->ij", f_b, x), p[jnp.diag_indices(l_max)])
    p = p.at[(diag[0][:l_max], diag[1][:l_max] + 1)].set(p_offdiag)
    d0_mask, d1_mask = _recurrence_masks(l_max, dtype_of(x))

    def body(i: Array, p_val: Array) -> Array:
        shifted = jnp.einsum("ijk,k->ijk", jnp.roll(p_val, shift=1, axis=1), x)
        h = jnp.einsum("ij,ijk->ijk", d0_mask[i], shifted) - jnp.einsum(
            "ij,ijk->ijk", d1_mask[i], jnp.roll(p_val, shift=2, axis=1)
        )
        return p_val + h

    p = p.astype(dtypes.result_type(p, x, d0_mask))
    if l_max > 1:
        p = lax.fori_loop(lower=2, upper=l_max + 1, body_fun=body, init_val=p)
    return p


def _legendre_table(l_max: int, x: Array, is_normalized: bool) -> Array:
    assert is_normalized  # only the normalized functions are used (by sph_harm_y)
    return _normalized_legendre_of(l_max, x)


_legendre_table.__name__ = _legendre_table.__qualname__ = "_gen_associated_legendre"
_gen_associated_legendre = Jitted(_legendre_table, static_argnums=(0, 2))


def _sph_harm_of(n: Array, m: Array, theta: Array, phi: Array, n_max: int) -> Array:
    cos_colatitude = jnp.cos(theta)
    legendre = _gen_associated_legendre(n_max, cos_colatitude, True)
    values = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(values * jnp.real(vandermonde), values * jnp.imag(vandermonde))
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


_sph_harm_of.__name__ = _sph_harm_of.__qualname__ = "_sph_harm"  # the name its jit prints
_sph_harm = Jitted(_sph_harm_of, static_argnums=(4,))


def sph_harm_y(
    n: Array,
    m: Array,
    theta: Array,
    phi: Array,
    diff_n: int | None = None,
    n_max: int | None = None,
) -> Array:
    """The spherical harmonic Y_n^m(theta, phi) of degree n and order m (theta the polar
    angle, phi the azimuth); `n_max` (static) is the largest degree, default max(n)."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    if isinstance(n_max, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected\n"
            "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
            "specified to use `sph_harm` within JAX transformations."
        )
    return _sph_harm(n, m, theta, phi, int(n_max))
