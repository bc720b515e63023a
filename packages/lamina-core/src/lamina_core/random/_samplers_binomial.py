"""`binomial` and `multinomial`, with JAX 0.10.2's algorithms, so a key gives JAX's values.

Binomial draws pick, per element, between two schemes, each run over the whole array as a
`while` loop (until every element is done): below a mean of 10 (with the smaller of `p` and
`1 - p`), inversion by counting geometric waiting times; above it, Hormann's transformed
rejection with squeeze (BTRS), whose log-factorial bound uses Stirling's series (a table
below 10). Draws with `p > 1/2` are made with `1 - p` and mirrored, as TensorFlow and
JAX do. `multinomial` is a `scan` over the outcomes, each a binomial draw of what remains.

JAX's kernels are `jit(inline=True)`, which stages their bodies into the caller: here they are
plain functions, which stage the same equations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import dtypes
from lamina_core.lax import canonical_shape
from lamina_core.numpy import getitem, promote_dtypes_inexact
from lamina_core.numpy import lax_const as _const
from lamina_core.random._keys import check_prng_key, split_typed, unstack
from lamina_core.random._samplers import _check_shape, _user_dtype, uniform
from lamina_core.trace import typeof

Array = Any

_STIRLING_TAIL: Final = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)
"""log(k!) - Stirling's approximation of it, for k = 0..9 (the series is poor there)."""


def _dtype(x: Array) -> np.dtype:
    dtype: np.dtype = typeof(x).dtype  # type: ignore[attr-defined]  # an array
    return dtype


def _isnan(x: Array) -> Array:
    # JAX's `lax.ne` of weakly typed floats is a weakly typed boolean, which `|` then
    # converts; Lamina's `!=` keeps that weak type (its `lax.ne` does not).
    return x != x


def _weak(x: Array) -> bool:
    return bool(getattr(typeof(x), "weak_type", False))


def _or(x: Array, y: Array) -> Array:
    """`x | y` of booleans, as JAX stages it.

    JAX's `|` promotes two weakly typed booleans to a strong one, converting both; Lamina's
    keeps them weak (and converts nothing), so that case converts them here.
    """
    if not (_weak(x) and _weak(y)):
        return x | y
    strong = [
        lax.convert_element_type_p.bind(v, new_dtype=np.dtype(bool), weak_type=False, sharding=None)
        for v in (x, y)
    ]
    return lax.bitwise_or(*strong)


def _stirling_tail(k: Array) -> Array:
    """The error of Stirling's approximation of log(k!): tabulated to 9, a series beyond."""
    table = jnp.array(_STIRLING_TAIL, dtype=_dtype(k))
    small = k <= 9
    k = lax.clamp(_const(k, 0.0), k, _const(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(small, getitem(table, jnp.asarray(k, dtype="int32")), series)


def _binomial_inversion(
    key: Array, count: Array, prob: Array, shape: tuple[int, ...], dtype: Any, max_iters: Any
) -> Array:
    # The number of successes is the number of geometric gaps that fit in `count` trials.
    log1minusprob = jnp.log1p(-prob)
    prob_dtype = _dtype(prob)

    def body_fn(carry: Any) -> Any:
        i, num_geom, geom_sum, key = carry
        subkey, key = unstack(split_typed(key))
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob_dtype)
        geom_sum = geom_sum + jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum, key

    def cond_fn(carry: Any) -> Any:
        i, geom_sum = carry[0], carry[2]
        return (geom_sum <= count).any() & (i < max_iters)

    num_geom_init = lax.full_like(prob, 0, prob_dtype, shape)
    geom_sum_init = lax.full_like(prob, 0, prob_dtype, shape)
    k = lax.while_loop(cond_fn, body_fn, (0, num_geom_init, geom_sum_init, key))[1]
    return (k - 1).astype(dtype)


def _btrs(
    key: Array, count: Array, prob: Array, shape: tuple[int, ...], dtype: Any, max_iters: Any
) -> Array:
    prob_dtype = _dtype(prob)
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry: Any) -> Any:
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = unstack(split_typed(key, 3))
        u = uniform(subkey_0, shape, prob_dtype)
        v = uniform(subkey_1, shape, prob_dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        # log of the density ratio bound, from Stirling's series at the mode and at k.
        bound = (
            (m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_tail(m)
            + _stirling_tail(count - m)
            - _stirling_tail(k)
            - _stirling_tail(count - k)
        )
        accept2 = v <= bound
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted |= accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry: Any) -> Any:
        i, accepted = carry[0], carry[2]
        return (~accepted).any() & (i < max_iters)

    k_init = lax.full_like(prob, -1, prob_dtype, shape)
    carry = (0, k_init, jnp.full(shape, False, bool), key)
    return lax.while_loop(cond_fn, body_fn, carry)[1].astype(dtype)


def _binomial(
    key: Array, count: Any, prob: Any, shape: tuple[int, ...] | None, dtype: Any
) -> Array:
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        shapes = [shape, np.shape(count), np.shape(prob)]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None
        _check_shape("binomial", shape, np.shape(count), np.shape(prob))
    (prob,) = promote_dtypes_inexact(prob)
    count = lax.convert_element_type(count, _dtype(prob))
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = _isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(_or(q_is_nan, q_l_0), lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)  # a fractional count rounds down, as in NumPy

    # Each scheme gets harmless parameters where the other one is used.
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = _or(q_l_0, q_is_nan) | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
    # Undo the mirroring of p > 1/2 (where it applied).
    return lax.select(
        p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
        samples,
        count.astype(dtype) - samples,
    )


def _check_arraylike(name: str, *args: Any) -> None:
    for pos, arg in enumerate(args):
        ok = hasattr(arg, "shape") and hasattr(arg, "dtype")
        if not ok and not isinstance(arg, (bool, int, float, complex, np.generic)):
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
            )


def binomial(
    key: Any, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None
) -> Array:
    """Binomial variates: successes in `n` trials of probability `p`, of a float `dtype`.

    `n` and `p` broadcast to `shape` (default their broadcast shape). A fractional `n` is
    rounded down; a NaN or negative `n`, or a NaN or out-of-range `p`, gives NaN; an infinite
    `n` gives infinity.
    """
    typed, _ = check_prng_key("binomial", key)
    _check_arraylike("binomial", n, p)
    dt = _user_dtype(dtype, float)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"dtype argument to `binomial` must be a float dtype, got {dt}")
    shp = None if shape is None else canonical_shape(shape)
    return _binomial(typed, n, p, shp, dt)


def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    unroll: int | bool = 1,
) -> Array:
    """Counts of each outcome (the last axis of `p`) in `n` trials.

    A `scan` over the outcomes draws each count as a binomial of the trials left, with the
    outcome's probability relative to the outcomes not yet drawn. `shape` (default `p`'s) is
    the result's shape, outcomes included; `unroll` is the scan's.
    """
    typed, _ = check_prng_key("multinomial", key)
    _check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    shp = tuple(typeof(p).shape) if shape is None else tuple(shape)  # type: ignore[attr-defined]
    n = jnp.broadcast_to(n, shp[:-1])
    p = jnp.broadcast_to(p, shp)

    def draw(remainder: Array, ratio_key: Any) -> tuple[Array, Array]:
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=_dtype(remainder))
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split_typed(typed, int(typeof(ratios).shape[0]))  # type: ignore[attr-defined]
    _, counts = lax.scan(draw, n, (ratios, keys), unroll=unroll)
    # No dtype means the default float type (JAX's `astype(None)`), not the counts' own.
    return jnp.moveaxis(counts, 0, -1).astype(_user_dtype(dtype, float))


__all__ = ["binomial", "multinomial"]
