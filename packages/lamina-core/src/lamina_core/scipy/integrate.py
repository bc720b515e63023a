"""`jax.scipy.integrate` for Lamina: `trapezoid` (see `lamina_core.scipy._integrate`)."""

from lamina_core.scipy._integrate import trapezoid

__all__ = ["trapezoid"]
