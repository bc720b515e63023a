"""lamina-runtime: the pipeline from traced function to XLA executable, and running it.

Importing it installs XLA execution as the eager evaluator (core's NumPy reference is the
fallback when the runtime is not installed).
"""

from lamina_core.ir import install_process_index as _install_process_index
from lamina_core.ir import register_internal_path
from lamina_core.sharding import install_mesh_devices as _install_mesh_devices
from lamina_core.trace import install_eager_impl as _install_eager_impl
from lamina_core.trace import install_materializer as _install_materializer
from lamina_core.trace import install_toplevel_dispatch as _install_toplevel_dispatch
from lamina_core.transforms import install_toplevel_jit as _install_toplevel_jit
from lamina_runtime import _bridge_devices, aot
from lamina_runtime import environment as _environment

# Last: it defines every option of `jax.config` that the modules above did not.
from lamina_runtime import jax_options as jax_options
from lamina_runtime._bridge import (
    JaxRuntimeError as JaxRuntimeError,
)
from lamina_runtime._bridge import (
    is_runtime_module as is_runtime_module,
)
from lamina_runtime._bridge_devices import (
    set_real_jax_view as set_real_jax_view,
)
from lamina_runtime._bridge_devices import (
    started_backends as started_backends,
)
from lamina_runtime._bridge_executables import (
    CompileCall as CompileCall,
)
from lamina_runtime._bridge_executables import CompileError
from lamina_runtime._bridge_executables import (
    CompileInterceptor as CompileInterceptor,
)
from lamina_runtime._bridge_executables import (
    set_compile_interceptor as set_compile_interceptor,
)
from lamina_runtime._jit import (
    JitFunction,
    clear_caches,
    explain_cache_misses,
    jit,
    jit_function_of,
    toplevel_dispatcher,
    toplevel_jit,
)
from lamina_runtime._lru import (
    register_backend_cache as register_backend_cache,
)
from lamina_runtime._pmap import (
    pmap as pmap,
)
from lamina_runtime._version import __version__
from lamina_runtime.aot import (
    ArtifactError as ArtifactError,
)
from lamina_runtime.aot import (
    ArtifactInfo as ArtifactInfo,
)
from lamina_runtime.aot import (
    IncompatibleArtifactError as IncompatibleArtifactError,
)
from lamina_runtime.aot import (
    TreeCodecError as TreeCodecError,
)
from lamina_runtime.aot import (
    describe as describe,
)
from lamina_runtime.aot import (
    deserialize as deserialize,
)
from lamina_runtime.aot import (
    load as load,
)
from lamina_runtime.aot import (
    save as save,
)
from lamina_runtime.aot import (
    serialize as serialize,
)
from lamina_runtime.api import (
    block_until_ready,
    device_get,
    device_put,
    devices,
    live_arrays,
    local_devices,
    make_array_from_callback,
    make_array_from_single_device_arrays,
)
from lamina_runtime.array import Array
from lamina_runtime.array import Shard as Shard
from lamina_runtime.backend_api import (
    backend_xla_version as backend_xla_version,
)
from lamina_runtime.backend_api import (
    backends as backends,
)
from lamina_runtime.backend_api import (
    clear_backends as clear_backends,
)
from lamina_runtime.backend_api import (
    clear_in_memory_compilation_cache as clear_in_memory_compilation_cache,
)
from lamina_runtime.backend_api import (
    get_backend as get_backend,
)
from lamina_runtime.backend_api import (
    get_compile_options as get_compile_options,
)
from lamina_runtime.backend_api import (
    get_default_device as get_default_device,
)
from lamina_runtime.backend_api import (
    ifrt_proxy as ifrt_proxy,
)
from lamina_runtime.backend_api import (
    register_backend_factory as register_backend_factory,
)
from lamina_runtime.cache_key import CacheKey, compilation_key
from lamina_runtime.compilation_cache import (
    CacheInfo,
    CompilationCache,
    configured_cache_dir,
    default_cache_dir,
)
from lamina_runtime.distributed import (
    initialize as initialize,
)
from lamina_runtime.distributed import (
    is_initialized as is_initialized,
)
from lamina_runtime.distributed import (
    shutdown as shutdown,
)
from lamina_runtime.eager import XLA_EAGER, materialize
from lamina_runtime.environment import (
    Device as Device,
)
from lamina_runtime.environment import (
    copy_to_host_async as copy_to_host_async,
)
from lamina_runtime.environment import (
    default_backend as default_backend,
)
from lamina_runtime.environment import (
    device_count as device_count,
)
from lamina_runtime.environment import (
    effects_barrier as effects_barrier,
)
from lamina_runtime.environment import (
    host_count as host_count,
)
from lamina_runtime.environment import (
    host_id as host_id,
)
from lamina_runtime.environment import (
    host_ids as host_ids,
)
from lamina_runtime.environment import (
    local_device_count as local_device_count,
)
from lamina_runtime.environment import (
    print_environment_info as print_environment_info,
)
from lamina_runtime.environment import (
    process_count as process_count,
)
from lamina_runtime.environment import (
    process_index as process_index,
)
from lamina_runtime.environment import (
    process_indices as process_indices,
)
from lamina_runtime.executable import Executable, Runtime, runtime
from lamina_runtime.guards import (
    transfer_guard as transfer_guard,
)
from lamina_runtime.mesh_api import (
    make_mesh as make_mesh,
)
from lamina_runtime.process_local import make_array_from_process_local_data
from lamina_runtime.reshard_api import (
    reshard as reshard,
)
from lamina_runtime.sharding import (
    Sharding as Sharding,
)
from lamina_runtime.sharding import SingleDeviceSharding
from lamina_runtime.sharding_display import (
    inspect_array_sharding as inspect_array_sharding,
)
from lamina_runtime.sharding_display import (
    visualize_array_sharding as visualize_array_sharding,
)
from lamina_runtime.sharding_display import (
    visualize_sharding as visualize_sharding,
)
from lamina_runtime.stages import ArgInfo, Compiled, Lowered, Traced

register_internal_path(__file__)
_install_eager_impl(XLA_EAGER)
_install_materializer(materialize)
_install_toplevel_dispatch(toplevel_dispatcher)
_install_toplevel_jit(toplevel_jit)
_install_process_index(_environment.process_index)
_install_mesh_devices(_bridge_devices.devices)  # printed device meshes read back over these

__all__ = [
    "ArgInfo",
    "Array",
    "CacheInfo",
    "CacheKey",
    "CompilationCache",
    "CompileError",
    "Compiled",
    "Executable",
    "JitFunction",
    "Lowered",
    "Runtime",
    "SingleDeviceSharding",
    "Traced",
    "__version__",
    "aot",
    "block_until_ready",
    "clear_caches",
    "compilation_key",
    "configured_cache_dir",
    "default_cache_dir",
    "device_get",
    "device_put",
    "devices",
    "explain_cache_misses",
    "jit",
    "jit_function_of",
    "live_arrays",
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "runtime",
]
