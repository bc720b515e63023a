"""lamina-runtime: the pipeline from traced function to XLA executable, and running it.

Importing it installs XLA execution as the eager evaluator (core's NumPy reference is the
fallback when the runtime is not installed).
"""

from lamina_core.ir import _source_info
from lamina_core.ir._mesh import install_process_index as _install_process_index
from lamina_core.trace._tracing import install_eager_impl as _install_eager_impl
from lamina_core.trace._tracing import install_materializer as _install_materializer
from lamina_core.trace._tracing import install_toplevel_dispatch as _install_toplevel_dispatch
from lamina_core.transforms._jit import install_toplevel_jit as _install_toplevel_jit
from lamina_runtime import aot
from lamina_runtime import environment as _environment
from lamina_runtime._bridge_executables import CompileError
from lamina_runtime._version import __version__
from lamina_runtime.api import (
    block_until_ready,
    device_get,
    device_put,
    devices,
    local_devices,
    make_array_from_callback,
    make_array_from_single_device_arrays,
)
from lamina_runtime.array import Array
from lamina_runtime.cache_key import CacheKey, compilation_key
from lamina_runtime.compilation_cache import (
    CacheInfo,
    CompilationCache,
    configured_cache_dir,
    default_cache_dir,
)
from lamina_runtime.eager import XLA_EAGER, materialize
from lamina_runtime.executable import Executable, Runtime, runtime
from lamina_runtime.jit import (
    JitFunction,
    clear_caches,
    explain_cache_misses,
    jit,
    jit_function_of,
    toplevel_dispatcher,
    toplevel_jit,
)
from lamina_runtime.process_local import make_array_from_process_local_data
from lamina_runtime.sharding import SingleDeviceSharding
from lamina_runtime.stages import ArgInfo, Compiled, Lowered, Traced

_source_info.register_internal_path(__file__)
_install_eager_impl(XLA_EAGER)
_install_materializer(materialize)
_install_toplevel_dispatch(toplevel_dispatcher)
_install_toplevel_jit(toplevel_jit)
_install_process_index(_environment.process_index)

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
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "runtime",
]
