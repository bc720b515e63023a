"""The exponential integrals of `jax.scipy.special`: `expi` (Ei), `exp1` (E1) and `expn` (E_n),
computed as JAX 0.10.2 computes them, from Cephes' `ei.c` and `expn.c`.

- `expi` for x > 0: a rational approximation on (0, 2] (`x f(x) + gamma + log x`) and on each
  of (2, 4], (4, 8], ..., (32, 64], (64, inf) one of `e**x / x (1 + f(1/x) / x)`; for x < 0,
  `-E1(-x)`. Its custom JVP is `e**x / x`.
- `expn(n, x)`, vectorized over (n, x) under `jit`: the power series (x <= 1), the continued
  fraction (x > 1), the asymptotic expansion (n >= 5000), and the closed forms at n = 0 and
  x = 0; nan for n < 0 or x < 0. Its custom JVP in x is `-E_{n-1}(x)`; `exp1(x)` is `expn(1, x)`.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.custom_derivatives import custom_jvp
from lamina_core.ir import dtypes
from lamina_core.lax import lax_const
from lamina_core.numpy import dtype_of
from lamina_core.numpy import promotion as p
from lamina_core.scipy._special_gamma import gammaln
from lamina_core.transforms import Jitted

Array = Any

# Cephes ei.c: numerator and denominator coefficients (highest degree first) per interval.
_EI_SMALL: Final = (
    (
        -5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
        5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6,
    ),
    (
        1.0, -5.250547959112862969197e1, 1.259616186786790571525e3, -1.756549581973534652631e4,
        1.493062117002725991967e5, -7.294949239640527645655e5, 1.592627163384945429726e6,
    ),
)  # fmt: skip
_EI_TAILS: Final = (
    (  # (2, 4]
        (
            1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0,
            2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2,
            -1.545042679673485262580e-3, 7.059980605299617478514e-5,
        ),
        (
            1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
            2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
            3.953167195549672482304e-5,
        ),
    ),
    (  # (4, 8]
        (
            -1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
            -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
            4.371064420753005429514e-5, 2.141783679522602903795e-6,
        ),
        (
            1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
            2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
            -4.729848351866523044863e-6, 2.665195537390710170105e-6,
        ),
    ),
    (  # (8, 16]
        (
            -2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1,
            2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5,
            1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8,
            6.176407863710360207074e-10,
        ),
        (
            1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1,
            -1.566542966630792353556e-2, 2.761106850817352773874e-3, -2.089148012284048449115e-4,
            1.708528938807675304186e-5, -4.459311796356686423199e-7, 1.394634930353847498145e-8,
            6.150865933977338354138e-10,
        ),
    ),
    (  # (16, 32]
        (
            -2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
            -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
            2.644179518984235952241e-6, -4.239473659313765177195e-8,
        ),
        (
            1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1,
            9.695000254621984627876e-2, -1.601745692712991078208e-2, 1.496414899205908021882e-3,
            -8.462452563778485013756e-5, 2.728938403476726394024e-6, -4.239462431819542051337e-8,
        ),
    ),
    (  # (32, 64]
        (
            1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
            -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5,
        ),
        (
            1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1,
            -3.337004338674007801307e-2, 1.560544881127388842819e-3, -2.523137093603234562648e-5,
        ),
    ),
    (  # (64, inf)
        (
            -7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
            3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
            -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9,
        ),
        (
            1.0, -1.888802868662308731041e0, 1.066691687211408896850e0,
            -2.751915982306380647738e-1, 3.930852688233823569726e-2, -3.414684558602365085394e-3,
            1.866844370703555398195e-4, -6.345146083130515357861e-6, 1.239754287483206878024e-7,
            -1.086076102793126632978e-9,
        ),
    ),
)  # fmt: skip


def _ei_small(x: Array) -> Array:
    num, den = (np.array(c, dtype=dtype_of(x)) for c in _EI_SMALL)
    f = jnp.polyval(num, x) / jnp.polyval(den, x)
    return x * f + np.euler_gamma + jnp.log(x)


def _ei_tail(index: int) -> Any:
    def tail(x: Array) -> Array:
        num, den = (np.array(c, dtype=dtype_of(x)) for c in _EI_TAILS[index])
        one = lax_const(x, 1.0)
        w = one / x
        f = jnp.polyval(num, w) / jnp.polyval(den, w)
        f = w * f + one
        return jnp.exp(x) * w * f

    return tail


def _expi_positive(x: Array) -> Array:
    c = lax_const
    conds = [(c(x, 0) < x) & (x <= c(x, 2))] + [
        (c(x, 2**i) < x) & (x <= c(x, 2 ** (i + 1))) for i in range(1, 6)
    ]
    return jnp.piecewise(x, conds, [_ei_small, *(_ei_tail(i) for i in range(6))])


def _expi_negative(x: Array) -> Array:
    return -exp1(-x)


def _expi_of(x: Any) -> Array:
    (x_arr,) = p.promote_args_inexact("expi", x)
    if dtypes.issubdtype(dtype_of(x_arr), np.complexfloating):
        raise ValueError("expi does not support complex-valued inputs.")
    return jnp.piecewise(x_arr, [x_arr < 0], [_expi_negative, _expi_positive])


_expi_of.__name__ = _expi_of.__qualname__ = "expi"  # the name its jit prints, as in JAX
expi: Final = custom_jvp(Jitted(_expi_of))
"""The exponential integral Ei(x), the principal value of the integral of e**t / t below x."""


def _expi_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return expi(x), jnp.exp(x) / x * x_dot


_expi_jvp.__name__ = _expi_jvp.__qualname__ = "expi_jvp"
expi.defjvp(Jitted(_expi_jvp))


def _expn_series(x: Array, n: Array) -> Array:
    """E_n(x) for x <= 1: the digamma term minus the power series (Cephes)."""
    c = lax_const
    eps = dtypes.finfo(dtype_of(x)).eps
    zero, one = c(x, 0.0), c(x, 1.0)
    psi = -np.euler_gamma - jnp.log(x)
    psi = lax.fori_loop(c(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = jnp.where(n == c(n, 1), one + one, n)
    init = {
        "x": x,
        "z": -x,
        "xk": zero,
        "yk": one,
        "pk": one - n,
        "ans": jnp.where(n == c(n, 1), zero, one / (one - n1)),
        "t": np.inf,
    }

    def body(d: dict[str, Any]) -> dict[str, Any]:
        d["xk"] += one
        d["yk"] *= d["z"] / d["xk"]
        d["pk"] += one
        d["ans"] += jnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = jnp.where(d["ans"] != zero, abs(d["yk"] / d["ans"]), one)
        return d

    def cond(d: dict[str, Any]) -> Any:
        return (d["x"] > c(d["x"], 0.0)) & (d["t"] > eps)

    d = lax.while_loop(cond, body, init)
    return d["z"] ** (n - c(n, 1)) * psi / jnp.exp(gammaln(n)) - d["ans"]


def _expn_fraction(x: Array, n: Array) -> Array:
    """E_n(x) for x > 1: the continued fraction, rescaled against overflow (Cephes)."""
    c = lax_const
    big = c(x, 1.44115188075855872e17)
    eps = dtypes.finfo(dtype_of(x)).eps
    zero, one = c(x, 0.0), c(x, 1.0)
    init = {
        "k": c(n, 1),
        "pkm2": one,
        "qkm2": x,
        "pkm1": one,
        "qkm1": x + n,
        "ans": one / (x + n),
        "t": c(x, np.inf),
        "r": zero,
        "x": x,
    }

    def body(d: dict[str, Any]) -> dict[str, Any]:
        x = d["x"]
        d["k"] += c(d["k"], 1)
        k = d["k"]
        odd = k % c(k, 2) == c(k, 1)
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - c(k, 1)) / c(k, 2), k / c(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nonzero = qk != zero
        d["r"] = r = jnp.where(nonzero, pk / qk, d["r"])
        d["t"] = jnp.where(nonzero, abs((d["ans"] - r) / r), one)
        d["ans"] = jnp.where(nonzero, r, d["ans"])
        d["pkm2"] = d["pkm1"]
        d["pkm1"] = pk
        d["qkm2"] = d["qkm1"]
        d["qkm1"] = qk
        is_big = abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = jnp.where(is_big, d[key] / big, d[key])
        return d

    def cond(d: dict[str, Any]) -> Any:
        return (d["x"] > c(d["k"], 0)) & (d["t"] > eps)

    d = lax.while_loop(cond, body, init)
    return d["ans"] * jnp.exp(-x)


def _expn_asymptotic(x: Array, n: Array) -> Array:
    """E_n(x) for n >= 5000: the first terms of the expansion in 1/(x + n)**2."""
    c = lax_const
    one = c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    ans = yk * n * (c(x, 6) * x * x - c(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - c(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + one) * jnp.exp(-x) / xk


def _expn_of(n: Any, x: Any) -> Array:
    n, x = p.promote_args_inexact("expn", n, x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError("expn does not support complex-valued inputs.")
    c = lax_const
    zero, one = c(x, 0), c(x, 1)
    conds = [
        (n < c(n, 0)) | (x < zero),
        (x == zero) & (n < c(n, 2)),
        (x == zero) & (n >= c(n, 2)),
        (n == c(n, 0)) & (x >= zero),
        n >= c(n, 5000),
        x > one,
    ]
    n1 = jnp.where(n == c(n, 1), n + n, n)  # keeps 1 / n1 finite where it is not used
    values = [
        np.nan,
        np.inf,
        one / n1,
        jnp.exp(-x) / x,
        _expn_asymptotic,
        _expn_fraction,
        _expn_series,
    ]
    return jnp.piecewise(x, conds, values, n=n)


_expn_of.__name__ = _expn_of.__qualname__ = "expn"
expn: Final = custom_jvp(jnp.vectorize(Jitted(_expn_of)), nondiff_argnums=(0,))
"""The generalized exponential integral E_n(x), the integral of e**(-xt) / t**n above 1."""


def _expn_jvp(n: Any, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Array, Array]:
    (x,), (x_dot,) = primals, tangents
    return expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, lax_const(n, 1)), x))


_expn_jvp.__name__ = _expn_jvp.__qualname__ = "expn_jvp"
expn.defjvp(Jitted(_expn_jvp))


def exp1(x: Any) -> Array:
    """The exponential integral E1(x) = expn(1, x)."""
    (x,) = p.promote_args_inexact("exp1", x)
    if dtypes.issubdtype(dtype_of(x), np.complexfloating):
        raise ValueError("exp1 does not support complex-valued inputs.")
    return expn(1, x)
