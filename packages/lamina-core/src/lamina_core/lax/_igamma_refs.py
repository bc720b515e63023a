"""NumPy references of the incomplete gamma and beta functions, in float64.

The same expansions XLA evaluates (see `_igamma_impl`), carried to float64's rounding: the
power series of P(a, x) below x = max(1, a) and Cephes' continued fraction of Q(a, x) above,
each with its derivative in a (for `igamma_grad_a` and `random_gamma_grad`), and the modified
Lentz evaluation of the incomplete beta continued fraction. Special values follow XLA's.
"""

from __future__ import annotations

import numpy as np

from lamina_core.lax import _special_refs as refs

_EPS = float(np.finfo(np.float64).eps)
_MAX_TERMS = 100_000
"""A cap on series terms: the series needs about sqrt(a) of them near x = a."""


def _prefactor(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log(x**a e**-x / Gamma(a)), and where its exponential underflows."""
    log_ax = a * np.log(x) - x - refs.lgamma(a)
    return log_ax, log_ax < -np.log(np.finfo(np.float64).max)


def _series(a: np.ndarray, x: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sum x**n / ((a+1)...(a+n)) and its derivative in a, where `on`."""
    r, c, total = a.copy(), np.ones_like(a), np.ones_like(a)
    dc, dtotal = np.zeros_like(a), np.zeros_like(a)
    for _ in range(_MAX_TERMS):
        if not on.any():
            break
        r1 = r + 1
        dc1 = dc * (x / r1) - c * x / (r1 * r1)
        c1 = c * (x / r1)
        r, dc, c = np.where(on, r1, r), np.where(on, dc1, dc), np.where(on, c1, c)
        total, dtotal = np.where(on, total + c, total), np.where(on, dtotal + dc, dtotal)
        on = on & ((c / total > _EPS / 4) | (np.abs(dc / dtotal) > _EPS / 4))
    return total, dtotal


def _fraction(a: np.ndarray, x: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cephes' continued fraction of Q(a, x) e**x x**-a Gamma(a), and its derivative in a."""
    y = 1 - a
    z = x + y + 1
    c = np.zeros_like(x)
    pkm2, qkm2, pkm1, qkm1 = np.ones_like(x), x.copy(), x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(x), np.zeros_like(x), np.zeros_like(x), -x)
    dans = (dpkm1 - ans * dqkm1) / qkm1
    for _ in range(2000):
        if not on.any():
            break
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk, qk = pkm1 * z - pkm2 * yc, qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        usable = on & (qk != 0)
        r = np.where(usable, pk / np.where(qk != 0, qk, 1), ans)
        t = np.where(usable, np.abs((ans - r) / r), 1.0)
        dans_new = np.where(usable, (dpk - r * dqk) / np.where(qk != 0, qk, 1), dans)
        change = np.where(usable, np.abs(dans_new - dans), 1.0)
        ans, dans = r, dans_new
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1, dpk, dqkm1, dqk
        scale = np.where(np.abs(pk) > 1 / _EPS, _EPS, 1.0)
        pkm2, pkm1, qkm2, qkm1 = pkm2 * scale, pkm1 * scale, qkm2 * scale, qkm1 * scale
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm2 * scale, dpkm1 * scale, dqkm2 * scale, dqkm1 * scale
        on = on & ((t > _EPS / 4) | (change > _EPS / 4 * np.abs(dans_new)))
    return ans, dans


def _inputs(*args: np.ndarray) -> list[np.ndarray]:
    return [np.array(v, np.float64) for v in np.broadcast_arrays(*args)]


def _gamma_parts(
    a: np.ndarray, x: np.ndarray, upper: np.ndarray, bad: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The series (where not `upper`) or fraction (where `upper`) sums, their derivatives in
    a, the prefactor and its derivative in a, at safe operands where `bad`."""
    a, x = np.where(bad, 1.0, a), np.where(bad, 1.0, x)
    log_ax, underflow = _prefactor(a, x)
    on = ~bad & ~underflow
    s, ds = _series(a, x, on & ~upper)
    f, df = _fraction(a, x, on & upper)
    ax = np.where(underflow, 0.0, np.exp(log_ax))
    dlog_series = np.log(x) - refs.digamma(a + 1)
    dlog_fraction = np.log(x) - refs.digamma(a)
    return s, ds, f, df, ax, dlog_series, dlog_fraction


def igamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, x = _inputs(a, x)
    with np.errstate(all="ignore"):
        domain = (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
        upper = (x >= 1) & (x > a)
        special = domain | (x == 0) | np.isinf(x) | (a == 0)
        s, _, f, _, ax, _, _ = _gamma_parts(a, x, upper, special)
        out = np.where(upper, 1 - f * ax, s * ax / np.where(special, 1.0, a))
    out = np.where(x == 0, 0.0, out)
    out = np.where(np.isposinf(x), 1.0, out)
    # XLA's series divides 0 by a = 0 below x = 1; above, one minus an empty fraction is 1.
    out = np.where((a == 0) & (x > 0), np.where(upper, 1.0, np.nan), out)
    return np.where(domain, np.nan, out)


def igammac(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, x = _inputs(a, x)
    with np.errstate(all="ignore"):
        domain = (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
        lower = (x < 1) | (x < a)
        special = domain | (x == 0) | np.isinf(x) | (a == 0)
        s, _, f, _, ax, _, _ = _gamma_parts(a, x, ~lower, special)
        out = np.where(lower, 1 - s * ax / np.where(special, 1.0, a), f * ax)
    out = np.where(x == 0, 1.0, out)
    out = np.where(np.isposinf(x) | (a == 0), 0.0, out)
    return np.where(domain, np.nan, out)


def _gamma_derivative(a: np.ndarray, x: np.ndarray, sample: bool) -> np.ndarray:
    a, x = _inputs(a, x)
    with np.errstate(all="ignore"):
        domain = (x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x)
        upper = (x > 1) & (x > a)
        special = domain | (x == 0) | np.isinf(x)
        s, ds, f, df, ax, dls, dlf = _gamma_parts(a, x, upper, special)
        safe_a = np.where(special, 1.0, a)
        if sample:
            below = -(ds + s * dls) * x / safe_a
            above = (df + f * dlf) * x
        else:
            below = ax * (s * dls + ds) / safe_a
            above = -ax * (f * dlf + df)
        out = np.where(upper, above, below)
    out = np.where(x == 0, 0.0, out)
    out = np.where(np.isposinf(x) & ~domain, np.nan, out)
    return np.where(domain, np.nan, out)


def igamma_grad_a(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _gamma_derivative(a, x, sample=False)


def random_gamma_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    return _gamma_derivative(a, x, sample=True)


def _beta_fraction(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """DLMF 8.17.22's continued fraction, by the modified Lentz method."""
    tiny = 1e-300
    c = np.ones_like(x)
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    on = np.ones(x.shape, bool)
    delta = np.ones_like(x)
    for m in range(1, 3000):
        if not on.any():
            break
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1 + numerator / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = c * d
            h = np.where(on, h * delta, h)
        on = on & (np.abs(delta - 1) > _EPS / 4)
    return h


def betainc(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    a, b, x = _inputs(a, b, x)
    a_zero = (a == 0) | np.isposinf(b)
    b_zero = (b == 0) | np.isposinf(a)
    nan_in = np.isnan(a) | np.isnan(b) | np.isnan(x)
    is_zero = (b_zero & (x != 1)) | (a_zero & (x == 0))
    is_one = (a_zero & (x != 0)) | (b_zero & (x == 1))
    is_nan = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | nan_in
    with np.errstate(all="ignore"):
        direct = x < (a + 1) / (a + b + 2)
        p, q, y = np.where(direct, a, b), np.where(direct, b, a), np.where(direct, x, 1 - x)
        edge = y == 0  # x = 0 on the direct side, x = 1 on the other: front factor 0
        bad = is_zero | is_one | is_nan | edge
        p, q, y = np.where(bad, 1.0, p), np.where(bad, 1.0, q), np.where(bad, 0.5, y)
        log_front = p * np.log(y) + q * np.log1p(-y)
        log_beta = refs.lgamma(p) + refs.lgamma(q) - refs.lgamma(p + q)
        value = np.exp(log_front - log_beta) / p * _beta_fraction(p, q, y)
        out = np.where(direct, value, 1 - value)
    out = np.where(edge, np.where(direct, 0.0, 1.0), out)
    out = np.where(is_zero, 0.0, out)
    out = np.where(is_one, 1.0, out)
    return np.where(is_nan, np.nan, out)
