"""The interpreters: staging (`make_jaxpr`), forward mode, linearization, partial evaluation,
transposition, and dead-code elimination; evaluation is the bottom trace of `tracing`.

Each interpreter owns its trace type and its rule table. Rules for a primitive are registered
where the primitive is defined (the lax modules, call and control-flow primitives, upper
layers); an interpreter never names a primitive other than its own (`add_any`).
"""

from lamina_core.interpreters import helpers as _helpers  # noqa: F401  (registers add_any)
from lamina_core.interpreters.jvp import jvp_rules
from lamina_core.interpreters.linearize import linearization_rules
from lamina_core.interpreters.transpose import transpose_rules
from lamina_core.interpreters.zeros import Zero, add_any_p, instantiate_zeros

__all__ = [
    "Zero",
    "add_any_p",
    "instantiate_zeros",
    "jvp_rules",
    "linearization_rules",
    "transpose_rules",
]
