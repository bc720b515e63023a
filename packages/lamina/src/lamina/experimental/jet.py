"""`jax.experimental.jet`: Taylor-mode higher-order differentiation (JAX 0.10.2's names).

Loaded on first import, never by `import lamina`.
"""

from lamina_core.jet import (
    JetTrace,
    JetTracer,
    ZeroSeries,
    ZeroTerm,
    call_param_updaters,
    def_comp,
    def_deriv,
    deflinear,
    defzero,
    deriv_prop,
    fact,
    jet,
    jet2,
    jet_fun,
    jet_rules,
    jet_subtrace,
    linear_prop,
    traceable,
    zero_prop,
    zero_series,
    zero_term,
)

__all__ = [
    "JetTrace",
    "JetTracer",
    "ZeroSeries",
    "ZeroTerm",
    "call_param_updaters",
    "def_comp",
    "def_deriv",
    "deflinear",
    "defzero",
    "deriv_prop",
    "fact",
    "jet",
    "jet2",
    "jet_fun",
    "jet_rules",
    "jet_subtrace",
    "linear_prop",
    "traceable",
    "zero_prop",
    "zero_series",
    "zero_term",
]
