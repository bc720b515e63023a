"""`jax.scipy.stats` for Lamina: one module per distribution, each with JAX 0.10.2's
functions (logpdf/pdf or logpmf/pmf, and cdf, sf, ppf, ... where JAX builds them from
primitives Lamina has).

Not here: the CDFs and survival functions of gamma, beta, chi2 and poisson (incomplete
gamma and beta functions).
"""

from lamina_core.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from lamina_core.scipy.stats._core import mode, rankdata, sem
from lamina_core.scipy.stats.kde import gaussian_kde

__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "gaussian_kde",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "mode",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "rankdata",
    "sem",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "wrapcauchy",
]
