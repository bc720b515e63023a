"""The gamma family: `gamma`, `loggamma`, `beta`, `dirichlet`, `chisquare`, `f`, `t`,
`generalized_normal` and `ball`, with JAX 0.10.2's algorithms, so the same key gives the same
values.

Gamma variates come from the `random_gamma` primitive (`log_space` param), which JAX prints
and which this module defines: one key per element, and per element Marsaglia and Tsang's
rejection loop (two nested `while` loops drawing normals and uniforms). The primitive is
lowered by tracing that algorithm, vmapped over the elements, as JAX lowers it; the NumPy
reference runs it element by element with `map`, as JAX's eager implementation does. The
other samplers are built on gamma draws in jitted kernels of JAX's names.

The derivative is JAX's implicit reparameterization: the tangent of a draw x is the tangent of
`a` times dx/da at fixed P(a, x) (`lax.random_gamma_grad`), mapped over the elements with
`lax.map` as JAX does on the CPU, the one platform Lamina lowers for.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Final

import numpy as np

from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.interpreters import AxisData, BatchDim, batching_rules, defjvp2
from lamina_core.ir import (
    AbstractValue,
    Primitive,
    abstract_eval_rules,
    canonicalize_sharding,
    impl_rules,
)
from lamina_core.lax import bdim_at_front, canonical_shape
from lamina_core.numpy import lax_const as _const
from lamina_core.random._keys import check_prng_key, split, split_typed, unstack
from lamina_core.random._samplers import _check_shape, _user_dtype, normal, uniform
from lamina_core.random._samplers_more import _float_dtype, exponential
from lamina_core.random._samplers_transformed import _broadcast_shape, rademacher
from lamina_core.random._sharded import sampled, sampler_sharding
from lamina_core.trace import typeof
from lamina_core.transforms import Jitted, vmap

Array = Any

random_gamma_p: Final = Primitive("random_gamma")


@abstract_eval_rules.register(random_gamma_p)
def _random_gamma_abstract_eval(key: AbstractValue, a: AbstractValue, *, log_space: bool) -> Any:
    return a


def _split(key: Array, num: int = 2) -> list[Array]:
    return unstack(split_typed(key, num))


def _gamma_one(key: Array, alpha: Array, log_space: bool) -> Array:
    """One gamma variate of shape `alpha` (a scalar): Marsaglia and Tsang's method."""
    zero, one, two = _const(alpha, 0), _const(alpha, 1), _const(alpha, 2)
    minus_one = _const(alpha, -1)
    one_over_two, one_over_three = _const(alpha, 0.5), _const(alpha, 1.0 / 3.0)
    squeeze_const = _const(alpha, 0.0331)
    dtype = typeof(alpha).dtype  # type: ignore[attr-defined]  # an array
    # alpha < 1 samples Gamma(alpha + 1) and boosts it by Uniform ** (1 / alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kxvu: Any) -> Array:
        _, x, v, u = kxvu
        return lax.bitwise_and(
            lax.ge(u, lax.sub(one, lax.mul(squeeze_const, lax.mul(x, x)))),
            lax.ge(
                lax.log(u),
                lax.add(lax.mul(x, one_over_two), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))),
            ),
        )

    def body_fn(kxvu: Any) -> Any:
        def next_kxv(kxv: Any) -> Any:
            key, subkey = _split(kxv[0])
            x = normal(subkey, (), dtype=dtype)
            return key, x, lax.add(one, lax.mul(x, c))

        key, x_key, u_key = _split(kxvu[0], 3)
        _, x, v = lax.while_loop(
            lambda kxv: lax.le(kxv[2], zero), next_kxv, (x_key, zero, minus_one)
        )
        u = uniform(u_key, (), dtype=dtype)
        return key, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split(key)
    # The initial state makes `cond_fn` true: the body runs at least once.
    _, _, v, _ = lax.while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential(subkey, (), dtype=dtype))
        log_boost = lax.select(
            boost_mask | (log_samples == 0), zero, lax.mul(log_samples, lax.div(one, alpha_orig))
        )
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = 1 - uniform(subkey, (), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def gamma_impl(key: Array, a: Array, *, log_space: bool, use_vmap: bool = False) -> Array:
    """Gamma variates of shape `a`: one key per element (split from `key`), then
    `_gamma_one` per element, vmapped (`use_vmap`, how JAX lowers it) or mapped."""
    a_shape = tuple(typeof(a).shape)  # type: ignore[attr-defined]  # an array
    key_shape = tuple(typeof(key).shape)  # type: ignore[attr-defined]  # a key array
    split_count = math.prod(a_shape[len(key_shape) :])
    keys = lax.reshape(key, (math.prod(key_shape),))
    keys = vmap(lambda k: split_typed(k, split_count))(keys)
    keys = lax.reshape(keys, (math.prod(key_shape) * split_count,))
    alphas = lax.reshape(a, (math.prod(a_shape),))
    one = partial(_gamma_one, log_space=log_space)
    if use_vmap:
        samples = vmap(one)(keys, alphas)
    else:
        samples = lax.map(lambda args: one(*args), (keys, alphas))
    return lax.reshape(samples, a_shape)


@impl_rules.register(random_gamma_p)
def _random_gamma_impl(key: Any, a: Any, *, log_space: bool) -> Any:
    return np.asarray(gamma_impl(key, a, log_space=log_space))


def _random_gamma_batch(
    axis_data: AxisData, vals: Sequence[Any], dims: Sequence[BatchDim], *, log_space: bool
) -> tuple[Any, BatchDim]:
    key, a = (bdim_at_front(x, d, axis_data.size) for x, d in zip(vals, dims, strict=True))
    return random_gamma_p.bind(key, a, log_space=log_space), 0


batching_rules.set(random_gamma_p, _random_gamma_batch)


def _log_gamma_grad(alpha: Array, x: Array) -> Array:
    """d log x / da for a gamma draw x: dx/da over x."""
    return lax.random_gamma_grad(alpha, x) / x


def _gamma_grad(sample: Array, a: Array, *, log_space: bool) -> Array:
    """dx/da for the draws `sample` of Gamma(a) (their logarithms if `log_space`), element by
    element."""
    samples = jnp.reshape(sample, -1)
    alphas = jnp.reshape(a, -1)
    one_grad: Callable[[Array, Array], Array] = lax.random_gamma_grad
    if log_space:
        # d log x = dx / x; exp(log x) may round to zero, then the smallest normal stands in.
        samples = lax.exp(samples)
        zero = _const(sample, 0)
        dtype = typeof(samples).dtype  # type: ignore[attr-defined]  # an array
        tiny = lax.full_like(samples, jnp.finfo(dtype).tiny)
        samples = lax.select(lax.eq(samples, zero), tiny, samples)
        one_grad = _log_gamma_grad
    # JAX maps on the CPU and vmaps elsewhere; Lamina lowers for the CPU only.
    grads = lax.map(lambda args: one_grad(*args), (alphas, samples))
    return grads.reshape(tuple(typeof(a).shape))  # type: ignore[attr-defined]  # an array


defjvp2(
    random_gamma_p,
    None,
    lambda g, ans, key, a, *, log_space: g * _gamma_grad(ans, a, log_space=log_space),
)


def _optional_shape(shape: Sequence[int] | None) -> tuple[int, ...] | None:
    return None if shape is None else canonical_shape(shape)


# --- gamma and loggamma --------------------------------------------------------------------


def gamma(
    key: Any,
    a: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Gamma variates with shape parameter `a` (unit scale), of `shape` (default `a`'s)."""
    typed, _ = check_prng_key("gamma", key)
    dt = _float_dtype("gamma", dtype)
    shp = _optional_shape(shape)
    sharding = sampler_sharding(out_sharding, "gamma", shp or ())
    return sampled(sharding, lambda k, a_: _gamma(k, a_, shp, dt), typed, a)


def loggamma(
    key: Any,
    a: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Logarithms of gamma variates, computed in log space (precise for small `a`)."""
    typed, _ = check_prng_key("loggamma", key)
    dt = _float_dtype("gamma", dtype)  # JAX names `gamma` in loggamma's message
    shp = _optional_shape(shape)
    sharding = canonicalize_sharding(out_sharding, "loggamma")
    draw = lambda k, a_: _gamma(k, a_, shp, dt, log_space=True)  # noqa: E731
    return sampled(sharding, draw, typed, a)


@partial(Jitted, static_argnames=("shape", "dtype", "log_space"))
def _gamma(
    key: Array, a: Any, shape: tuple[int, ...] | None, dtype: Any, log_space: bool = False
) -> Array:
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        _check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


# --- beta and dirichlet --------------------------------------------------------------------


def beta(
    key: Any,
    a: Any,
    b: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Beta variates: the ratio of two gamma draws, computed from their logarithms."""
    typed, _ = check_prng_key("beta", key)
    dt = _float_dtype("beta", dtype)
    shp = _broadcast_shape("beta", shape, a, b)
    sharding = sampler_sharding(out_sharding, "beta", shp)
    return sampled(sharding, lambda k, a_, b_: _beta(k, a_, b_, shp, dt), typed, a, b)


@partial(Jitted, static_argnums=(3, 4))
def _beta(key: Array, a: Any, b: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    a = lax.convert_element_type(a, dtype)
    b = lax.convert_element_type(b, dtype)
    key_a, key_b = _split(key)
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    log_gamma_a = loggamma(key_a, a, shape, dtype)
    log_gamma_b = loggamma(key_b, b, shape, dtype)
    # gamma_a / (gamma_a + gamma_b), without losing precision.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(
    key: Any,
    alpha: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Dirichlet variates over `alpha`'s last axis: normalized gamma draws (in log space)."""
    typed, _ = check_prng_key("dirichlet", key)
    dt = _float_dtype("dirichlet", dtype)
    shp = _optional_shape(shape)
    sharding = sampler_sharding(out_sharding, "dirichlet", shp or ())
    return sampled(sharding, lambda k, al: _dirichlet(k, al, shp, dt), typed, alpha)


def _softmax_last_axis(x: Array) -> Array:
    # `nn.softmax(x, -1)`'s equations (nn sits above random): shifted by the maximum, its
    # gradient stopped, as JAX's default softmax.
    x_max = jnp.max(x, -1, initial=-np.inf, keepdims=True)
    unnormalized = jnp.exp(x - lax.stop_gradient(x_max))
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


@partial(Jitted, static_argnums=(2, 3))
def _dirichlet(key: Array, alpha: Any, shape: tuple[int, ...] | None, dtype: Any) -> Array:
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = lax.convert_element_type(alpha, dtype)
    # Gamma in log space, normalized with a softmax: precise for small alpha.
    log_gamma_samples = loggamma(key, alpha, (*shape, np.shape(alpha)[-1]), dtype)
    return _softmax_last_axis(log_gamma_samples)


# --- chisquare, f and t --------------------------------------------------------------------


def chisquare(
    key: Any,
    df: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Chi-square variates with `df` degrees of freedom: twice a gamma(df / 2) draw."""
    typed, _ = check_prng_key("chisquare", key)
    dt = _float_dtype("chisquare", dtype)
    shp = _broadcast_shape("chisquare", shape, df)
    sharding = sampler_sharding(out_sharding, "chisquare", shp)
    return _chisquare(typed, df, shp, dt, sharding)


@partial(Jitted, static_argnums=(2, 3, 4))
def _chisquare(key: Array, df: Any, shape: tuple[int, ...], dtype: Any, out_sharding: Any) -> Array:
    df = lax.convert_element_type(df, dtype)
    two = _const(df, 2)
    half_df = lax.div(df, two)
    log_g = loggamma(key, half_df, shape, dtype, out_sharding=out_sharding)
    return lax.mul(jnp.exp(log_g), two)


def f(
    key: Any,
    dfnum: Any,
    dfden: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """F variates: the ratio of two chi-square draws, each over its degrees of freedom."""
    typed, _ = check_prng_key("f", key)
    dt = _float_dtype("f", dtype)
    shp = _broadcast_shape("f", shape, dfnum, dfden)
    sharding = sampler_sharding(out_sharding, "f", shp)
    return _f(typed, dfnum, dfden, shp, dt, sharding)


@partial(Jitted, static_argnums=(3, 4, 5))
def _f(
    key: Array, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: Any, out_sharding: Any
) -> Array:
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = _split(key)
    chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype, out_sharding=out_sharding)
    chi2_dfd = chisquare(key_dfd, dfden, shape, dtype, out_sharding=out_sharding)
    num = lax.div(chi2_dfn, dfnum)
    den = lax.div(chi2_dfd, dfden)
    return lax.div(num, den)


def t(
    key: Any,
    df: Any,
    shape: Sequence[int] | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Student's t variates: a normal draw over the root of a scaled gamma draw."""
    typed, _ = check_prng_key("t", key)
    dt = _float_dtype("t", dtype)
    shp = _broadcast_shape("t", shape, df)
    sharding = sampler_sharding(out_sharding, "t", shp)
    return sampled(sharding, lambda k, df_: _t(k, df_, shp, dt), typed, df)


@partial(Jitted, static_argnums=(2, 3))
def _t(key: Array, df: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split(key)
    n = normal(key_n, shape, dtype)
    two = _const(n, 2)
    half_df = lax.div(df, two)
    g = gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


# --- generalized_normal and ball ---------------------------------------------------------


def generalized_normal(
    key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None, *, out_sharding: Any = None
) -> Array:
    """Generalized normal variates (density proportional to exp(-|x|**p)): a signed gamma
    draw raised to 1 / p."""
    shp = canonical_shape(shape)
    typed, _ = check_prng_key("generalized_normal", key)
    dt = _user_dtype(dtype, float)
    sharding = sampler_sharding(out_sharding, "generalized_normal", shp)
    return sampled(sharding, lambda k, p_: _generalized_normal(k, p_, shp, dt), typed, p)


@partial(Jitted, static_argnums=(2, 3))
def _generalized_normal(key: Array, p: Any, shape: tuple[int, ...], dtype: Any) -> Array:
    keys = split(key)
    g = gamma(keys[0], 1 / p, shape, dtype)
    r = rademacher(keys[1], shape, dtype)
    return r * g ** (1 / p)


def ball(
    key: Any,
    d: int,
    p: float = 2,
    shape: Sequence[int] = (),
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Array:
    """Points uniform in the unit `p`-norm ball of dimension `d`, of shape `(*shape, d)`."""
    shp = canonical_shape(shape)
    typed, _ = check_prng_key("ball", key)
    dt, dim = _user_dtype(dtype, float), operator.index(d)
    sharding = canonicalize_sharding(out_sharding, "ball")
    return sampled(sharding, lambda k, p_: _ball(k, p_, dim, shp, dt), typed, p)


@partial(Jitted, static_argnums=(2, 3, 4))
def _ball(key: Array, p: Any, d: int, shape: tuple[int, ...], dtype: Any) -> Array:
    k1, k2 = unstack(split(key))
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


__all__ = [
    "ball",
    "beta",
    "chisquare",
    "dirichlet",
    "f",
    "gamma",
    "gamma_impl",
    "generalized_normal",
    "loggamma",
    "random_gamma_p",
    "t",
]
