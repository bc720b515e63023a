"""`jax.scipy` for Lamina: `special`, `stats` and `linalg`.

Each function computes what JAX 0.10.2's does, with the same algorithms (so values match) and
mostly the same equations (so jaxprs print alike); the few names still missing are listed in
each module's docstring and in docs/api-coverage.md.
"""

from lamina_core.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
