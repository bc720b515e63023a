"""The showcase: every layer's capability, run end to end. Each issue adds its part."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
import time
from typing import Any

import lamina_runtime

LAYERS = (
    ("lamina-core", "lamina_core"),
    ("lamina-consts", "lamina_consts"),
    ("lamina-mlir", "lamina_mlir"),
    ("lamina-hijax", "lamina_hijax"),
    ("lamina-refs", "lamina_refs"),
    ("lamina-runtime", "lamina_runtime"),
    ("lamina", "lamina"),
)


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 74 - len(title)))


def show_layers() -> None:
    section("installed layers")
    for dist, import_name in LAYERS:
        try:
            version = importlib.metadata.version(dist)
            module = importlib.import_module(import_name)
        except (importlib.metadata.PackageNotFoundError, ImportError) as err:
            print(f"  {dist:<16} not installed ({err})")
            continue
        summary = (module.__doc__ or "").strip().splitlines()[0]
        print(f"  {dist:<16} {version:<8} {summary}")


def show_seed_002() -> None:
    # Each section reads as a user's script, with its own imports (`lamina` as `jax`).
    import lamina as jax

    jnp = jax.numpy
    section("seed 002: a first-order jaxpr, as JAX 0.10.2 prints it")

    def func1(first: Any, second: Any) -> Any:
        temp = first + jnp.sin(second) * 3.0
        return jnp.sum(temp)

    print(jax.make_jaxpr(func1)(jnp.zeros(8), jnp.ones(8)))
    print("func1(zeros, ones) =", func1(jnp.zeros(8), jnp.ones(8)))

    section("seed 002: a nested jit (func12)")

    def func12(arg: Any) -> Any:
        @jax.jit
        def inner(x: Any) -> Any:
            return x + arg * jnp.ones(1)

        return arg + inner(arg - 2.0)

    print(jax.make_jaxpr(func12)(1.0))
    print("jit(func12)(3.0) =", jax.jit(func12)(3.0))


def show_seed_000() -> None:
    # Each section reads as a user's script, with its own imports (`lamina` as `jax`).
    import numpy as np

    import lamina as jax

    jnp = jax.numpy
    section("seed 000: closed-over constants are literals, then const args")
    a_jax_array = jnp.ones((16,), dtype=np.float32)

    @jax.jit
    def f(x: Any) -> Any:
        return x + a_jax_array + np.full((16,), 42.0) + jnp.full((16,), 142.0)

    x = jnp.arange(16, dtype=np.float32)
    print(jax.make_jaxpr(f.__wrapped__)(x))
    text = f.lower(x).as_text()
    main = next(line.strip() for line in text.splitlines() if "@main(" in line)
    print("\nthe lowered @main takes the constants as leading arguments:\n ", main)
    print("\nf(x) =", f(x))

    section("seed 000: a new closure over a new 128 MB constant reuses the executable")
    runtime = jax_runtime()
    n = 32 * 1024 * 1024  # 128 MB of float32

    def closure(value: float) -> Any:
        big = jnp.full((n,), value, dtype=np.float32)
        return jax.jit(lambda v: v * 2.0 + jnp.sum(big))

    start = time.perf_counter()
    closure(1.0)(np.float32(1.0)).block_until_ready()
    first = time.perf_counter() - start
    compiled_before = runtime.compilations
    start = time.perf_counter()
    closure(2.0)(np.float32(1.0)).block_until_ready()
    second = time.perf_counter() - start
    print(f"first closure: trace+lower+compile+run {first * 1e3:.1f} ms")
    print(
        f"second closure over a different value: {second * 1e3:.1f} ms, "
        f"{runtime.compilations - compiled_before} recompilations"
    )


def show_saved_function() -> None:
    # Each section reads as a user's script, with its own imports (`lamina` as `jax`).
    import numpy as np

    import lamina as jax
    from lamina import aot

    jnp = jax.numpy
    section("a compiled function with hoisted constants, saved and loaded (lamina.aot)")
    weights = np.linspace(0.0, 1.0, 64, dtype=np.float32)
    compiled = jax.jit(lambda x: jnp.tanh(x * weights)).lower(np.ones(64, np.float32)).compile()
    data = aot.serialize(compiled)
    info = aot.describe(data)
    print(
        f"{len(data)} bytes: the executable ({info.executable_bytes} bytes) and "
        f"{info.num_consts} hoisted constant ({info.const_bytes} bytes), "
        f"built with jaxlib {info.built_with['jaxlib']}"
    )
    x = np.ones(64, np.float32)
    loaded = aot.deserialize(data)
    same = np.array_equal(np.asarray(loaded(x)), np.asarray(compiled(x)))
    print("loaded and run without tracing, lowering or compiling; same result:", same)


def jax_runtime() -> Any:
    return lamina_runtime.runtime()


def show_timings() -> None:
    # Each section reads as a user's script, with its own imports (`lamina` as `jax`).
    import numpy as np

    import lamina as jax

    section("timings: jitted call overhead, x + y on f32[16]")
    f = jax.jit(lambda a, b: a + b)
    x = jax.device_put(np.ones(16, np.float32))
    y = jax.device_put(np.ones(16, np.float32))
    f(x, y).block_until_ready()
    lamina_us = _per_call_us(lambda: f(x, y))
    print(f"Lamina: {lamina_us:.2f} us per call")
    jax_us = _jax_per_call_us()
    if jax_us is None:
        print("JAX:    (not installed here)")
    else:
        print(f"JAX:    {jax_us:.2f} us per call  (Lamina/JAX = {lamina_us / jax_us:.2f}x)")


def _per_call_us(fn: Any, calls: int = 2000, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


# JAX runs in a child process: Lamina's packages never import JAX's machinery, even to compare.
_JAX_TIMING = """
import time, numpy as np, jax
f = jax.jit(lambda a, b: a + b)
x = jax.device_put(np.ones(16, np.float32)); y = jax.device_put(np.ones(16, np.float32))
f(x, y).block_until_ready()
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    for _ in range(2000):
        f(x, y)
    best = min(best, (time.perf_counter() - start) / 2000)
print(best * 1e6)
"""


def _jax_per_call_us() -> float | None:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _JAX_TIMING], capture_output=True, text=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return float(proc.stdout.strip().splitlines()[-1])


def run_demo() -> int:
    print(f"Lamina showcase (Python {sys.version.split()[0]})")
    show_layers()
    show_seed_002()
    show_seed_000()
    show_saved_function()
    show_timings()
    return 0
