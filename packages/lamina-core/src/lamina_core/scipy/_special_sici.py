"""The sine and cosine integrals `sici` (Si, Ci) of `jax.scipy.special`, computed as JAX 0.10.2
computes them, from Cephes' `sici.c`.

For |x| <= 4 rational approximations in x**2 (Si = x P(x**2) / Q(x**2), Ci = gamma + log x +
x**2 P(x**2) / Q(x**2)); for 4 < |x| <= 1e9 the auxiliary functions f and g as rational
functions of 1/x**2 (one pair below 8, another above), Si = pi/2 - f cos x - g sin x and
Ci = f sin x - g cos x; above 1e9 the leading terms pi/2 - cos(x)/x and sin(x)/x. Si is odd;
Ci is nan at -inf (and, being real only for x > 0, takes |x| elsewhere, as JAX does).
The custom JVP is (sinc(x / pi), cos(x) / x).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p
from lamina_core.transforms import Jitted

Array = Any

# Cephes sici.c, highest degree first: Si and Ci on [0, 4] (numerators, denominators).
_SN: Final = (
    -8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
    9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0,
)  # fmt: skip
_SD: Final = (
    2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
    9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1,
)  # fmt: skip
_CN: Final = (
    2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
    -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0,
)  # fmt: skip
_CD: Final = (
    4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
    3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0,
)  # fmt: skip
# The auxiliary f and g on (4, 8] (FN4/FD4, GN4/GD4) and (8, inf) (FN8/FD8, GN8/GD8).
_FN4: Final = (
    4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
    1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
    5.48900223421373614008e-7,
)  # fmt: skip
_FD4: Final = (
    1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
    1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
    5.48900252756255700982e-7,
)  # fmt: skip
_GN4: Final = (
    8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
    7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
    1.97963874140963632189e-6, 7.82579040744090311069e-9,
)  # fmt: skip
_GD4: Final = (
    1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
    6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
    7.82579218933534490868e-9,
)  # fmt: skip
_FN8: Final = (
    4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
    1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
    3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14,
)  # fmt: skip
_FD8: Final = (
    1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1, 1.22253594771971293032e-2,
    3.58696481881851580297e-4, 4.92435064317881464393e-6, 3.21956939101046018377e-8,
    9.43720590350276732376e-11, 9.70507110881952025725e-14,
)  # fmt: skip
_GN8: Final = (
    6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
    1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
    1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15,
)  # fmt: skip
_GD8: Final = (
    1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1, 4.67913194259625806320e-2,
    1.90284426674399523638e-3, 3.68475504442561108162e-5, 3.57043223443740838771e-7,
    1.72693748966316146736e-9, 3.87830166023954706752e-12, 3.14040098946363335242e-15,
)  # fmt: skip


def _coeffs(c: tuple[float, ...], x: Array) -> Any:
    return jnp.array(c, dtype=dtype_of(x))


def _sici_large(x: Array) -> tuple[Array, Array]:
    """x > 1e9: Si ~ pi/2 - cos(x)/x and Ci ~ sin(x)/x (exact at +inf)."""
    si = np.pi / 2 - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    si = jnp.where(jnp.isposinf(x), np.pi / 2, si)
    ci = jnp.where(jnp.isposinf(x), 0.0, ci)
    return si, ci


def _sici_small(x: Array) -> tuple[Array, Array]:
    """0 <= x <= 4: the rational approximations in x**2."""

    def si_of(x: Array) -> Array:
        t = x * x
        return x * jnp.polyval(_coeffs(_SN, x), t) / jnp.polyval(_coeffs(_SD, x), t)

    def ci_of(x: Array) -> Array:
        t = x * x
        head = np.euler_gamma + jnp.log(x)  # staged before the ratio, as in JAX
        return head + t * jnp.polyval(_coeffs(_CN, x), t) / jnp.polyval(_coeffs(_CD, x), t)

    si = jnp.where(x == 0, 0.0, si_of(x))
    ci = jnp.where(x == 0, -np.inf, ci_of(x))
    return si, ci


def _sici_middle(x: Array) -> tuple[Array, Array]:
    """4 < x <= 1e9: the auxiliary functions f and g in 1/x**2."""
    s, c = jnp.sin(x), jnp.cos(x)
    z = 1.0 / (x * x)
    fn4, fd4, gn4, gd4, fn8, fd8, gn8, gd8 = (
        _coeffs(k, x) for k in (_FN4, _FD4, _GN4, _GD4, _FN8, _FD8, _GN8, _GD8)
    )
    f4 = jnp.polyval(fn4, z) / (x * jnp.polyval(fd4, z))
    g4 = z * jnp.polyval(gn4, z) / jnp.polyval(gd4, z)
    f8 = jnp.polyval(fn8, z) / (x * jnp.polyval(fd8, z))
    g8 = z * jnp.polyval(gn8, z) / jnp.polyval(gd8, z)
    below = x < 8.0
    f = jnp.where(below, f4, f8)
    g = jnp.where(below, g4, g8)
    return np.pi / 2 - f * c - g * s, f * s - g * c


def _sici_of(x: Any) -> tuple[Array, Array]:
    (x,) = p.promote_args_inexact("sici", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {dtype_of(x)}.")
    ax = jnp.abs(x)
    si_small, ci_small = _sici_small(ax)
    si_mid, ci_mid = _sici_middle(ax)
    si_big, ci_big = _sici_large(ax)
    small = ax <= 4
    middle = (ax > 4) & (ax <= 1e9)
    si = jnp.select([small, middle], [si_small, si_mid], si_big)
    ci = jnp.select([small, middle], [ci_small, ci_mid], ci_big)
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), np.nan, ci)


_sici_of.__name__ = _sici_of.__qualname__ = "sici"  # the name its jit prints, as in JAX
sici: Final = custom_jvp(Jitted(_sici_of))
"""The sine and cosine integrals: (Si(x), Ci(x)) = (int_0^x sin t / t dt, gamma + log x +
int_0^x (cos t - 1) / t dt)."""


def _sici_jvp(
    primals: tuple[Any, ...], tangents: tuple[Any, ...]
) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    (x,), (t,) = primals, tangents
    out = sici(x)
    return out, (jnp.sinc(x / np.pi) * t, jnp.cos(x) / x * t)


_sici_jvp.__name__ = _sici_jvp.__qualname__ = "sici_jvp"
sici.defjvp(Jitted(_sici_jvp))
