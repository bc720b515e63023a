"""`lamina_core.jacobians`: dense Jacobians and Hessians, as JAX's `jacfwd`, `jacrev`,
`jacobian` and `hessian`.

They compose the transformations (`vmap` of `jvp` or of a pullback) with `numpy`, which builds
the standard basis and cuts the results into blocks as JAX does (so the staged programs print
as JAX's); that is why they sit above `numpy` rather than in `transforms`.
"""

from lamina_core.jacobians._jacobians import hessian, jacfwd, jacobian, jacrev

__all__ = ["hessian", "jacfwd", "jacobian", "jacrev"]
