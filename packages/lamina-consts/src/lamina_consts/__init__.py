"""lamina-consts: the closed-over constants pass (seed 000).

It owns every decision about which constants become const args; core only records literals.
"""

from lamina_consts.api import make_jaxpr
from lamina_consts.const_args import EMPTY, ConstArgs, jaxpr_const_args
from lamina_consts.forms import ConstBinder, HoistRule, becomes_constvar, hoist, hoist_rules, inline
from lamina_consts.policy import (
    captured_constants_warn_bytes,
    embedded_constants_max_bytes,
    is_hoistable,
    is_literalable,
)
from lamina_consts.report import (
    CapturedConstant,
    CapturedConstantsWarning,
    captured_constants,
    format_report,
    warn_large_captures,
)
from lamina_core.ir import register_internal_path

register_internal_path(__file__)

__version__ = "0.1.0"

__all__ = [
    "EMPTY",
    "CapturedConstant",
    "CapturedConstantsWarning",
    "ConstArgs",
    "ConstBinder",
    "HoistRule",
    "__version__",
    "becomes_constvar",
    "captured_constants",
    "captured_constants_warn_bytes",
    "embedded_constants_max_bytes",
    "format_report",
    "hoist",
    "hoist_rules",
    "inline",
    "is_hoistable",
    "is_literalable",
    "jaxpr_const_args",
    "make_jaxpr",
    "warn_large_captures",
]
