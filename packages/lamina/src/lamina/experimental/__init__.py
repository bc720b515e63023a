"""`jax.experimental`: the experimental APIs Lamina implements (`hijax`)."""

from lamina.experimental import hijax

__all__ = ["hijax"]
