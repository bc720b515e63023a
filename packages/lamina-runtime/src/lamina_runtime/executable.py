"""Compiled programs: from a lowered module to something that runs on a device.

`Executable` is one compiled module with a fixed flat signature: const args first, then the
real arguments. The `Runtime` owns the executable caches, in memory and on disk, both keyed by
`cache_key.compilation_key`: the module without debug locations and without any constant
values (they are arguments), plus what else decides the compiled code; so a new closure over
new values of the same shapes reuses the executable, in this process and in the next.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lamina_core import dtypes
from lamina_core.ir import (
    AbstractMesh,
    AbstractValue,
    Mesh,
    NamedSharding,
    PartitionSpec,
    ShapedArray,
    float0_zeros,
    get_concrete_mesh,
    physical_aval,
)
from lamina_mlir import LoweredModule, tokens_made_inside
from lamina_runtime import _bridge_devices, _bridge_executables, failures, monitoring
from lamina_runtime import sharding as shardings
from lamina_runtime._lru import LRUCache
from lamina_runtime.array import Array, place, to_buffer
from lamina_runtime.cache_key import CacheKey, compilation_key
from lamina_runtime.compilation_cache import (
    CacheSettings,
    CompilationCache,
    configured_settings,
    min_compile_time,
)


def _array_aval(aval: AbstractValue, what: str) -> ShapedArray:
    if not isinstance(aval, ShapedArray):
        raise TypeError(
            f"{what} has type {aval.str_short(True)}, which the runtime cannot pass to XLA"
        )
    return aval


def _xla_dtype_name(aval: ShapedArray) -> str:
    return "bool" if aval.dtype == dtypes.float0 else aval.dtype.name  # float0 lowers to i1


def _describe(signature: Sequence[tuple[tuple[int, ...], str]]) -> str:
    return ", ".join(f"{dtype}{list(dims)}" for dims, dtype in signature) or "nothing"


def signature_mismatch(
    loaded: Any,
    params: Sequence[ShapedArray],
    results: Sequence[ShapedArray],
    expected_by: str = "the program",
) -> str | None:
    """Why `loaded` cannot be the executable of a program with these parameter (const args
    first) and result types, or None when the types it reports are these."""
    try:
        got_params, got_results = _bridge_executables.executable_signature(loaded)
    except Exception as err:  # jaxlib's error types are not public
        return f"its parameter and result types cannot be read ({err})"
    params, results = [physical_aval(a) for a in params], [physical_aval(a) for a in results]
    want_params = tuple((a.shape, _xla_dtype_name(a)) for a in params)
    want_results = tuple((a.shape, _xla_dtype_name(a)) for a in results)
    if got_params != want_params:
        return (
            f"the executable takes ({_describe(got_params)}), {expected_by} "
            f"({_describe(want_params)})"
        )
    if got_results != want_results:
        return (
            f"the executable returns ({_describe(got_results)}), {expected_by} "
            f"({_describe(want_results)})"
        )
    return None


def is_host_output(aval: ShapedArray) -> bool:
    """Whether the caller gets an output of type `aval` as a host value: float0 values have no
    device form, so JAX returns them as host arrays (the program's buffer holds only False)."""
    return aval.dtype == dtypes.float0


def host_value(aval: ShapedArray) -> Any:
    """The host value of an output of type `aval` for which `is_host_output` holds."""
    return float0_zeros(aval.shape)


def host_output(buf: Any, aval: ShapedArray) -> Any:
    """The output `buf` of type `aval` as the caller gets it."""
    return host_value(aval) if is_host_output(aval) else Array(buf, aval)


@dataclass(eq=False)
class Executable:
    """A compiled module. Identity is intended: it owns the loaded executable."""

    loaded: Any
    """jaxlib's loaded executable."""
    name: str
    device: Any
    const_avals: tuple[ShapedArray, ...]
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    fingerprint: str
    options: Any = None
    """The compile options it was built with (loading a serialized copy needs them)."""
    serialized: bytes | None = None
    """The bytes it was deserialized from, if it was: saving it again must reuse them, since
    jaxlib 0.10.2 re-serializes a deserialized CPU executable without part of its object code
    (measured: 58 KB became 44 KB, and the copy failed in a fresh process with `NOT_FOUND:
    Function add_tanh_fusion.19 not found`)."""
    handlers: list[Any] = field(default_factory=list)
    mesh: Mesh | None = None
    """The mesh it runs on (partitioned by XLA over all its devices), or None: `device`."""
    in_shardings: tuple[Any, ...] = ()
    """On a mesh: where each parameter (const args first) must be, as jax shardings."""
    out_shardings: tuple[shardings.Sharding, ...] = ()
    """On a mesh: where each output is, as JAX reports it."""
    calls_host: bool = False
    """Whether it calls Python functions (host callbacks), whose failures Python reports."""
    host_outputs: bool = field(init=False, default=False)
    """Whether some output is a host value (a float0 array) rather than an `Array`."""

    def __post_init__(self) -> None:
        self.host_outputs = any(map(is_host_output, self.out_avals))
        if self.mesh is None:
            self.handlers = [
                _bridge_executables.result_handler(a.shape, a.dtype, a.weak_type, self.device)
                for a in self.out_avals
            ]
        else:
            self.handlers = [
                _bridge_executables.result_handler(
                    a.shape, a.dtype, a.weak_type, None, shardings.to_jax(s)
                )
                for a, s in zip(self.out_avals, self.out_shardings, strict=True)
            ]

    def _put(self, x: Any, aval: ShapedArray, position: int) -> Any:
        if self.mesh is None:
            return to_buffer(x, aval, self.device)
        return place(x, aval, self.in_shardings[position])

    def serialize(self) -> bytes:
        """The executable as jaxlib's serialized bytes (the bytes it came from, if any)."""
        if self.serialized is not None:
            return self.serialized
        return _bridge_executables.serialize_executable(self.loaded)

    def put_consts(self, values: Sequence[Any]) -> list[Any]:
        """The const args as device buffers: device arrays as they are, host values copied once."""
        return [
            self._put(v, a, i)
            for i, (v, a) in enumerate(zip(values, self.const_avals, strict=True))
        ]

    def run(self, const_bufs: Sequence[Any], args: Sequence[Any]) -> list[Any]:
        """Run on `args` (any values of the right types); results are `Array`s (float0 ones
        host arrays, `host_output`)."""
        bufs = [*const_bufs]
        first = len(self.const_avals)
        for i, (x, aval) in enumerate(zip(args, self.in_avals, strict=True)):
            bufs.append(self._put(x, aval, first + i))
        outs = _bridge_executables.execute(self.loaded, bufs, self.handlers)
        if self.host_outputs:
            return [host_output(o, a) for o, a in zip(outs, self.out_avals, strict=True)]
        return [Array(o, a) for o, a in zip(outs, self.out_avals, strict=True)]

    def run_buffers(self, bufs: list[Any]) -> list[Any]:
        """Run on device buffers already placed (const args first); the hot path of `jit`."""
        return _bridge_executables.execute(self.loaded, bufs, self.handlers)


class Runtime:
    """Owns the compiled executables of this process and the persistent cache. Identity is
    intended.

    Args:
        cache: the persistent cache to use; by default (`"config"`) the one the configuration
            names (`jax_compilation_cache_dir` and friends), looked up again when options
            change; None for none.
    """

    def __init__(self, cache: CompilationCache | Literal["config"] | None = "config") -> None:
        self._executables: LRUCache[str, tuple[Any, bytes | None]] = LRUCache()
        """Loaded executables by cache-key digest, with the bytes each was loaded from; the
        least recently used go beyond `jax_executable_cache_size`."""
        self.loaded_artifacts: LRUCache[tuple[bytes, int], Any] = LRUCache()
        """What `aot.deserialize` checked of each saved function it loaded, by its checksum and
        header length (which name its bytes): loading the same bytes again checks them once."""
        self._lock = threading.Lock()
        self._cache_choice = cache
        self._configured: tuple[CacheSettings | None, CompilationCache | None] | None = None
        self.compilations = 0
        """How many modules XLA compiled (misses of both caches), for tests and diagnostics."""
        self.persistent_hits = 0
        """How many executables came from the persistent cache."""

    @property
    def persistent_cache(self) -> CompilationCache | None:
        """The persistent cache compilations read and write now, or None."""
        if self._cache_choice != "config":
            return self._cache_choice
        settings = configured_settings()
        known = self._configured
        if known is not None and known[0] == settings:
            return known[1]
        cache = (
            None
            if settings is None
            else CompilationCache(settings.root, max_bytes=settings.max_bytes)
        )
        self._configured = (settings, cache)
        return cache

    def clear(self) -> None:
        """Forget the in-memory executables (the persistent cache keeps its entries)."""
        with self._lock:
            self._executables.clear()
            self.loaded_artifacts.clear()

    def compile(
        self,
        lowered: LoweredModule,
        device: Any | None = None,
        compiler_options: Mapping[str, _bridge_executables.CompilerOption] | None = None,
        *,
        mesh: Mesh | None = None,
        in_shardings: Sequence[NamedSharding | None] = (),
        out_shardings: Sequence[shardings.Sharding | None] = (),
    ) -> Executable:
        """The executable for `lowered` on `device`: from memory, from the persistent cache, or
        compiled (and then written to the persistent cache). `compiler_options` are XLA options
        by name, as JAX's; they are part of the cache key.

        On a `mesh` (by default the module's own, if it was lowered for one) the program is
        partitioned over the mesh's devices; `in_shardings` (const args first) are the
        shardings the caller placed its inputs with, of which the first given decides how
        outputs placed the same way are described (as JAX); `out_shardings` are the outputs'
        shardings the caller asked for.

        Modules that differ only in weak types compile to the same code and share it; the
        returned `Executable` has `lowered`'s own types, weak types included.
        """
        mesh = mesh or _concrete(lowered.mesh)
        # The runtime passes no tokens: a program with ordered effects makes its own.
        lowered = tokens_made_inside(lowered)
        device = device or _bridge_devices.default_device()
        devices = [device] if mesh is None else list(mesh.devices_flat)
        if mesh is None and device is _bridge_devices.first_local_device():
            options = _bridge_executables.compile_options(overrides=compiler_options)
        elif mesh is None:  # another device (`jax_default_device`): assigned, and so keyed
            options = _bridge_executables.compile_options(1, 1, [device.id], compiler_options)
        else:
            # Partitioned: XLA places what the caller left open as the program suggests, as
            # under JAX's jit (one device has nothing to place).
            ids = [d.id for d in devices]
            flags = _propagation(lowered, in_shardings, out_shardings)
            options = _bridge_executables.compile_options(
                1, mesh.size, ids, compiler_options, flags
            )
        key = compilation_key(lowered, devices, options)
        # In memory by device too: the key names device kinds, and a loaded executable runs on
        # the devices it was loaded for (another default device needs its own).
        memo = f"{key.digest}@{','.join(str(d.id) for d in devices)}"
        with self._lock:
            known = self._executables.get(memo)
        if lowered.host_callbacks:
            # The module names its Python functions by index only: another module of the same
            # text calls other functions, so it is compiled anew and cached nowhere (as JAX).
            code = lowered.as_bytecode()
            with lowered.context:
                # Recorded: XLA reports only the text of what a callback raised.
                callbacks = [failures.recording(c) for c in lowered.host_callbacks]
                loaded = _bridge_executables.compile(
                    code, devices, options, callbacks, lowered.module
                )
            known = (loaded, None)
            with self._lock:
                self.compilations += 1
        elif known is None:
            known = self._load_or_compile(lowered, key, devices, options, mesh is not None)
            with self._lock:
                known = self._executables.setdefault(memo, known)
        loaded, serialized = known
        const_avals = tuple(_array_aval(a, "a constant") for a in lowered.const_args.avals)
        in_avals = tuple(_array_aval(a, f"argument {i}") for i, a in enumerate(lowered.in_avals))
        out_avals = tuple(_array_aval(a, f"result {i}") for i, a in enumerate(lowered.out_avals))
        placed: dict[str, Any] = {}
        if mesh is not None:
            ranks = [len(a.shape) for a in (*const_avals, *in_avals)]
            placed = _placement(loaded, mesh, ranks, out_avals, in_shardings, out_shardings)
        return Executable(
            loaded,
            lowered.name,
            devices[0],
            const_avals,
            in_avals,
            out_avals,
            key.digest,
            options,
            serialized,
            mesh=mesh,
            calls_host=bool(lowered.host_callbacks),
            **placed,
        )

    def _load_or_compile(
        self,
        lowered: LoweredModule,
        key: CacheKey,
        devices: list[Any],
        options: Any,
        partitioned: bool = False,
    ) -> tuple[Any, bytes | None]:
        """The loaded executable, and the bytes it was deserialized from (None if compiled)."""
        cache = self.persistent_cache  # reads and checks every cache setting: errors come first
        min_time = min_compile_time()
        if cache is not None:
            blob = cache.get(key)
            if blob is not None:
                try:
                    loaded = _bridge_executables.deserialize_executable(blob, devices, options)
                except Exception as err:  # jaxlib rejects it: the entry is no use to anyone
                    cache.discard(key, f"jaxlib could not load it ({err})")
                else:
                    # A partitioned executable reports per-device types: not comparable.
                    wrong = (
                        None
                        if partitioned
                        else signature_mismatch(
                            loaded,
                            [*lowered.const_args.avals, *lowered.in_avals],  # type: ignore[list-item]
                            lowered.out_avals,  # type: ignore[arg-type]
                        )
                    )
                    if wrong is None:
                        with self._lock:
                            self.persistent_hits += 1
                        return loaded, blob
                    cache.discard(key, f"it holds another program's executable: {wrong}")
        start, wall_start = time.perf_counter(), time.time()
        loaded = _bridge_executables.compile(lowered.as_bytecode(), devices, options)
        elapsed = time.perf_counter() - start
        # JAX names the function (`jit(f)`); the module's symbol (`jit_f`) is what is kept.
        fun_name = lowered.name.removeprefix("jit_")
        monitoring.record_compile(f"jit({fun_name})", wall_start, wall_start + elapsed)
        with self._lock:
            self.compilations += 1
        if cache is not None and elapsed >= min_time:
            cache.put(key, _bridge_executables.serialize_executable(loaded), compile_time=elapsed)
        return loaded, None


def _concrete(mesh: Mesh | AbstractMesh | None) -> Mesh | None:
    """The devices of the mesh a module was lowered for (an abstract one: the mesh in context)."""
    if mesh is None or isinstance(mesh, Mesh):
        return mesh
    here = get_concrete_mesh()
    if here.empty or here.abstract_mesh != mesh:
        raise ValueError(
            f"the program was lowered for {mesh}, but the mesh in context is {here}: set a "
            "mesh of that shape with `lamina.set_mesh`"
        )
    return here


def _propagation(
    lowered: LoweredModule,
    in_shardings: Sequence[NamedSharding | None],
    out_shardings: Sequence[shardings.Sharding | None],
) -> tuple[list[bool], list[bool]]:
    """Which parameters (const args first) and outputs the partitioner may place as it
    chooses: those the caller gave no sharding, as JAX's jit tells XLA (it propagates
    shardings into them from the program)."""
    n_params = len(lowered.const_args.avals) + len(lowered.in_avals)
    ins = list(in_shardings)[:n_params] + [None] * (n_params - len(in_shardings))
    outs = list(out_shardings) + [None] * (len(lowered.out_avals) - len(out_shardings))
    return [s is None for s in ins], [s is None for s in outs]


def _placement(
    loaded: Any,
    mesh: Mesh,
    ranks: Sequence[int],
    out_avals: Sequence[ShapedArray],
    in_shardings: Sequence[NamedSharding | None],
    out_shardings: Sequence[shardings.Sharding | None],
) -> dict[str, Any]:
    """Where a partitioned executable takes its inputs and puts its outputs, as XLA chose."""
    params, outs = _bridge_executables.tilings(loaded)
    ins = tuple(
        shardings.to_jax(NamedSharding(mesh, shardings.spec_of_tiling(t, mesh) or PartitionSpec()))
        for t in params
    )
    first = next(((i, s) for i, s in enumerate(in_shardings) if s is not None), None)
    orig = None if first is None else (ranks[first[0]], first[1])
    given = list(out_shardings) + [None] * (len(out_avals) - len(out_shardings))
    described = tuple(
        g if g is not None else shardings.output_sharding(t, len(a.shape), mesh, orig)
        for t, a, g in zip(outs, out_avals, given, strict=True)
    )
    return {"in_shardings": ins, "out_shardings": described}


_runtime = Runtime()


def runtime() -> Runtime:
    """The process's runtime."""
    return _runtime
