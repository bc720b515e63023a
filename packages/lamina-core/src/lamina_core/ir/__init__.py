"""The IR: what a traced program is made of, with no tracing machinery.

dtypes and promotion (`dtypes`, `_promotion`, `_dtype_queries`), abstract values and the aval
protocol (`_avals`), meshes and partition specs as types (`_mesh`, `_partition_spec`) with the
sharding rules of types over Explicit axes (`_explicit_sharding`), jaxprs (`_jaxpr`: `Var`,
`Literal`, `Jaxpr`, `ClosedJaxpr`, equations) and effects (`_effects`), typed Python scalars
(`_literals`), `Primitive` and `RuleTable` (`_primitive`) with the core rule tables
(`_rules`), source info and name scopes (`_source_info`, `_named_scopes`), and the printer
(`_pp`, the document combinators; `_pretty`, jaxprs printed as JAX prints them).
"""

from lamina_core.ir import _pretty as _pretty  # installs the printer into Jaxpr's __str__
