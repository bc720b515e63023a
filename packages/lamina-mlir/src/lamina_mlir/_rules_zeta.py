"""Lowering of `zeta` and `polygamma`, as JAX's: `chlo.zeta` and `chlo.polygamma`."""

from __future__ import annotations

from lamina_core.lax import polygamma_p, zeta_p
from lamina_mlir._rules_util import register_nary

register_nary(zeta_p, "chlo.zeta")
register_nary(polygamma_p, "chlo.polygamma")
