"""`lamina.example_libraries`: JAX's example libraries, `optimizers` and `stax`, as
`jax.example_libraries` (import each module by name)."""
