"""`jax.scipy.stats` for Lamina: one module per distribution, each with JAX 0.10.2's
functions (logpdf/pdf or logpmf/pmf, and cdf, sf, ppf, ... where JAX builds them from
primitives Lamina has).

Not here: the CDFs and survival functions of gamma, beta, chi2 and poisson (incomplete
gamma and beta functions), and the distributions binom, betabinom, nbinom,
dirichlet, multinomial, gennorm, truncnorm, vonmises, wrapcauchy and gaussian_kde.
"""

from lamina_core.scipy.stats import (
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
