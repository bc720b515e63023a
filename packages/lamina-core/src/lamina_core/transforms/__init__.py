"""The user-facing transformations over the interpreters: `make_jaxpr`, `jit` and the call
primitive it binds, `grad`/`vjp`/`jvp`/`linearize`/`linear_transpose`, `vmap`, `eval_shape`.

`_make_jaxpr`, `_jit` and `_call` (the `jit` primitive, `stage_call`), `_call_ad` and
`_call_batching` (its differentiation and batching rules, registered at import), `_autodiff`,
`_vmap`, `_jacobians`.
"""

from lamina_core.transforms import _call_ad as _call_ad  # registers jit's AD rules
from lamina_core.transforms import _call_batching as _call_batching  # registers jit's vmap rule
