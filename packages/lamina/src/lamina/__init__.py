"""Lamina: JAX's tracing compiler core as a stack of small typed libraries.

`import lamina as jax` runs JAX code for everything Lamina implements. This package only
re-exports the layers' public names; it holds no logic of its own.
"""

from lamina import (
    ad_checkpoint,
    aot,
    custom_batching,
    custom_derivatives,
    dtypes,
    errors,
    experimental,
    lax,
    nn,
    numpy,
    random,
    ref,
    scipy,
    tree,
    tree_util,
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
from lamina_core import source_info as _source_info
from lamina_core.partition_spec import P, PartitionSpec
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
)

_source_info.register_internal_path(__file__)

__version__ = "0.1.0"

__all__ = [
    "Array",
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
    "config",
    "custom_batching",
    "custom_derivatives",
    "custom_jvp",
    "custom_vjp",
    "device_get",
    "device_put",
    "devices",
    "dtypes",
    "empty_ref",
    "errors",
    "eval_shape",
    "experimental",
    "free_ref",
    "freeze",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "lax",
    "linear_transpose",
    "linearize",
    "local_devices",
    "make_jaxpr",
    "new_ref",
    "nn",
    "numpy",
    "random",
    "ref",
    "remat",
    "scipy",
    "tree",
    "tree_util",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
]
