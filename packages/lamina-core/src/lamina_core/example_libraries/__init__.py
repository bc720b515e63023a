"""JAX's example libraries, as `jax.example_libraries`: `optimizers` (first-order optimizers as
`(init, update, get_params)` triples over pytrees) and `stax` (neural network layers as
`(init_fun, apply_fun)` pairs). Written on the public frontends (`numpy`, `lax`, `nn`,
`random`, `tree`), as JAX's are; import the two modules by name.
"""
