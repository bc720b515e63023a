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
from lamina_core.avals import AbstractValue, ShapedArray, physical_aval
from lamina_mlir import LoweredModule
from lamina_runtime import _bridge
from lamina_runtime._lru import LRUCache
from lamina_runtime.array import Array
from lamina_runtime.cache_key import CacheKey, compilation_key
from lamina_runtime.compilation_cache import (
    CacheSettings,
    CompilationCache,
    configured_settings,
    min_compile_time,
)


def _array_aval(aval: AbstractValue, what: str) -> ShapedArray:
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"{what} has type {aval.str_short()}, which the runtime cannot pass to XLA")
    return aval


def to_buffer(x: Any, aval: ShapedArray, device: Any) -> Any:
    """`x` as a device array of type `aval` on `device`: a copy for host values, moved if needed."""
    if type(x) is Array:
        buf = x._buf
    elif _bridge.is_device_array(x):
        buf = x
    else:
        return _bridge.device_put(x, aval.shape, aval.dtype, aval.weak_type, device)
    sharding = _bridge.single_device_sharding(device)
    current = buf.sharding
    if current is not sharding and current != sharding:
        # Never pass a mis-placed buffer to XLA: on multi-device executables that crashes.
        buf = _bridge.reshard(buf, sharding)
    return buf


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
        got_params, got_results = _bridge.executable_signature(loaded)
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

    def __post_init__(self) -> None:
        self.handlers = [
            _bridge.result_handler(a.shape, a.dtype, a.weak_type, self.device)
            for a in self.out_avals
        ]

    def serialize(self) -> bytes:
        """The executable as jaxlib's serialized bytes (the bytes it came from, if any)."""
        if self.serialized is not None:
            return self.serialized
        return _bridge.serialize_executable(self.loaded)

    def put_consts(self, values: Sequence[Any]) -> list[Any]:
        """The const args as device buffers: device arrays as they are, host values copied once."""
        return [to_buffer(v, a, self.device) for v, a in zip(values, self.const_avals, strict=True)]

    def run(self, const_bufs: Sequence[Any], args: Sequence[Any]) -> list[Array]:
        """Run on `args` (any values of the right types); results are `Array`s."""
        bufs = [*const_bufs]
        for x, aval in zip(args, self.in_avals, strict=True):
            bufs.append(to_buffer(x, aval, self.device))
        outs = _bridge.execute(self.loaded, bufs, self.handlers)
        return [Array(o, a) for o, a in zip(outs, self.out_avals, strict=True)]

    def run_buffers(self, bufs: list[Any]) -> list[Any]:
        """Run on device buffers already placed (const args first); the hot path of `jit`."""
        return _bridge.execute(self.loaded, bufs, self.handlers)


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

    def compile(
        self,
        lowered: LoweredModule,
        device: Any | None = None,
        compiler_options: Mapping[str, _bridge.CompilerOption] | None = None,
    ) -> Executable:
        """The executable for `lowered` on `device`: from memory, from the persistent cache, or
        compiled (and then written to the persistent cache). `compiler_options` are XLA options
        by name, as JAX's; they are part of the cache key.

        Modules that differ only in weak types compile to the same code and share it; the
        returned `Executable` has `lowered`'s own types, weak types included.
        """
        device = device or _bridge.default_device()
        options = _bridge.compile_options(overrides=compiler_options)
        key = compilation_key(lowered, [device], options)
        with self._lock:
            known = self._executables.get(key.digest)
        if known is None:
            known = self._load_or_compile(lowered, key, device, options)
            with self._lock:
                known = self._executables.setdefault(key.digest, known)
        loaded, serialized = known
        return Executable(
            loaded,
            lowered.name,
            device,
            tuple(_array_aval(a, "a constant") for a in lowered.const_args.avals),
            tuple(_array_aval(a, f"argument {i}") for i, a in enumerate(lowered.in_avals)),
            tuple(_array_aval(a, f"result {i}") for i, a in enumerate(lowered.out_avals)),
            key.digest,
            options,
            serialized,
        )

    def _load_or_compile(
        self, lowered: LoweredModule, key: CacheKey, device: Any, options: Any
    ) -> tuple[Any, bytes | None]:
        """The loaded executable, and the bytes it was deserialized from (None if compiled)."""
        cache = self.persistent_cache  # reads and checks every cache setting: errors come first
        min_time = min_compile_time()
        if cache is not None:
            blob = cache.get(key)
            if blob is not None:
                try:
                    loaded = _bridge.deserialize_executable(blob, [device], options)
                except Exception as err:  # jaxlib rejects it: the entry is no use to anyone
                    cache.discard(key, f"jaxlib could not load it ({err})")
                else:
                    wrong = signature_mismatch(
                        loaded,
                        [*lowered.const_args.avals, *lowered.in_avals],  # type: ignore[list-item]
                        lowered.out_avals,  # type: ignore[arg-type]
                    )
                    if wrong is None:
                        with self._lock:
                            self.persistent_hits += 1
                        return loaded, blob
                    cache.discard(key, f"it holds another program's executable: {wrong}")
        start = time.perf_counter()
        loaded = _bridge.compile(lowered.as_bytecode(), [device], options)
        elapsed = time.perf_counter() - start
        with self._lock:
            self.compilations += 1
        if cache is not None and elapsed >= min_time:
            cache.put(key, _bridge.serialize_executable(loaded), compile_time=elapsed)
        return loaded, None


_runtime = Runtime()


def runtime() -> Runtime:
    """The process's runtime."""
    return _runtime
