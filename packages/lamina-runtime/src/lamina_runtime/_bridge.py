"""The runtime bridge: the one Lamina module that touches jax/jaxlib runtime APIs.

Everything else in Lamina calls this module for devices, compilation, transfers, execution
and serialization. Nothing here traces, transforms or lowers: the PJRT client runs modules
that lamina-mlir built. Each jax/jaxlib API used is rated where it is imported:

  [public]   documented JAX API
  [semi]     jaxlib module-level API that JAX itself uses, renamed at times (pin jaxlib)
  [private]  underscore names or jaxlib._jax internals (pin jaxlib; the self-test checks them)

Pitfalls handled here (measured in shared/reference/runtime-bridge.md): NumPy inputs are
copied, never aliased; x64 is passed explicitly to transfers (else jax's own flag decides);
callers check inputs against an executable's shardings before every execution (a mismatch on a
multi-device executable crashes the process instead of raising).
"""

from __future__ import annotations

import functools
import importlib.metadata
import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple

import jax  # [public] devices, jax.Array, device_put, shardings
import jax.sharding  # [public] SingleDeviceSharding, NamedSharding
import jaxlib._jax as _jax  # [private] ArrayImpl, batched_device_put, array_result_handler
import numpy as np
from jax.core import ShapedArray as JaxShapedArray  # [public] the aval type jaxlib's handlers use
from jaxlib import xla_client as xc  # [semi] CompileOptions, DeviceList, DeviceAssignment

from lamina_core import dtypes

EXPECTED_JAXLIB: Final = "0.10.2"
JAXLIB_VERSION: Final = importlib.metadata.version("jaxlib")  # [public] package metadata

DeviceArray = _jax.ArrayImpl  # [private] the concrete class of every jax.Array
JaxRuntimeError = _jax.JaxRuntimeError  # [private] what a failed XLA execution raises
Device = xc.Device  # [semi]
LoadedExecutable = xc.LoadedExecutable  # [semi]
Sharding = jax.sharding.Sharding  # [public]

_COPY_SEMANTICS: Final = _jax.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL  # [private]
_IN_PLACE_SEMANTICS: Final = _jax.HostBufferSemantics.ZERO_COPY  # [private]
_HOST_ALIGNMENT: Final = 64
"""Bytes: the CPU client uses host memory aligned this much in place under ZERO_COPY (less
aligned memory it copies)."""


class BridgeError(RuntimeError):
    """jaxlib is not the version Lamina was built and tested against."""


class CompileError(RuntimeError):
    """XLA refused to compile a module (an unknown compiler option, an unsupported op, ...)."""


def self_test() -> None:
    """Fail loudly, at import, if jaxlib lacks what Lamina calls."""
    if JAXLIB_VERSION != EXPECTED_JAXLIB:
        raise BridgeError(
            f"lamina-runtime needs jaxlib {EXPECTED_JAXLIB}, found {JAXLIB_VERSION}; "
            f"install the pinned version (pip install jaxlib=={EXPECTED_JAXLIB})"
        )
    needed = {
        _jax: (
            "ArrayImpl",
            "batched_device_put",
            "array_result_handler",
            "HostBufferSemantics",
            "pjit",
            "PjitFunctionCache",
            "pytree",
            "config",
        ),
        xc: ("CompileOptions", "DeviceList", "DeviceAssignment"),
        DeviceArray: ("_replace_with", "unsafe_buffer_pointer", "is_deleted"),
        _jax.pytree.PyTreeRegistry: ("register_dataclass_node", "register_node", "flatten"),
        _jax.config.Config: ("set_global", "swap_local"),
    }
    for owner, names in needed.items():
        missing = [n for n in names if not hasattr(owner, n)]
        if missing:
            raise BridgeError(f"jaxlib {JAXLIB_VERSION} lacks {missing} on {owner!r}")


self_test()


# ---- devices ------------------------------------------------------------------------------


def devices(backend: str | None = None) -> list[Any]:
    """The devices of `backend` (default: JAX's default backend). [public]"""
    return list(jax.devices(backend))


def set_num_cpu_devices(count: int) -> None:
    """How many CPU devices the backend makes when it starts (`jax_num_cpu_devices`); JAX
    raises its own RuntimeError once the backend has started with another count. [public]"""
    jax.config.update("jax_num_cpu_devices", count)  # type: ignore[no-untyped-call]


def local_devices(backend: str | None = None) -> list[Any]:
    return list(jax.local_devices(backend=backend))  # [public]


@functools.cache
def default_device() -> Any:
    return jax.local_devices()[0]  # [public] this process's first (all of them, alone)


@functools.cache
def single_device_sharding(device: Any) -> Any:
    return jax.sharding.SingleDeviceSharding(device)  # [public]


# ---- avals --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)
def jax_aval(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool) -> Any:
    """jax's aval for a shape and dtype: interned, since jaxlib compares them often. An
    extended dtype's (keys') is its physical array's: that is what the device holds."""
    ext = dtypes.extended(dtype)
    if ext is not None:
        return jax_aval((*shape, *ext.physical_shape), ext.physical_dtype, False)
    return JaxShapedArray(shape, dtype, weak_type)


# ---- transfers ----------------------------------------------------------------------------


def device_put(value: Any, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool,
               device: Any | None = None) -> Any:  # fmt: skip
    """A host value (NumPy array or scalar, Python scalar) as a device array; always a copy.

    The value is converted to `dtype` on the host first, so jaxlib never narrows it on its own
    (x64 is then always "on" for the transfer: the dtype is already Lamina's decision).
    """
    device = device or default_device()
    ext = dtypes.extended(dtype)
    if ext is not None:  # host key arrays are structured arrays over their physical data
        host = np.ascontiguousarray(value, dtype=dtype).view(ext.physical_dtype)
        shape, dtype = (*shape, *ext.physical_shape), ext.physical_dtype
        host = host.reshape(shape)
    else:
        host = np.asarray(value, dtype=dtype)
    aval = jax_aval(shape, dtype, weak_type)
    return _jax.batched_device_put(  # [private]
        aval, single_device_sharding(device), [host], [device], True, False, _COPY_SEMANTICS, True
    )


def to_device(array: Any, device: Any) -> Any:
    """`array` (a device array) on `device`: the same object if already there. [public]"""
    return jax.device_put(array, device)


def is_device_array(x: Any) -> bool:
    return type(x) is DeviceArray


def reshard(array: Any, sharding: Any) -> Any:
    """Move `array` to `sharding`, for inputs that arrive somewhere else. [public]"""
    return jax.device_put(array, sharding)


# ---- compilation and execution --------------------------------------------------------------


CompilerOption = str | bool | int | float


def compile_options(num_replicas: int = 1, num_partitions: int = 1,
                    device_ids: Sequence[int] | None = None,
                    overrides: Mapping[str, CompilerOption] | None = None) -> Any:  # fmt: skip
    """Compile options; `overrides` are XLA debug options by name (JAX's `compiler_options`),
    e.g. `{"xla_cpu_experimental_ynn_fusion_type": ""}`, checked when compiling."""
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


def compile(code: bytes | str, device_list: Sequence[Any], options: Any,
            host_callbacks: Sequence[Any] = (), module: Any = None) -> Any:  # fmt: skip
    """Compile StableHLO (bytecode or text) for `device_list`; `host_callbacks` are the Python
    functions its host-callback custom calls name by index, and `module` the same program as
    an MLIR module (required with them). [semi]"""
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


# ---- meshes and shardings: Lamina's (lamina_core.ir._mesh) to and from jax's public types ------


@functools.lru_cache(maxsize=256)
def named_sharding(devices: tuple[Any, ...], mesh_shape: tuple[int, ...],
                   axis_names: tuple[Any, ...], partitions: tuple[Any, ...],
                   axis_types: tuple[str, ...]) -> Any:  # fmt: skip
    """jax's NamedSharding of the mesh of `devices` (in mesh order) split as `partitions`, its
    axes of the types named (`"Auto"`, `"Explicit"`, `"Manual"`)."""
    types = tuple(getattr(jax.sharding.AxisType, t) for t in axis_types)  # [public]
    grid = np.array(devices, dtype=object).reshape(mesh_shape)
    mesh = jax.sharding.Mesh(grid, axis_names, axis_types=types)
    spec = jax.sharding.PartitionSpec(*partitions)  # type: ignore[no-untyped-call]  # [public]
    return jax.sharding.NamedSharding(mesh, spec)


ShardingParts = tuple[
    tuple[Any, ...], tuple[int, ...], tuple[Any, ...], tuple[Any, ...], tuple[str, ...]
]
"""A jax sharding as plain data: (devices in mesh order, mesh shape, axis names, spec entries,
axis type names); a single device's has mesh shape `()`."""


def sharding_parts(sharding: Any) -> ShardingParts:
    """What a jax sharding (of an array jaxlib or JAX made) is, as plain data. [public]"""
    if isinstance(sharding, jax.sharding.NamedSharding):
        mesh = sharding.mesh
        return (tuple(mesh.devices.flat), tuple(mesh.devices.shape), tuple(mesh.axis_names),
                tuple(sharding.spec), tuple(t.name for t in mesh.axis_types))  # fmt: skip
    if isinstance(sharding, jax.sharding.SingleDeviceSharding):
        return (tuple(sharding.device_set), (), (), (), ())
    raise TypeError(f"Lamina cannot describe the sharding {sharding!r}")


def is_single_device(array: Any) -> bool:
    return type(array.sharding) is jax.sharding.SingleDeviceSharding  # [public]


def shards(array: Any) -> list[tuple[Any, tuple[slice, ...], Any]]:
    """(device, index, single-device array) of each addressable shard of `array`. [public]"""
    return [(s.device, s.index, s.data) for s in array.addressable_shards]


def _private_copy(piece: np.ndarray) -> np.ndarray:
    """A C-ordered copy of `piece` that nothing else references, aligned for the CPU client to
    use it in place."""
    if piece.nbytes == 0:
        return np.array(piece, order="C")
    raw = np.empty(piece.nbytes + _HOST_ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % _HOST_ALIGNMENT
    copy = raw[start : start + piece.nbytes].view(piece.dtype).reshape(piece.shape)
    np.copyto(copy, piece)
    return copy


def device_put_sharded(value: Any, shape: tuple[int, ...], dtype: np.dtype, weak_type: bool,
                       sharding: Any) -> Any:  # fmt: skip
    """A host value as a device array placed as `sharding` (a jax sharding), converted to
    `dtype` first; each process puts its own pieces of the same value. [private]

    Each distinct piece is copied once, to host memory of Lamina's own that every device
    holding that piece uses in place (the CPU client's ZERO_COPY; other clients copy it), so
    the devices of a replicated array share one buffer, as they share the caller's NumPy array
    under `jax.device_put`: a copy per device made an 8-device step reading replicated
    parameters ~6% slower. The caller's array is never aliased. XLA never writes such a buffer:
    donating it makes a new one (measured, jaxlib 0.10.2).
    """
    host = np.asarray(value, dtype=dtype)
    index_map = sharding.addressable_devices_indices_map(shape)  # [public]
    copies: dict[tuple[Any, ...], np.ndarray] = {}
    pieces = []
    for index in index_map.values():
        key = tuple((i.start, i.stop, i.step) if isinstance(i, slice) else i for i in index)
        piece = copies.get(key)
        if piece is None:
            piece = copies[key] = _private_copy(host[index])
        pieces.append(piece)
    aval = jax_aval(shape, dtype, weak_type)
    return _jax.batched_device_put(
        aval, sharding, pieces, list(index_map), True, False, _IN_PLACE_SEMANTICS, True
    )


def is_equivalent(current: Any, target: Any, ndim: int) -> bool:
    """Whether an array placed as `current` may be passed where `target` is expected."""
    return current is target or current == target or current.is_equivalent_to(target, ndim)


def assemble(shape: tuple[int, ...], sharding: Any, arrays: Sequence[Any]) -> Any:
    """One global array of single-device `arrays`, one per device of `sharding`. [public]"""
    return jax.make_array_from_single_device_arrays(shape, sharding, list(arrays))


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


def _deleted_argument(args: Sequence[Any]) -> RuntimeError | None:
    """JAX's error for a deleted (or donated) array among `args`, if there is one. [private]"""
    for arg in args:
        if type(arg) is DeviceArray and arg.is_deleted():
            return RuntimeError(f"Array has been deleted with shape={arg.aval.str_short()}.")
    return None


def executor(executable: Any, handlers: Sequence[Any]) -> Any:
    """`run(buffers) -> outputs` for `executable`: `execute` with its arguments bound (hot path)."""
    execute_sharded = executable.execute_sharded  # [semi]
    handler_list = list(handlers)

    def run(bufs: list[Any]) -> list[Any]:
        try:
            results: list[Any] = execute_sharded(bufs).consume_with_handlers(handler_list)
        except _jax.JaxRuntimeError:  # [private] as in `execute`
            deleted = _deleted_argument(bufs)
            if deleted is not None:
                raise deleted from None
            raise
        return results

    return run


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
    modules = executable.hlo_modules()  # [semi]
    return "\n".join(m.to_string() for m in modules)


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


# ---- jit dispatch in C++ --------------------------------------------------------------------
#
# jaxlib's `PjitFunction` [private] is a C++ jit dispatcher: it flattens the arguments, looks
# their signature up in its cache and, on a hit, transfers host values, runs the executable and
# builds the outputs without running Python. On a miss it calls `cache_miss`, which returns the
# outputs and, when C++ may repeat the call, a `FastPath` (read field by field in pjit.cc,
# stable from jaxlib 0.8 to 0.10). Entries are keyed on the argument signature (jaxlib's rules
# for weak types and x64, which are Lamina's), the static arguments, and every jaxlib `Config`
# in the jit key: `DISPATCH_CONTEXT` is Lamina's, rewritten by core whenever its options or
# trace change (lamina_core.config._dispatch_context).

DISPATCH_CONTEXT: Final = _jax.config.Config(  # [private]
    "lamina_dispatch_context", 0, include_in_jit_key=True
)
DISPATCH_REGISTRY: Final = _jax.pytree.PyTreeRegistry()  # [private] None/tuple/list/dict/namedtuple
_DISPATCH_CACHE: Final = _jax.PjitFunctionCache(8192)  # [private] entries of all Lamina jits
_RESULT_LEAF: Final = object()
RESULT_LEAF: Final = _RESULT_LEAF
"""A leaf of an output tree for C++ that is an output as C++ made it (a device array), for a
node to wrap itself; `ResultSlot` wraps it as an array."""
_dispatcher_serials: Final = itertools.count()


class FastPath(NamedTuple):
    """What C++ needs to repeat a call: read attribute by attribute in pjit.cc."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Sequence[Any]
    out_shardings: Sequence[Any]
    out_avals: Sequence[Any]
    out_committed: Sequence[bool]
    kept_var_bitvec: Sequence[bool]
    in_device_local_layouts: Sequence[None]
    const_args: Sequence[Any]


class ResultSlot:
    """Stands for one output while its tree is built; C++ makes the output array in its place."""

    __slots__ = ("aval",)

    def __init__(self, aval: Any) -> None:
        self.aval = aval


def register_array_type(
    cls: type, field: str, from_result: Callable[[Any, tuple[Any]], Any]
) -> None:
    """Let C++ dispatch see through `cls` (an array wrapper holding a device array in `field`);
    C++ makes each output with `from_result(aval, (device_array,))`."""
    DISPATCH_REGISTRY.register_dataclass_node(cls, [field], [])  # attribute read in C++
    DISPATCH_REGISTRY.register_node(
        ResultSlot, lambda slot: ((_RESULT_LEAF,), slot.aval), from_result
    )


def register_holder_type(cls: type, field: str, key: str) -> None:
    """Let C++ dispatch see through `cls` (a holder of an array wrapper in `field`), its
    `key` attribute part of the call's signature; both read in C++, no Python call."""
    DISPATCH_REGISTRY.register_dataclass_node(cls, [field], [key])


def register_node_type(
    nodetype: type, flatten: Callable[[Any], tuple[Any, Any]], unflatten: Callable[[Any, Any], Any]
) -> None:
    """Mirror one of Lamina's pytree node types, so C++ dispatch flattens it the same way."""
    DISPATCH_REGISTRY.register_node(nodetype, flatten, unflatten)


def dispatch_leaves(tree: Any) -> list[Any]:
    """The leaves of `tree` as C++ dispatch sees them (array wrappers opened)."""
    leaves: list[Any] = DISPATCH_REGISTRY.flatten(tree)[0]
    return leaves


def result_tree(structure: Any) -> Any | None:
    """The output tree for C++ of a structure whose leaves are `ResultSlot`s; None if C++
    cannot rebuild it (it holds a node type only Lamina's tree registry knows)."""
    leaves, treedef = DISPATCH_REGISTRY.flatten(structure)
    return treedef if all(leaf is _RESULT_LEAF for leaf in leaves) else None


def fast_path(
    executable: Any,
    device: Any,
    out_tree: Any,
    out_avals: Sequence[tuple[tuple[int, ...], np.dtype, bool]],
    kept: Sequence[bool],
    const_bufs: Sequence[Any],
    shardings: tuple[Sequence[Any], Sequence[Any]] | None = None,
) -> FastPath:
    """The `FastPath` of an executable whose inputs are the kept flat arguments: on `device`,
    or placed as `shardings` (jax shardings of the inputs, const args first, and outputs)."""
    sharding = single_device_sharding(device)
    n_in = sum(kept)
    ins, outs = shardings or ([sharding] * n_in, [sharding] * len(out_avals))
    return FastPath(
        executable,
        out_tree,
        list(ins),
        list(outs),
        [jax_aval(*a) for a in out_avals],
        [True] * len(out_avals),
        list(kept),
        [None] * n_in,
        list(const_bufs),
    )


def _place_fallback(value: Any, sharding: Any, layout: Any) -> Any:
    """C++ asks for this when an argument is not where the executable wants it."""
    if type(value) is DeviceArray:
        return reshard(value, sharding)
    return jax.device_put(value, sharding)  # [public] host values on multi-device programs


def dispatcher(
    name: str,
    fun: Callable[..., Any],
    cache_miss: Callable[..., tuple[Any, FastPath | None, bool]],
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> Any:
    """A C++ jit dispatcher calling `cache_miss` when it has no entry for a call.

    `fun` runs instead when JAX's `disable_jit` is on; its entries are dropped when it dies.
    """
    return _jax.pjit(  # [private]
        name,
        fun,
        cache_miss,
        list(static_argnums),
        list(static_argnames),
        ("lamina", next(_dispatcher_serials)),  # entries of one dispatcher are its own
        DISPATCH_REGISTRY,
        _place_fallback,
        _DISPATCH_CACHE,
    )


def jax_x64_enabled() -> bool:
    """JAX's own x64 flag: C++ dispatch converts host inputs by it."""
    return bool(jax.config.read("jax_enable_x64"))  # type: ignore[no-untyped-call]  # [public]
