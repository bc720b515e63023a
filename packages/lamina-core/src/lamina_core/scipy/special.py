"""`jax.scipy.special` for Lamina: the special functions JAX 0.10.2 builds from primitives
Lamina has (see the `_special_*` modules), staged as JAX stages them.

Not here: lpmn; the complex branches of gamma and loggamma.
"""

from lamina_core.scipy._special_bernoulli import bernoulli
from lamina_core.scipy._special_bessel import i0, i0e, i1, i1e
from lamina_core.scipy._special_bessel_jn import bessel_jn
from lamina_core.scipy._special_expint import exp1, expi, expn
from lamina_core.scipy._special_faddeeva import dawsn, erfcx, wofz
from lamina_core.scipy._special_fresnel import fresnel
from lamina_core.scipy._special_gamma import (
    beta,
    betaln,
    comb,
    digamma,
    erf,
    erfc,
    erfinv,
    factorial,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    poch,
)
from lamina_core.scipy._special_hyp1f1 import hyp1f1
from lamina_core.scipy._special_hyp2f1 import hyp2f1
from lamina_core.scipy._special_incomplete import betainc, gammainc, gammaincc
from lamina_core.scipy._special_log import (
    boxcox,
    boxcox1p,
    entr,
    expit,
    kl_div,
    log_softmax,
    logit,
    logsumexp,
    rel_entr,
    softmax,
    xlog1py,
    xlogy,
)
from lamina_core.scipy._special_ndtr import log_ndtr, ndtr, ndtri, spence
from lamina_core.scipy._special_owens_t import owens_t
from lamina_core.scipy._special_sici import sici
from lamina_core.scipy._special_sph_harm import sph_harm_y
from lamina_core.scipy._special_zeta import polygamma, zeta

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "xlogy",
    "zeta",
]
