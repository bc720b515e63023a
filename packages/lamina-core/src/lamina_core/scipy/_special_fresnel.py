"""The Fresnel integrals `fresnel` (S, C) of `jax.scipy.special`, computed as JAX 0.10.2 computes
them, from Cephes' `fresnl.c` (single-precision coefficients for float16, bfloat16 and float32,
computed in float32; double-precision ones for float64).

Below x**2 = 2.5625 power series (float32) or rational functions (float64) in x**4; above
36974 the limits 1/2 (float32) or 1/2 -+ cos/sin(pi x**2 / 2) / (pi x) (float64); between, the
auxiliary functions f and g in 1/(pi x**2). Both integrals are odd, 1/2 at +inf. sin and cos of
pi x**2 / 2 are reduced modulo 2 first (`_sincospi_half_square`). The custom JVP is
(sin(pi x**2 / 2), cos(pi x**2 / 2)).
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

# Cephes fresnl.c, single precision (polynomials only), highest degree first.
_SN32: Final = (
    1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6, -3.120693124703272e-4,
    7.244727626597022e-3, -9.228055941124598e-2, 5.235987735681432e-1,
)  # fmt: skip
_CN32: Final = (
    1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5, -1.604381798862293e-3,
    2.818489036795073e-2, -2.467398198317899e-1, 9.999999760004487e-1,
)  # fmt: skip
_FN32: Final = (
    -1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9, 7.343848463587323e7,
    -8.732356681548485e5, 8.560515466275470e3, -1.032877601091159e2, 2.999401847870011e0,
)  # fmt: skip
_GN32: Final = (
    -1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8, 6.492611570598858e6,
    -7.787789623358162e4, 8.602931494734327e2, -1.493439396592284e1, 9.999841934744914e-1,
)  # fmt: skip
# Double precision: numerators and denominators of S, C (small x) and f, g (the rest).
_SN64: Final = (
    -2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
    2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11,
)  # fmt: skip
_SD64: Final = (
    1.00000000000000000000e0, 2.81376268889994315696e2, 4.55847810806532581675e4,
    5.17343888770096400730e6, 4.19320245898111231129e8, 2.24411795645340920940e10,
    6.07366389490084639049e11,
)  # fmt: skip
_CN64: Final = (
    -4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
    1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1,
)  # fmt: skip
_CD64: Final = (
    3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
    1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
    1.00000000000000000118e0,
)  # fmt: skip
_FN64: Final = (
    4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
    3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
    1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
    3.76329711269987889006e-20,
)  # fmt: skip
_FD64: Final = (
    1.00000000000000000000e0, 7.51586398353378947175e-1, 1.16888925859191382142e-1,
    6.44051526508858611005e-3, 1.55934409164153020873e-4, 1.84627567348930545870e-6,
    1.12699224763999035261e-8, 3.60140029589371370404e-11, 5.88754533621578410010e-14,
    4.52001434074129701496e-17, 1.25443237090011264384e-20,
)  # fmt: skip
_GN64: Final = (
    5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
    6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
    4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
    8.36354435630677421531e-19, 1.86958710162783235106e-22,
)  # fmt: skip
_GD64: Final = (
    1.00000000000000000000e0, 1.47495759925128324529e0, 3.37748989120019970451e-1,
    2.53603741420338795122e-2, 8.14679107184306179049e-4, 1.27545075667729118702e-5,
    1.04314589657571990585e-7, 4.60680728146520428211e-10, 1.10273215066240270757e-12,
    1.38796531259578871258e-15, 8.39158816283118707363e-19, 1.86958710162783236342e-22,
)  # fmt: skip

_SINGLE: Final = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _sincospi_half_square_of(x: Array) -> tuple[Array, Array]:
    # With s = |x| mod 2, x**2 / 2 = s (|x| - s / 2) (mod 2): reduce before multiplying by pi.
    x = jnp.abs(x)
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s / 2), 2.0)
    sin = jnp.where(
        r < 0.5,
        jnp.sin(np.pi * r),
        jnp.where(r > 1.5, jnp.sin(np.pi * (r - 2.0)), -jnp.sin(np.pi * (r - 1.0))),
    )
    cos = jnp.where(
        r == 0.5,
        0.0,
        jnp.where(r < 1.0, -jnp.sin(np.pi * (r - 0.5)), jnp.sin(np.pi * (r - 1.5))),
    )
    return sin, cos


_sincospi_half_square_of.__name__ = "sincospisquaredhalf"  # the name its jit prints, as in JAX
_sincospi_half_square_of.__qualname__ = "sincospisquaredhalf"
_sincospi_half_square: Final = Jitted(_sincospi_half_square_of)


def _fresnel_of(x: Any) -> tuple[Array, Array]:
    (xa,) = p.promote_args_inexact("fresnel", x)
    original = dtype_of(xa)
    if dtypes.issubdtype(original, np.complexfloating):
        raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
    if original in _SINGLE:
        xa = xa.astype(np.float32)
        coeffs = [jnp.array(c, dtype=np.float32) for c in (_SN32, _CN32, _FN32, _GN32)]
        sn, cn, fn, gn = coeffs
        # JAX stages four unused empty denominators here.
        sd, cd, fd, gd = (jnp.empty(0) for _ in range(4))
    elif original == np.float64:
        tables = (_SN64, _SD64, _CN64, _CD64, _FN64, _FD64, _GN64, _GD64)
        sn, sd, cn, cd, fn, fd, gn, gd = (jnp.array(c, dtype=np.float64) for c in tables)
    else:
        raise NotImplementedError(f"Support for {original} dtype is not implemented yet.")
    single = dtype_of(xa) == np.float32
    x = jnp.abs(xa)
    x2 = x * x
    t = x2 * x2
    if single:
        s_small = x * x2 * jnp.polyval(sn, t)
        c_small = x * jnp.polyval(cn, t)
    else:
        s_small = x * x2 * jnp.polyval(sn[:6], t) / jnp.polyval(sd[:7], t)
        c_small = x * jnp.polyval(cn[:6], t) / jnp.polyval(cd[:7], t)
    sin, cos = _sincospi_half_square(x)
    s_large: Any
    c_large: Any
    if single:
        s_large = c_large = 0.5
    else:
        c_large = 0.5 + 1 / (np.pi * x) * sin
        s_large = 0.5 - 1 / (np.pi * x) * cos
    t = np.pi * x2
    u = 1.0 / (t * t)
    t = 1.0 / t
    if single:
        f = 1.0 - u * jnp.polyval(fn, u)
        g = t * jnp.polyval(gn, u)
    else:
        f = 1.0 - u * jnp.polyval(fn, u) / jnp.polyval(fd, u)
        g = t * jnp.polyval(gn, u) / jnp.polyval(gd, u)
    t = np.pi * x
    c_mid = 0.5 + (f * sin - g * cos) / t
    s_mid = 0.5 - (f * cos + g * sin) / t
    infinite = jnp.isinf(xa)
    small = x2 < 2.5625
    large = x > 36974.0
    s = jnp.where(infinite, 0.5, jnp.where(small, s_small, jnp.where(large, s_large, s_mid)))
    c = jnp.where(infinite, 0.5, jnp.where(small, c_small, jnp.where(large, c_large, c_mid)))
    negative = xa < 0.0
    s = jnp.where(negative, -s, s)
    c = jnp.where(negative, -c, c)
    if original != dtype_of(xa):
        s, c = s.astype(original), c.astype(original)
    return s, c


_fresnel_of.__name__ = _fresnel_of.__qualname__ = "fresnel"  # the name custom_jvp_call prints
fresnel: Final = custom_jvp(_fresnel_of)
"""The Fresnel integrals (S(x), C(x)): the integrals from 0 to x of sin(pi t**2 / 2) and
cos(pi t**2 / 2)."""


def _fresnel_jvp(
    primals: tuple[Any, ...], tangents: tuple[Any, ...]
) -> tuple[tuple[Array, Array], tuple[Array, Array]]:
    (x,), (x_dot,) = primals, tangents
    out = fresnel(x)
    sin, cos = _sincospi_half_square(x)
    return out, (sin * x_dot, cos * x_dot)


fresnel.defjvp(_fresnel_jvp)
