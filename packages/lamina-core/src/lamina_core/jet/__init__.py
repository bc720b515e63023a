"""`jet`: Taylor-mode higher-order differentiation, as `jax.experimental.jet` (JAX 0.10.2).

`_trace` holds the interpreter (`JetTrace`, `JetTracer`), the symbolic zeros (`zero_term`,
`zero_series`), the rule table `jet_rules` and `jet` itself; `_helpers` the rule families
(`defzero`, `deflinear`, `def_deriv`, `def_comp`); `_rules_lax` and `_rules_calls` JAX's
rules for lax's primitives and for `jit` and custom-derivative calls. Importing this package
registers its rules; nothing below it imports it (loaded on first use).
"""

from lamina_core.jet import _rules_calls as _rules_calls  # registers rules
from lamina_core.jet import _rules_lax as _rules_lax  # registers rules
from lamina_core.jet._helpers import def_comp as def_comp
from lamina_core.jet._helpers import def_deriv as def_deriv
from lamina_core.jet._helpers import deflinear as deflinear
from lamina_core.jet._helpers import defzero as defzero
from lamina_core.jet._helpers import deriv_prop as deriv_prop
from lamina_core.jet._helpers import linear_prop as linear_prop
from lamina_core.jet._helpers import zero_prop as zero_prop
from lamina_core.jet._rules_calls import call_param_updaters as call_param_updaters
from lamina_core.jet._trace import JetRule as JetRule
from lamina_core.jet._trace import JetTrace as JetTrace
from lamina_core.jet._trace import JetTracer as JetTracer
from lamina_core.jet._trace import ZeroSeries as ZeroSeries
from lamina_core.jet._trace import ZeroTerm as ZeroTerm
from lamina_core.jet._trace import fact as fact
from lamina_core.jet._trace import jet as jet
from lamina_core.jet._trace import jet2 as jet2
from lamina_core.jet._trace import jet_fun as jet_fun
from lamina_core.jet._trace import jet_rules as jet_rules
from lamina_core.jet._trace import jet_subtrace as jet_subtrace
from lamina_core.jet._trace import traceable as traceable
from lamina_core.jet._trace import zero_series as zero_series
from lamina_core.jet._trace import zero_term as zero_term
