"""The runtime bridge (see `_bridge`): executables, from compile options to their results.

Compile options, compiling StableHLO (and the LAPACK kernels some programs call), executing
with result handlers, serializing and loading executables and their options, and what an
executable reports of itself (placements, signature, costs, text) or keys it in the cache.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

import jaxlib._hlo as _hlo  # [private] HloPrintOptions (JAX's `jax._src.lib.hlo`)
import jaxlib._jax as _jax  # [private] array_result_handler, JaxRuntimeError
import numpy as np
from jaxlib import xla_client as xc  # [semi] CompileOptions, DeviceList, DeviceAssignment

from lamina_runtime import failures
from lamina_runtime._bridge import JAXLIB_VERSION, DeviceArray
from lamina_runtime._bridge_devices import jax_aval, single_device_sharding


class CompileError(RuntimeError):
    """XLA refused to compile a module (an unknown compiler option, an unsupported op, ...)."""


CompilerOption = str | bool | int | float


def compile_options(num_replicas: int = 1, num_partitions: int = 1,
                    device_ids: Sequence[int] | None = None,
                    overrides: Mapping[str, CompilerOption] | None = None,
                    propagation: tuple[Sequence[bool], Sequence[bool]] | None = None,
                    ) -> Any:  # fmt: skip
    """Compile options; `overrides` are XLA debug options by name (JAX's `compiler_options`),
    e.g. `{"xla_cpu_experimental_ynn_fusion_type": ""}`, checked when compiling.

    `propagation`: for each parameter and each output, whether the partitioner may choose its
    sharding (the caller gave none), as JAX's jit tells XLA."""
    options = xc.CompileOptions()  # [semi]
    if overrides:
        for name, value in overrides.items():
            if not isinstance(value, (str, bool, int, float)):
                raise TypeError(
                    f"compiler_options maps XLA option names to str, bool, int or float "
                    f"values; got {name!r}: {value!r} ({type(value).__name__})"
                )
        options.env_option_overrides = sorted(overrides.items())  # [semi] sorted: a stable key
    options.num_replicas = num_replicas
    options.num_partitions = num_partitions
    build = options.executable_build_options
    build.use_spmd_partitioning = True  # as JAX's jit: a one-device collective needs it too
    build.use_shardy_partitioner = True
    if propagation is not None:
        build.allow_spmd_sharding_propagation_to_parameters = list(propagation[0])
        build.allow_spmd_sharding_propagation_to_output = list(propagation[1])
    if device_ids is not None:
        ids = np.asarray(device_ids, np.int64).reshape(num_replicas, num_partitions)
        options.device_assignment = xc.DeviceAssignment.create(ids)  # [semi]
    return options


@functools.cache
def register_lapack_kernels() -> None:
    """Register jaxlib's LAPACK FFI kernels (`lapack_spotrf_ffi`, ...) for the CPU client
    and load the LAPACK routines they call (SciPy's), once: linalg lowerings call them.
    [private]"""
    from jaxlib import lapack  # [semi] the kernels' registrations
    from jaxlib.cpu import _lapack  # [private] the kernels' module

    for name, target, api_version in lapack.registrations()["cpu"]:
        xc.register_custom_call_target(name, target, "cpu", api_version)  # [semi]
    _lapack.initialize()  # binds the kernels to SciPy's LAPACK routines


def _needs_lapack(code: bytes | str) -> None:
    # Loading SciPy's LAPACK takes about half a second: only programs that call it pay.
    # (`tridiagonal_solve_perturbed_ffi` is one of the LAPACK module's kernels too.)
    if isinstance(code, bytes):
        found = b"lapack_" in code or b"tridiagonal_solve_perturbed_ffi" in code
    else:
        found = "lapack_" in code or "tridiagonal_solve_perturbed_ffi" in code
    if found:
        register_lapack_kernels()


@dataclass(frozen=True, slots=True)
class CompileCall:
    """One XLA compilation the runtime is about to make, as a compile interceptor sees it."""

    code: bytes | str
    """The StableHLO program: bytecode or text."""
    devices: tuple[Any, ...]
    """The devices it is compiled for (one client's)."""
    options: Any
    """jaxlib's CompileOptions."""
    host_callbacks: tuple[Any, ...] = ()
    """The Python functions its host-callback custom calls name by index."""
    module: Any = None
    """The same program as an MLIR module (required with host callbacks)."""

    @property
    def backend(self) -> Any:
        """The PJRT client that compiles it (`.platform`: "cpu", "cuda", "tpu"...). [public]"""
        return self.devices[0].client

    def compile(self) -> Any:
        """Compile now, past any interceptor: the loaded executable."""
        return _compile(self.code, self.devices, self.options, self.host_callbacks, self.module)


class CompileInterceptor(Protocol):
    """Called instead of compiling, with the compilation to make; returns the loaded
    executable, from `call.compile()`, or raises to refuse it."""

    def __call__(self, call: CompileCall, /) -> Any: ...


_interceptor: CompileInterceptor | None = None


def set_compile_interceptor(interceptor: CompileInterceptor | None) -> None:
    """Route every compilation through `interceptor` from now on (None: compile directly).
    Persistent-cache hits and executables loaded from artifacts are not compilations, as in
    JAX. `lamina.as_jax` installs one, so that libraries wrapping JAX's
    `backend_compile_and_load` see Lamina's compilations."""
    global _interceptor
    _interceptor = interceptor


def compile(code: bytes | str, device_list: Sequence[Any], options: Any,
            host_callbacks: Sequence[Any] = (), module: Any = None) -> Any:  # fmt: skip
    """Compile StableHLO (bytecode or text) for `device_list`; `host_callbacks` are the Python
    functions its host-callback custom calls name by index, and `module` the same program as
    an MLIR module (required with them); through the compile interceptor if one is set."""
    interceptor = _interceptor  # unset: one global read per compilation, measured unchanged
    if interceptor is None:
        return _compile(code, device_list, options, host_callbacks, module)
    return interceptor(
        CompileCall(code, tuple(device_list), options, tuple(host_callbacks), module)
    )


def _compile(code: bytes | str, device_list: Sequence[Any], options: Any,
             host_callbacks: Sequence[Any], module: Any) -> Any:  # fmt: skip
    """`compile` itself. [semi]"""
    _needs_lapack(code)
    client = device_list[0].client
    devices = xc.DeviceList(tuple(device_list))
    try:
        if host_callbacks:
            # Only the overload taking a module object accepts callbacks: `module` is one.
            return client.compile_and_load(module, devices, options,
                                           host_callbacks=list(host_callbacks))  # fmt: skip
        return client.compile_and_load(code, devices, options)
    except _jax.JaxRuntimeError as err:  # [private] the error type jaxlib raises
        raise CompileError(str(err)) from err


def result_handler(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool, device: Any,
                   sharding: Any = None) -> Any:  # fmt: skip
    """Wraps one output buffer (the per-device buffers of a `sharding`, a jax sharding) as a
    device array, without a copy. [private]"""
    aval = jax_aval(shape, dtype, weak_type)
    sharding = sharding or single_device_sharding(device)
    return _jax.array_result_handler(aval, sharding, True, _skip_checks=True)


Tiling = tuple[tuple[int, ...], tuple[int, ...], bool] | None
"""An HloSharding as plain data: None if replicated; else the tile dims, the devices (their
positions in the device assignment) in tile order, and whether the last dim only replicates.
Kinds Lamina does not read (maximal, manual) are `((), (), False)`."""


def _tiling(proto: Any) -> Tiling:  # [semi] OpSharding, HloSharding
    hlo = xc.HloSharding.from_proto(proto)
    if hlo.is_replicated():
        return None
    if not hlo.is_tiled() or len(hlo.subgroup_types()) > 1:
        return ((), (), False)
    return (tuple(hlo.tile_assignment_dimensions()), tuple(hlo.tile_assignment_devices()),
            bool(hlo.replicate_on_last_tile_dim()))  # fmt: skip


def tilings(executable: Any) -> tuple[list[Tiling], list[Tiling]]:
    """How XLA placed each parameter and each output of a partitioned executable. [semi]"""
    params = executable.get_parameter_shardings() or ()
    return [_tiling(h) for h in params], [_tiling(h) for h in executable.get_output_shardings()]


def deleted_argument(args: Sequence[Any]) -> RuntimeError | None:
    """JAX's error for a deleted (or donated) array among `args`, if there is one, saying so
    when a failed call consumed it. [private]"""
    for arg in args:
        if type(arg) is DeviceArray and arg.is_deleted():
            cause = failures.consumed_by(arg)
            # A jax aval: its `str_short()` gives JAX's long dtype names, as JAX's message.
            error = RuntimeError(failures.deleted_message(arg.aval.str_short(), cause))
            error.__cause__ = cause
            return error
    return None


def _is_deleted(buf: Any) -> bool:
    return type(buf) is DeviceArray and bool(buf.is_deleted())


def translated(error: Exception, bufs: Sequence[Any]) -> Exception:
    """What to raise for XLA's `error` running a program on `bufs`: the error of a deleted
    argument, if one was deleted before the call; else `error` itself, its `__cause__` the
    exception a host callback raised (if one did), the buffers it consumed marked. [private]"""
    deleted = deleted_input(error, bufs)
    if deleted is not None:
        return deleted
    if _DELETED_BUFFER in str(error):  # XLA checked its inputs: the call did not start
        return error
    cause = failures.raised_by(error)
    consumed = [buf for buf in bufs if _is_deleted(buf)]
    failures.mark_consumed(consumed, cause or error)
    for buf in consumed:
        # A donated buffer still holds its runtime array, which C++ dispatch would hand to
        # XLA ("Buffer has been deleted or donated"); deleted, it holds none, and C++ asks
        # Python, which says what consumed it (at no cost to calls that succeed).
        buf.delete()
    error.__cause__ = cause
    return error


_DELETED_BUFFER: Final = "Buffer has been deleted or donated"
"""XLA's text for an input buffer it cannot use (a `ValueError`, INVALID_ARGUMENT)."""
_NO_SHARDS: Final = re.compile(r"shards, got: \[[\d, ]*\b0\b")
"""jaxlib's text for a deleted input (no shards left) among the inputs of a call."""


def deleted_input(error: Exception, leaves: Sequence[Any]) -> RuntimeError | None:
    """The error of a deleted array among `leaves` (device arrays, or anything) if XLA's
    `error` says an input was deleted before the call; None otherwise. [private]"""
    message = str(error)
    if _DELETED_BUFFER in message or _NO_SHARDS.search(message):
        return deleted_argument(leaves)
    return None


def executor(executable: Any, handlers: Sequence[Any]) -> Any:
    """`run(buffers) -> outputs` for `executable`: `execute` with its arguments bound (hot path)."""
    execute_sharded = executable.execute_sharded  # [semi]
    handler_list = list(handlers)

    def run(bufs: list[Any]) -> list[Any]:
        try:
            results: list[Any] = execute_sharded(bufs).consume_with_handlers(handler_list)
        except (_jax.JaxRuntimeError, ValueError) as err:  # [private] as in `execute`
            error = translated(err, bufs)
            if error is err:
                raise
            raise error from error.__cause__
        if not next(_executions) % DRAIN_EVERY:
            _jax.collect_garbage()  # [private] see DRAIN_EVERY
        return results

    return run


DRAIN_EVERY: Final = 1024
"""Executions between drains of jaxlib's deferred releases. jaxlib lets go of some Python
references of each execution later, from a queue it empties when Python's garbage collector
runs; Lamina's eager, `vmap` and `scan` calls allocate so little that the collector may not run
for 100,000 calls, and the queue grew the process by ~130 bytes per call (found by
packages/lamina/tests/test_long_runs.py)."""
_executions: Final = itertools.count(1)


def execute(executable: Any, args: list[Any], handlers: Sequence[Any]) -> list[Any]:
    """Run `executable`; `args` must already be device arrays with its input shardings. [semi]"""
    results: list[Any] = executor(executable, handlers)(args)
    return results


def serialize_compile_options(options: Any) -> bytes:
    blob: bytes = options.SerializeAsString()  # [semi] CompileOptions protobuf
    return blob


class ReadOptions(NamedTuple):
    shape: tuple[int, int, int, int]
    """Replicas and partitions, of the options and of their build options."""
    assigned: bool
    overrides: list[Any]
    tupled: bool


def read_compile_options(blob: bytes) -> ReadOptions:
    """What serialized compile options hold (checked by the caller before XLA sees them).

    Raises:
        ValueError: the blob is not readable as compile options.
    """
    try:
        parsed = xc.CompileOptions.ParseFromString(bytes(blob))  # [semi]
        build = parsed.executable_build_options
        shape = (parsed.num_replicas, parsed.num_partitions, build.num_replicas,
                 build.num_partitions)  # fmt: skip
        assigned = parsed.device_assignment is not None or build.device_assignment is not None
        return ReadOptions(shape, assigned, list(parsed.env_option_overrides),
                           bool(parsed.parameter_is_tupled_arguments))  # fmt: skip
    except Exception as err:  # protobuf's and nanobind's error types are not public
        raise ValueError(f"unreadable compile options ({err})") from None


def serialize_executable(executable: Any) -> bytes:
    blob: bytes = executable.serialize()  # [semi]
    return blob


def deserialize_executable(blob: bytes, device_list: Sequence[Any], options: Any) -> Any:
    _needs_lapack(blob)
    client = device_list[0].client  # [semi]
    return client.deserialize_executable(blob, xc.DeviceList(tuple(device_list)), options)


ShapeSignature = tuple[tuple[tuple[int, ...], str], ...]
"""(dimensions, NumPy dtype name) of each parameter or result."""


def _shape_entry(shape: Any) -> tuple[tuple[int, ...], str]:
    if not shape.is_array():
        return ((), f"non-array {shape}")
    try:
        dtype = np.dtype(shape.numpy_dtype()).name
    except Exception:  # an element type NumPy cannot name: compare XLA's name
        dtype = f"xla:{shape.element_type()}"
    return tuple(int(d) for d in shape.dimensions()), dtype


def executable_signature(executable: Any) -> tuple[ShapeSignature, ShapeSignature]:
    """The parameter and result types a loaded executable reports (its entry computation's
    program shape, read from its HLO module), as (dimensions, dtype name) pairs; one result
    that is not a tuple is the only result."""
    (module, *_) = executable.hlo_modules()  # [semi]
    proto = module.as_serialized_hlo_module_proto()  # [semi]
    program = xc.XlaComputation(proto).program_shape()  # [semi]
    params = tuple(_shape_entry(s) for s in program.parameter_shapes())
    result = program.result_shape()
    results = result.tuple_shapes() if result.is_tuple() else [result]
    return params, tuple(_shape_entry(s) for s in results)


def cost_analysis(executable: Any) -> dict[str, float]:
    analysis: dict[str, float] = dict(executable.cost_analysis())  # [semi]
    return analysis


def memory_analysis(executable: Any) -> Any:
    return executable.get_compiled_memory_stats()  # [semi]


def compiled_text(executable: Any) -> str:
    """The compiled HLO, as JAX's `Compiled.as_text` gives it."""
    text: str = executable.get_hlo_text()  # [semi]
    return text


def runtime_executable(executable: Any) -> Any:
    """The loaded executable itself (JAX's `Compiled.runtime_executable()`)."""
    return executable


Layouts = list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int]]
"""Per parameter or result: major-to-minor axis order, tiling, sub-byte element bits."""


def _layouts(pjrt_layouts: Sequence[Any]) -> Layouts:
    out = []
    for pjrt in pjrt_layouts:
        xla = pjrt._xla_layout()  # [private] PjRtLayout's XLA layout, as JAX reads it
        m2m = tuple(int(d) for d in xla.minor_to_major()[::-1])
        tiling = tuple(tuple(int(d) for d in t) for t in xla.tiling())
        out.append((m2m, tiling, int(xla.element_size_in_bits())))
    return out


def executable_layouts(executable: Any) -> tuple[Layouts, Layouts]:
    """The layouts XLA chose for an executable's parameters and results."""
    params = executable.get_parameter_layouts()  # [semi]
    results = executable.get_output_layouts()  # [semi]
    return _layouts(params), _layouts(results)


def hlo_computation(module_bytecode: bytes) -> Any:
    """The XLA computation of a StableHLO module (JAX's `Lowered.compiler_ir("hlo")`)."""
    return _jax.mlir.mlir_module_to_xla_computation(
        module_bytecode, use_tuple_args=False
    )  # [private]


def hlo_text(computation: Any, *, debug_info: bool) -> str:
    """An XLA computation's HLO text as JAX's `Lowered.as_text("hlo")` prints it."""
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    text: str = computation.as_hlo_module().to_string(options)  # [semi]
    return text


def hlo_cost_analysis(computation: Any, device: Any) -> dict[str, float]:
    """XLA's cost estimate of an XLA computation before optimization, on `device`'s client
    (JAX's `Lowered.cost_analysis()`)."""
    client = device.client  # [semi]
    analysis: dict[str, float] = _jax.hlo_module_cost_analysis(
        client, computation.as_hlo_module()
    )  # [private]
    return analysis


_FLAG_EXCLUDE: Final = ("--xla_dump", "--xla_force_host_platform_device_count")
"""XLA flags that do not change the compiled code (dumps) or that the device count already
keys (forced host devices), as in JAX's `xla_flags_to_exclude_from_cache_key`."""


def xla_flags() -> tuple[str, ...]:
    """The `XLA_FLAGS` that decide compiled code, sorted (their order does not matter)."""
    flags = os.environ.get("XLA_FLAGS", "").split()
    return tuple(sorted(f for f in flags if not f.startswith(_FLAG_EXCLUDE)))


def compilation_environment(device_list: Sequence[Any], options: Any) -> list[tuple[str, bytes]]:
    """What, besides the module, decides the compiled executable: named cache-key components.

    The device *kind* and count are keyed, not device ids: an executable for one CPU device
    loads on any process's first CPU device.
    """
    client = device_list[0].client  # [semi]
    kinds = sorted({d.device_kind for d in device_list})  # [semi] Device.device_kind
    return [
        ("compile options", serialize_compile_options(options)),
        ("jaxlib version", JAXLIB_VERSION.encode()),
        ("platform", f"{client.platform} {client.platform_version}".encode()),
        ("device kind", ",".join(kinds).encode()),
        ("device count", str(len(device_list)).encode()),
        ("xla flags", " ".join(xla_flags()).encode()),
    ]


def platform_description(device: Any) -> dict[str, str]:
    """The facts an executable's portability depends on (for saved artifacts)."""
    client = device.client  # [semi]
    return {
        "jaxlib": JAXLIB_VERSION,
        "platform": str(client.platform),
        "platform_version": str(client.platform_version),
        "device_kind": str(device.device_kind),
    }
