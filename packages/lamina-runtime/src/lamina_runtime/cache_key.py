"""Compilation cache keys: a digest over named components, stable across processes.

A key names everything that decides the compiled executable and nothing else:

- `module`: the StableHLO bytecode with debug locations stripped and private symbols renamed
  by position, so the same program traced in two processes (or from two call sites) has one
  key. Constant *values* are never in it: hoisted constants are arguments of `@main`, so a
  closure over new weights of the same types hits the cache.
- `compile options`, `jaxlib version`, `platform`, `device kind`, `device count`,
  `xla flags`: what jaxlib compiles with and for (from the runtime bridge).
- `lamina version` and `cache format version`: bumped when Lamina changes what it stores.

Each component goes into the digest as a length-prefixed (name, value) pair, so no two
different component lists hash alike by concatenation. This module knows nothing of files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from lamina_mlir import LoweredModule
from lamina_runtime import _bridge_executables
from lamina_runtime._version import __version__

CACHE_FORMAT_VERSION: Final = 2
"""The version of the cache's entry format (and of what a key means); part of every key.

2: the header's checksum covers the key digest, payload length and compile time too."""

COMPONENT_NAMES: Final = (
    "module",
    "compile options",
    "jaxlib version",
    "platform",
    "device kind",
    "device count",
    "xla flags",
    "lamina version",
    "cache format version",
)
"""Every component of a key, in the order they are hashed."""

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class CacheKey:
    """The key of one compiled executable in the in-memory and persistent caches."""

    name: str
    """The module's name (`jit_f`): for file names and messages only, not hashed separately
    (it is inside the module bytecode)."""
    components: tuple[tuple[str, bytes], ...]
    """The named components, in `COMPONENT_NAMES` order."""
    digest: str
    """sha256 over the components, 64 hex digits."""

    @property
    def file_stem(self) -> str:
        """`<name>-<digest>`, with the name made safe for any file system."""
        safe = _UNSAFE.sub("_", self.name).strip("_-")[:64] or "module"
        return f"{safe}-{self.digest}"

    def component(self, name: str) -> bytes:
        for key, value in self.components:
            if key == name:
                return value
        raise KeyError(f"cache keys have no component {name!r}; they have {COMPONENT_NAMES}")


def make_key(name: str, components: Sequence[tuple[str, bytes]]) -> CacheKey:
    """The key with these components (in this order)."""
    h = hashlib.sha256()
    for key, value in components:
        encoded = key.encode()
        h.update(len(encoded).to_bytes(4, "little"))
        h.update(encoded)
        h.update(len(value).to_bytes(8, "little"))
        h.update(value)
    return CacheKey(name, tuple(components), h.hexdigest())


def key_components(
    lowered: LoweredModule, devices: Sequence[Any], options: Any
) -> list[tuple[str, bytes]]:
    """The named components of `lowered`'s key when compiled with `options` for `devices`."""
    return [
        ("module", lowered.canonical_bytecode()),
        *_bridge_executables.compilation_environment(devices, options),
        ("lamina version", __version__.encode()),
        ("cache format version", str(CACHE_FORMAT_VERSION).encode()),
    ]


def compilation_key(lowered: LoweredModule, devices: Sequence[Any], options: Any) -> CacheKey:
    """The cache key of `lowered` compiled with `options` for `devices`."""
    return make_key(lowered.name, key_components(lowered, devices, options))
