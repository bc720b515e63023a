"""`lamina.scipy.stats`: probability distributions, as `jax.scipy.stats` (see
`lamina_core.scipy.stats`)."""

from lamina.scipy.stats import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    pareto,
    poisson,
    t,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "cauchy",
    "chi2",
    "expon",
    "gamma",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "pareto",
    "poisson",
    "t",
    "uniform",
]
