"""Lamina: JAX's tracing compiler core as a stack of small typed libraries.

`import lamina as jax` runs JAX code for everything Lamina implements. This package only
re-exports the layers' public names; it holds no logic of its own.
"""

from lamina import (
    ad_checkpoint,
    aot,
    custom_batching,
    custom_derivatives,
    debug,
    distributed,
    dtypes,
    errors,
    experimental,
    lax,
    nn,
    numpy,
    random,
    ref,
    scipy,
    sharding,
    stages,
    tree,
    tree_util,
    typing,
    version,
)
from lamina_consts import make_jaxpr
from lamina_core import (
    ShapeDtypeStruct,
    checkpoint,
    checkpoint_policies,
    config,
    custom_jvp,
    custom_vjp,
    eval_shape,
    grad,
    hessian,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    remat,
    typeof,
    value_and_grad,
    vjp,
    vmap,
)
from lamina_core.callbacks._callbacks import pure_callback
from lamina_core.config._config import (
    debug_infs,
    debug_nans,
    enable_checks,
    enable_x64,
    make_user_context,
)
from lamina_core.config._config import disable_jit_scope as disable_jit
from lamina_core.custom_derivatives._closures import closure_convert, custom_gradient
from lamina_core.interpreters.staging import ensure_compile_time_eval
from lamina_core.ir import _source_info
from lamina_core.ir._mesh import set_mesh
from lamina_core.ir._named_scopes import named_call, named_scope
from lamina_core.ir._partition_spec import P, PartitionSpec
from lamina_core.ir.dtypes import float0
from lamina_core.random._keys import default_prng_impl
from lamina_core.random._primitives import threefry_partitionable
from lamina_core.sharding._shard_map import shard_map
from lamina_refs import Ref, empty_ref, free_ref, freeze, new_ref
from lamina_runtime import (
    Array,
    block_until_ready,
    clear_caches,
    device_get,
    device_put,
    devices,
    jit,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from lamina_runtime.environment import (
    Device,
    copy_to_host_async,
    default_backend,
    device_count,
    effects_barrier,
    host_count,
    host_id,
    host_ids,
    local_device_count,
    print_environment_info,
    process_count,
    process_index,
    process_indices,
)
from lamina_runtime.jit import explain_cache_misses
from lamina_runtime.mesh_api import make_mesh
from lamina_runtime.pipeline import log_compiles
from lamina_runtime.pmap import pmap

_source_info.register_internal_path(__file__)

__version__ = version.__version__

__all__ = [
    "Array",
    "Device",
    "P",
    "PartitionSpec",
    "Ref",
    "ShapeDtypeStruct",
    "__version__",
    "ad_checkpoint",
    "aot",
    "block_until_ready",
    "checkpoint",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "config",
    "copy_to_host_async",
    "custom_batching",
    "custom_derivatives",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "debug",
    "debug_infs",
    "debug_nans",
    "default_backend",
    "default_prng_impl",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "distributed",
    "dtypes",
    "effects_barrier",
    "empty_ref",
    "enable_checks",
    "enable_x64",
    "ensure_compile_time_eval",
    "errors",
    "eval_shape",
    "experimental",
    "explain_cache_misses",
    "float0",
    "free_ref",
    "freeze",
    "grad",
    "hessian",
    "host_count",
    "host_id",
    "host_ids",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "local_device_count",
    "local_devices",
    "log_compiles",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_jaxpr",
    "make_mesh",
    "make_user_context",
    "named_call",
    "named_scope",
    "new_ref",
    "nn",
    "numpy",
    "pmap",
    "print_environment_info",
    "process_count",
    "process_index",
    "process_indices",
    "pure_callback",
    "random",
    "ref",
    "remat",
    "scipy",
    "set_mesh",
    "shard_map",
    "sharding",
    "stages",
    "threefry_partitionable",
    "tree",
    "tree_util",
    "typeof",
    "typing",
    "value_and_grad",
    "version",
    "vjp",
    "vmap",
]
