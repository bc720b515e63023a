"""The Faddeeva family of `jax.scipy.special`: `erfcx` (the scaled complementary error function
`exp(x**2) erfc(x)`), `dawsn` (Dawson's integral) and `wofz` (the Faddeeva function
`exp(-z**2) erfc(-iz)`), computed as JAX 0.10.2 computes them, under its custom JVPs.

- `wofz`: Weideman's (1994) rational approximation with N = 32 in the upper half plane, the
  reflection `w(-z) = 2 exp(-z**2) - w(z)` below; complex `erfcx(z)` is `wofz(iz)`.
- real `erfcx`: `exp(x**2) erfc(x)` up to where `exp(x**2)` overflows, the asymptotic series
  in `1/x**2` above (9 terms in float64, 5 in float32; 16-bit floats through float32).
- `dawsn`: the rational approximations of Cody, Paciorek and Thacher (1970) on [0, 3.25),
  [3.25, 6.25) and beyond, evaluated at safe operands outside each region, odd in x.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax import lax_const
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p

Array = Any

_WEIDEMAN_L: Final = 4.7568284600108841
"""sqrt(N / sqrt 2) for N = 32: the scale of Weideman's Mobius map Z = (L + iz) / (L - iz)."""

_WEIDEMAN_COEFFS: Final = np.array([
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282,
    0.14060716226893755, 0.29544451071508743, 0.54601397206393376,
    0.9019254893648001, 1.3455441692345449, 1.8256696296324815,
    2.2635372999002676, 2.5722534081245696,
])  # fmt: skip
"""Weideman's expansion coefficients of w in powers of Z, highest degree first."""


def _wofz_upper(z: Array) -> Array:
    """w(z) for Im z >= 0: 2 P(Z) / (L - iz)**2 + 1 / (sqrt(pi) (L - iz))."""
    re = lax.real(z)
    scale = lax.complex(lax_const(re, _WEIDEMAN_L), lax_const(re, 0.0))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denom = scale - iz
    mobius = (scale + iz) / denom
    poly = jnp.polyval(jnp.asarray(_WEIDEMAN_COEFFS, dtype=dtype_of(mobius)), mobius)
    inv_sqrt_pi = lax.complex(lax_const(re, 1.0 / np.sqrt(np.pi)), lax_const(re, 0.0))
    return 2 * poly / (denom * denom) + inv_sqrt_pi / denom


@custom_jvp
def _wofz(z: Array) -> Array:
    upper = lax.ge(lax.imag(z), lax_const(lax.real(z), 0.0))
    z_up = lax.select(upper, z, lax.neg(z))
    w_up = _wofz_upper(z_up)
    reflected = 2 * lax.exp(lax.neg(z * z)) - w_up
    return lax.select(upper, w_up, reflected)


def _wofz_slope(g: Array, ans: Array, z: Array) -> Array:
    damping = lax.neg(2 * z * ans)
    two_i_over_sqrt_pi = lax.complex(
        lax_const(lax.real(z), 0.0), lax_const(lax.real(z), 2.0 / np.sqrt(np.pi))
    )
    return g * (damping + two_i_over_sqrt_pi)


_wofz.defjvps(_wofz_slope)


def _promote_complex(name: str, z: Any) -> Array:
    """`z` in the complex dtype of its (inexact) dtype, weak if it is (JAX's promotion)."""
    p.check_arraylike(name, z)
    dtype, weak = dtypes.result_type(z, return_weak_type_flag=True)
    real = p._inexact(dtype)
    wide = real == np.float64 or real == np.complex128
    (out,) = p.promote_shapes(
        name, p.convert(z, np.dtype(np.complex128 if wide else np.complex64), weak)
    )
    return out


def wofz(z: Any) -> Array:
    """The Faddeeva function w(z) = exp(-z**2) erfc(-iz) (complex results)."""
    return _wofz(_promote_complex("wofz", z))


_ERFCX_ASYMPTOTIC: Final = (
    7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75, -0.5, 1.0,
)  # fmt: skip
"""(-1)**k (2k-1)!! / 2**k for k = 8..0: erfcx(x) ~ sum c_k x**-2k / (sqrt(pi) x)."""


def _erfcx_asymptotic(x: Array, terms: int) -> Array:
    t = lax_const(x, 1.0) / lax.square(x)
    poly = jnp.polyval(np.array(_ERFCX_ASYMPTOTIC[-terms:], dtype=dtype_of(x)), t)
    return poly / (x * lax_const(x, np.sqrt(np.pi)))


def _erfcx_real(x: Array, terms: int) -> Array:
    # exp(x**2) overflows past sqrt(log(max)): the asymptotic series takes over there.
    threshold = np.sqrt(np.log(dtypes.finfo(dtype_of(x)).max))
    large = x > lax_const(x, threshold)
    safe_x = lax.select(large, lax.full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    return lax.select(large, _erfcx_asymptotic(x, terms), direct)


@custom_jvp
def _erfcx(x: Array) -> Array:
    dtype = dtype_of(x)
    if dtype == np.float64:
        return _erfcx_real(x, 9)  # the next term is below 1e-21 at the threshold (~26.6)
    if dtype == np.float32:
        return _erfcx_real(x, 5)  # the next term is below 5e-9 at the threshold (~9.4)
    return _erfcx_real(x.astype(np.float32), 5).astype(dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - lax_const(x, 2.0 / np.sqrt(np.pi))))


def erfcx(x: Any) -> Array:
    """The scaled complementary error function exp(x**2) erfc(x) (real or complex x)."""
    (x,) = p.promote_args_inexact("erfcx", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        return _wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))
    return _erfcx(x)


# Cody, Paciorek and Thacher's coefficients, highest degree first: on [0, 3.25)
# dawsn = x P(x**2) / Q(x**2); beyond, dawsn = (1 + t P(t) / Q(t)) / (2x) with t = 1/x**2.
_DAWSN_NEAR_P: Final = (
    1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
    9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
    -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
    9.99999999999999994612e-1,
)  # fmt: skip
_DAWSN_NEAR_Q: Final = (
    2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
    1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
    3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
    5.74918629489320327824e-1, 1.00000000000000000539e0,
)  # fmt: skip
_DAWSN_MID_P: Final = (
    5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
    -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
    3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
    -2.40274520828250956942e-9, 3.59233385440928410398e-11,
)  # fmt: skip
_DAWSN_MID_Q: Final = (
    1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
    -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
    7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
    -4.91324691331920606875e-9, 7.18466403235734541950e-11,
)  # fmt: skip
_DAWSN_FAR_P: Final = (
    -5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
    1.64837047825189632310e-2, -4.86827613020462700845e-4,
)  # fmt: skip
_DAWSN_FAR_Q: Final = (
    1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0,
    -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4,
)  # fmt: skip


def _dawsn_tail(
    x: Array, ax: Array, t: Array, inside: Callable[[], Array], num: Any, den: Any
) -> Array:
    safe_t = lax.select(inside(), t, lax.full_like(t, 1.0))
    safe_ax = lax.select(inside(), ax, lax.full_like(ax, 1.0))
    half_over = lax_const(x, 0.5) / safe_ax
    return half_over * (
        lax_const(x, 1.0) + safe_t * jnp.polyval(num, safe_t) / jnp.polyval(den, safe_t)
    )


def _dawsn_of(x: Array) -> Array:
    dtype = dtype_of(x)
    sign = jnp.sign(x)  # dawsn(0) = 0, so sign(0) = 0 is right
    ax = lax.abs(x)
    tables = [
        np.array(c, dtype=dtype)
        for c in (
            _DAWSN_NEAR_P, _DAWSN_NEAR_Q, _DAWSN_MID_P, _DAWSN_MID_Q, _DAWSN_FAR_P, _DAWSN_FAR_Q,
        )
    ]  # fmt: skip
    near_p, near_q, mid_p, mid_q, far_p, far_q = tables
    ax2 = lax.square(ax)
    t = lax_const(x, 1.0) / ax2
    # Each region at safe operands elsewhere: an overflowing polynomial there would make
    # inf / inf = nan, which a select does not hide on every backend.
    safe_near = lax.select(ax < lax_const(x, 3.25), ax, lax.full_like(ax, 1.0))
    safe_near2 = lax.square(safe_near)
    near = safe_near * jnp.polyval(near_p, safe_near2) / jnp.polyval(near_q, safe_near2)
    mid = _dawsn_tail(
        x, ax, t, lambda: (ax >= lax_const(x, 3.25)) & (ax < lax_const(x, 6.25)), mid_p, mid_q
    )
    far = _dawsn_tail(x, ax, t, lambda: ax >= lax_const(x, 6.25), far_p, far_q)
    out = lax.select(ax < lax_const(x, 3.25), near, lax.select(ax < lax_const(x, 6.25), mid, far))
    return sign * out


@custom_jvp
def _dawsn(x: Array) -> Array:
    dtype = dtype_of(x)
    if dtype in (np.float32, np.float64):
        return _dawsn_of(x)
    return _dawsn_of(x.astype(np.float32)).astype(dtype)


_dawsn.defjvps(lambda g, ans, x: g * (lax_const(x, 1.0) - lax_const(x, 2.0) * x * ans))


def dawsn(x: Any) -> Array:
    """Dawson's integral exp(-x**2) times the integral of exp(t**2) from 0 to x (real x)."""
    (x,) = p.promote_args_inexact("dawsn", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError("dawsn does not support complex-valued inputs.")
    return _dawsn(x)
