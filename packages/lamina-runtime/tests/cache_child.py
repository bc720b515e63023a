"""A child process for the cache tests: `python cache_child.py key|race ...`.

`key` prints the cache key of `program()`; `race GO_FILE` prints `ready` once imported, waits
for GO_FILE to exist (so that several children start compiling together), then runs
`program()` through the persistent cache the environment names and prints the result's sum, the
number of XLA compilations and of persistent cache hits.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_runtime import _bridge_devices, _bridge_executables

WEIGHTS = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)


def program() -> tuple[Any, tuple[Any, ...]]:
    """A small program with a hoisted constant and private functions (flip, argmax)."""
    inner = lr.jit(lambda x: jnp.tanh(x @ WEIGHTS))

    def f(x: Any) -> Any:
        return inner(inner(x)) + jnp.flip(x, 0) * jnp.argmax(x, axis=1).astype(np.float32).sum()

    return f, (np.arange(32, dtype=np.float32).reshape(4, 8) / 32,)


def program_key() -> str:
    f, args = program()
    module = lr.jit(f).lower(*args)._module
    device = _bridge_devices.default_device()
    return lr.compilation_key(module, [device], _bridge_executables.compile_options()).digest


def race(go_file: Path) -> None:
    f, args = program()
    print("ready", flush=True)
    while not go_file.exists():
        time.sleep(0.001)
    out = np.asarray(lr.jit(f)(*args))
    runtime = lr.runtime()
    print(f"{float(out.sum()):.6f} {runtime.compilations} {runtime.persistent_hits}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "key":
        print(program_key())
    else:
        race(Path(sys.argv[2]))
