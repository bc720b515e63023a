"""The user-facing transformations over the interpreters: `make_jaxpr`, `jit` and the call
primitive it binds, `grad`/`vjp`/`jvp`/`linearize`/`linear_transpose`, `vmap`, `eval_shape`.

`_make_jaxpr`, `_jit` and `_call` (the `jit` primitive, `stage_call`), `_jit_cache` (`jit`'s
caches, keyed on the function), `_call_ad` and `_call_batching` (its differentiation and
batching rules, registered at import), `_autodiff`, `_vmap`, `_jacobians`.
"""

from lamina_core.transforms import _call_ad as _call_ad  # registers jit's AD rules
from lamina_core.transforms import _call_batching as _call_batching  # registers jit's vmap rule
from lamina_core.transforms import _call_transpose_refs as _call_transpose_refs  # jit's, Refs
from lamina_core.transforms._autodiff import (
    _argnums as _argnums,
)
from lamina_core.transforms._autodiff import (
    _check_callable as _check_callable,
)
from lamina_core.transforms._autodiff import (
    _check_input_dtype as _check_input_dtype,
)
from lamina_core.transforms._autodiff import (
    _check_output_dtype as _check_output_dtype,
)
from lamina_core.transforms._autodiff import (
    fix_other_args as fix_other_args,
)
from lamina_core.transforms._autodiff import (
    grad as grad,
)
from lamina_core.transforms._autodiff import (
    jvp as jvp,
)
from lamina_core.transforms._autodiff import (
    linear_transpose as linear_transpose,
)
from lamina_core.transforms._autodiff import (
    linearize as linearize,
)
from lamina_core.transforms._autodiff import (
    register_one_maker as register_one_maker,
)
from lamina_core.transforms._autodiff import (
    value_and_grad as value_and_grad,
)
from lamina_core.transforms._autodiff import (
    vjp as vjp,
)
from lamina_core.transforms._call import (
    UNSPECIFIED as UNSPECIFIED,
)
from lamina_core.transforms._call import (
    closed_call_p as closed_call_p,
)
from lamina_core.transforms._call import (
    jit_p as jit_p,
)
from lamina_core.transforms._call import (
    jit_params as jit_params,
)
from lamina_core.transforms._call import (
    stage_call as stage_call,
)
from lamina_core.transforms._call_ad import (
    jvp_jaxpr as jvp_jaxpr,
)
from lamina_core.transforms._call_ad import (
    linearize_jaxpr_forwarding as linearize_jaxpr_forwarding,
)
from lamina_core.transforms._call_ad import (
    split_jvp_outs as split_jvp_outs,
)
from lamina_core.transforms._call_ad import (
    transpose_jaxpr as transpose_jaxpr,
)
from lamina_core.transforms._call_batching import (
    batch_jaxpr as batch_jaxpr,
)
from lamina_core.transforms._call_batching import (
    batch_jaxpr_axes as batch_jaxpr_axes,
)
from lamina_core.transforms._call_batching import (
    batch_jaxpr_front as batch_jaxpr_front,
)
from lamina_core.transforms._eval_shape import (
    eval_shape as eval_shape,
)
from lamina_core.transforms._jit import (
    NOT_SPECIFIED as NOT_SPECIFIED,
)
from lamina_core.transforms._jit import (
    Jitted as Jitted,
)
from lamina_core.transforms._jit import (
    NotSpecified as NotSpecified,
)
from lamina_core.transforms._jit import (
    Signature as Signature,
)
from lamina_core.transforms._jit import (
    Staged as Staged,
)
from lamina_core.transforms._jit import (
    install_toplevel_jit as install_toplevel_jit,
)
from lamina_core.transforms._jit import (
    jit as jit,
)
from lamina_core.transforms._jit import (
    jit_decorator as jit_decorator,
)
from lamina_core.transforms._jit_cache import (
    FunctionCaches as FunctionCaches,
)
from lamina_core.transforms._jit_cache import (
    JitCaches as JitCaches,
)
from lamina_core.transforms._jit_cache import (
    TraceCaches as TraceCaches,
)
from lamina_core.transforms._jit_cache import (
    trace_caches as trace_caches,
)
from lamina_core.transforms._make_jaxpr import (
    argument_names as argument_names,
)
from lamina_core.transforms._make_jaxpr import (
    debug_name as debug_name,
)
from lamina_core.transforms._make_jaxpr import (
    fun_name as fun_name,
)
from lamina_core.transforms._make_jaxpr import (
    func_src_info as func_src_info,
)
from lamina_core.transforms._make_jaxpr import (
    make_jaxpr as make_jaxpr,
)
from lamina_core.transforms._make_jaxpr import (
    wrap_as_jax as wrap_as_jax,
)
from lamina_core.transforms._make_jaxpr import (
    wraps_as_jax as wraps_as_jax,
)
from lamina_core.transforms._stop_gradient import (
    stop_gradient as stop_gradient,
)
from lamina_core.transforms._stop_gradient import (
    stop_gradient_p as stop_gradient_p,
)
from lamina_core.transforms._vjp_refs import (
    DidntWant as DidntWant,
)
from lamina_core.transforms._vjp_refs import (
    DontWant as DontWant,
)
from lamina_core.transforms._vjp_refs import (
    GradRef as GradRef,
)
from lamina_core.transforms._vjp_refs import (
    GradValue as GradValue,
)
from lamina_core.transforms._vmap import (
    flatten_axes as flatten_axes,
)
from lamina_core.transforms._vmap import (
    vmap as vmap,
)
