"""The trace machinery: the current trace, `bind`, tracers and values, evaluation.

`_tracing` (traces, tracers, `bind`, the eager evaluation trace and its errors), `_values`
(`typeof` and value types), `_evaluate` (the NumPy reference evaluator and `eval_jaxpr`),
`_vma` (varying manual axes in types), `_typecheck` (the jaxpr type checker),
`_mutable_checks` (the aliasing rules of mutable values), `_error_types` (`jax.errors` types
nothing raises yet).
"""
