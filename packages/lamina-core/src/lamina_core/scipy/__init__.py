"""`jax.scipy` for Lamina: `special`, `stats` and `linalg`, as far as Lamina's primitives go.

Each function stages the equations JAX 0.10.2's does, so jaxprs print alike; what needs a
primitive Lamina lacks (incomplete gamma and beta, zeta and polygamma, QR, SVD and eigen
decompositions) is left out and listed in each module's docstring.
"""

from lamina_core.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
