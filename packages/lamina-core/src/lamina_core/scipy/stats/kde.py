"""`jax.scipy.stats.gaussian_kde`: a Gaussian kernel density estimate of weighted samples, a
pytree (its arrays are leaves), with JAX 0.10.2's bandwidths ('scott', 'silverman', a scalar
or a callable), evaluation (vmapped kernels, `logsumexp` for `logpdf`), integrals against
Gaussians, boxes (1-D) and other estimates, and resampling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from lamina_core import numpy as jnp
from lamina_core import random
from lamina_core.ir import dtypes
from lamina_core.numpy import dtype_of, shape_of
from lamina_core.numpy import promotion as p
from lamina_core.scipy import linalg
from lamina_core.scipy._special_log import logsumexp
from lamina_core.scipy._special_ndtr import ndtr
from lamina_core.transforms import Jitted, vmap
from lamina_core.tree.tree_util import register_pytree_node_class

Array = Any
BwMethod = None | str | Array | Callable[[Any], Array]


_LEAVES = ("neff", "dataset", "weights", "covariance", "inv_cov")


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of the columns of `dataset` (`(d, n)`, or `(n,)`
    for one dimension), optionally weighted."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None) -> None:
        p.check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(dtype_of(dataset), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not int(np.prod(shape_of(dataset))) > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = shape_of(dataset)
        if weights is not None:
            p.check_arraylike("gaussian_kde", weights)
            dataset, weights = p.promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if len(shape_of(weights)) != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if shape_of(weights)[0] != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = p.promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dtype_of(dataset))
        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / jnp.sum(weights**2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = jnp.atleast_2d(_weighted_cov(dataset, weights))
        data_inv_cov = jnp.linalg.inv(data_cov)
        self._setattr("covariance", data_cov * factor**2)
        self._setattr("inv_cov", data_inv_cov / factor**2)

    def _setattr(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: Any, children: Any) -> gaussian_kde:
        kde = cls.__new__(cls)
        for name, child in zip(_LEAVES, children, strict=True):
            kde._setattr(name, child)
        return kde

    @property
    def d(self) -> int:
        """The dimension of the data."""
        return int(shape_of(self.dataset)[0])

    @property
    def n(self) -> int:
        """The number of samples."""
        return int(shape_of(self.dataset)[1])

    def evaluate(self, points: Any) -> Array:
        """The density at the columns of `points` (`(d, m)`)."""
        p.check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _gaussian_kernel_eval(
            False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov
        )
        return result[:, 0]

    def __call__(self, points: Any) -> Array:
        return self.evaluate(points)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Array:
        """The integral of the density times the Gaussian of `mean` and `cov`."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if shape_of(mean) != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if shape_of(cov) != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Array:
        """The mass of a one-dimensional density between the scalars `low` and `high`."""
        return _integrate_box_1d(self, low, high)

    def integrate_kde(self, other: gaussian_kde) -> Array:
        """The integral of the product of this density and `other`'s."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        small, large = (self, other) if self.n < other.n else (other, self)
        convolve = partial(_gaussian_kernel_convolve, chol, norm, large.dataset, large.weights)
        result = vmap(convolve, in_axes=1)(small.dataset)
        return jnp.sum(result * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Array:
        """`shape` samples of the density (`(d, *shape)`): a sample point chosen by weight
        plus normal noise of the kernel's covariance."""
        return _resample(self, key, shape=shape)

    def pdf(self, x: Any) -> Array:
        """The density at `x` (as `evaluate`)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Array:
        """The log density at `x`, by `logsumexp`."""
        p.check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _gaussian_kernel_eval(
            True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov
        )
        return result[:, 0]

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Array:
        """Not supported (as JAX): only `integrate_box_1d`."""
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Not supported (as JAX): the estimate is immutable."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Array:
        if dtypes.issubdtype(dtype_of(points), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = shape_of(points)
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _weighted_cov(x: Array, weights: Array) -> Array:
    """`jnp.cov(x, aweights=weights)` of the rows of the 2-D `x` (ddof 1), as JAX computes
    it: the weighted mean, then sum(w (x - mean)(x - mean)^T) / (sum(w) - sum(w^2) / sum(w))."""
    w = abs(weights)
    avg, w_sums = jnp.average(x, axis=1, weights=w, returned=True)
    w_sum = w_sums[0]
    fact = w_sum - jnp.sum(w * w) / w_sum
    centered = x - avg[:, None]
    weighted = (centered * w[None, :]).T
    return jnp.squeeze(jnp.true_divide(jnp.dot(centered, jnp.conj(weighted)), fact))


def _named(name: str, fun: Any, **jit_kwargs: Any) -> Any:
    fun.__name__ = fun.__qualname__ = name
    return Jitted(fun, **jit_kwargs)


def _box_1d_impl(kde: gaussian_kde, low: Any, high: Any) -> Array:
    if kde.d != 1:
        raise ValueError("integrate_box_1d() only handles 1D pdfs")
    if np.ndim(low) != 0 or np.ndim(high) != 0:
        raise ValueError("the limits of integration in integrate_box_1d must be scalars")
    sigma = jnp.squeeze(jnp.sqrt(kde.covariance))
    low = jnp.squeeze((low - kde.dataset) / sigma)
    high = jnp.squeeze((high - kde.dataset) / sigma)
    return jnp.sum(kde.weights * (ndtr(high) - ndtr(low)))


def _resample_impl(kde: gaussian_kde, key: Any, shape: tuple[int, ...] = ()) -> Array:
    ind_key, eps_key = random.split(key)
    ind = random.choice(ind_key, kde.n, shape=shape, p=kde.weights)
    zeros = jnp.zeros(kde.d, dtype_of(kde.covariance))
    eps = random.multivariate_normal(
        eps_key, zeros, kde.covariance, shape=shape, dtype=dtype_of(kde.dataset)
    ).T
    return kde.dataset[:, ind] + eps


_integrate_box_1d = _named("integrate_box_1d", _box_1d_impl)
_resample = _named("resample", _resample_impl, static_argnames=("shape",))


def _gaussian_kernel_convolve(chol: Any, norm: Any, target: Any, weights: Any, mean: Any) -> Array:
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)
    return norm * jnp.sum(jnp.exp(-arg) * weights)


def _kernel_eval(in_log: bool, points: Any, values: Any, xi: Any, precision: Any) -> Array:
    points, values, xi, precision = p.promote_dtypes_inexact(points, values, xi, precision)
    d = shape_of(points)[1]
    if shape_of(xi)[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if shape_of(precision) != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = jnp.dot(points, whitening)
    xi = jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def kernel(x_test: Any, x_train: Any, y_train: Any) -> Array:
        arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
        if in_log:
            return jnp.log(y_train) + arg
        return y_train * jnp.exp(arg)

    reduce: Any = logsumexp if in_log else jnp.sum

    def reduced_kernel(x: Any) -> Array:
        return reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0)

    return vmap(reduced_kernel)(xi)


_gaussian_kernel_eval = _named("_gaussian_kernel_eval", _kernel_eval, static_argnums=0)
