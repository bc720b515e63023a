"""JAX's top-level context managers of configuration options (`jax.numpy_rank_promotion`,
`jax.default_device`, `jax.transfer_guard`, ...): each is the option itself, which called with
a value gives a `with` block (or decorator) setting it, as JAX's are."""

from functools import partial as _partial
from typing import Any as _Any

from lamina_core import config as _config
from lamina_runtime import transfer_guard

_option = _config.option

allow_f16_reductions = _option("jax_allow_f16_reductions")
array_garbage_collection_guard = _option("jax_array_garbage_collection_guard")
auto_pcast = _option("jax_auto_pcast")
check_tracer_leaks = _option("jax_check_tracer_leaks")
checking_leaks: _Any = _partial(check_tracer_leaks, True)
debug_key_reuse = _option("jax_debug_key_reuse")
default_device = _option("jax_default_device")
default_matmul_precision = _option("jax_default_matmul_precision")
enable_custom_prng = _option("jax_enable_custom_prng")
jax2tf_associative_scan_reductions = _option("jax2tf_associative_scan_reductions")
legacy_prng_key = _option("jax_legacy_prng_key")
no_execution = _option("jax_no_execution")
no_tracing = _option("jax_no_tracing")
numpy_dtype_promotion = _option("jax_numpy_dtype_promotion")
numpy_rank_promotion = _option("jax_numpy_rank_promotion")
remove_size_one_mesh_axis_from_type = _option("jax_remove_size_one_mesh_axis_from_type")
softmax_custom_jvp = _option("jax_softmax_custom_jvp")
thread_guard = _option("jax_thread_guard")
transfer_guard_device_to_device = _option("jax_transfer_guard_device_to_device")
transfer_guard_device_to_host = _option("jax_transfer_guard_device_to_host")
transfer_guard_host_to_device = _option("jax_transfer_guard_host_to_device")

__all__ = [
    "allow_f16_reductions",
    "array_garbage_collection_guard",
    "auto_pcast",
    "check_tracer_leaks",
    "checking_leaks",
    "debug_key_reuse",
    "default_device",
    "default_matmul_precision",
    "enable_custom_prng",
    "jax2tf_associative_scan_reductions",
    "legacy_prng_key",
    "no_execution",
    "no_tracing",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "remove_size_one_mesh_axis_from_type",
    "softmax_custom_jvp",
    "thread_guard",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]
