"""`lamina.scipy.integrate`: `trapezoid`, as `jax.scipy.integrate` (see
`lamina_core.scipy.integrate`)."""

from lamina_core.scipy.integrate import trapezoid

__all__ = ["trapezoid"]
