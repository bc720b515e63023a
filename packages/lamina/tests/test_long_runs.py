"""Issue 41, item 5: long runs hold their memory steady.

Each workload runs 100,000 iterations after a warm-up: calls of `jit(grad(f))`, eager `vmap`
and `scan` (each traced anew every iteration), in-place Ref updates (jitted and eager), jitted
calls running a host callback, and eager operations. The process's resident memory (VmRSS of
/proc/self/status) may grow by less than 10 MB, and the number of live device arrays must not
grow at all. Slow session only (about a minute in all).
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import lax

ITERATIONS = 100_000
WARM_UP = 2_000
MAX_GROWTH = 10 * 2**20
"""Bytes of resident memory a workload may add over its 100,000 iterations."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status"),
]


def resident_bytes() -> int:
    """This process's resident set size (VmRSS), from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS line in /proc/self/status")


def live_arrays() -> int:
    """How many device arrays are alive: `lamina.live_arrays()` once Lamina has it (another
    issue adds it), else JAX's count over the same backend, which holds Lamina's buffers too."""
    count = getattr(lamina, "live_arrays", None)
    arrays = count() if count is not None else jax.live_arrays()  # type: ignore[no-untyped-call]  # JAX's is not annotated
    return len(arrays)


Workload = tuple[Callable[[], object], Callable[[], None]]
"""A workload's iteration, and a check of its results so far."""

X = np.linspace(-1.0, 1.0, 8, dtype=np.float32)


def _loss(x: Any) -> Any:
    return jnp.sum(jnp.sin(x) * x)


def _row(r: Any) -> Any:
    return jnp.dot(r, jnp.cos(r))


def _step(c: Any, y: Any) -> tuple[Any, Any]:
    return c * 0.5 + y, c * y


def _bump(ref: Any, v: Any) -> None:
    ref[...] = ref[...] + v


def _jit_grad() -> Workload:
    g = lamina.jit(lamina.grad(_loss))
    x = jnp.asarray(X)
    want = np.cos(X) * X + np.sin(X)

    def check() -> None:
        np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-5, atol=1e-6)

    return lambda: g(x), check


def _vmap() -> Workload:
    xs = jnp.asarray(np.outer(X, X))
    batched = lamina.vmap(_row)
    want = np.einsum("ij,ij->i", np.outer(X, X), np.cos(np.outer(X, X)))

    def check() -> None:
        np.testing.assert_allclose(np.asarray(batched(xs)), want, rtol=1e-5, atol=1e-6)

    return lambda: batched(xs), check


def _scan() -> Workload:
    x = jnp.asarray(X)

    def run() -> Any:
        return lax.scan(_step, 0.0, x)

    def check() -> None:
        carry, ys = run()
        c, expected = np.float32(0.0), []
        for y in X:
            c, out = c * np.float32(0.5) + y, c * y
            expected.append(float(out))
        np.testing.assert_allclose(np.asarray(carry), float(c), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(ys), expected, rtol=1e-6)

    return run, check


def _ref_updates() -> Workload:
    ref = lamina.new_ref(jnp.zeros(8))
    bump = lamina.jit(_bump)
    one = jnp.ones(8)
    calls = [0]

    def run() -> None:
        bump(ref, one)  # in place, by a jitted call
        ref[1] += 1.0  # in place, eagerly
        calls[0] += 1

    def check() -> None:
        want = np.full(8, calls[0], np.float32)
        want[1] *= 2
        np.testing.assert_array_equal(np.asarray(ref[...]), want)

    return run, check


def _host_callbacks() -> Workload:
    seen = [0, 0]  # callbacks run, calls made

    def count(v: Any) -> None:
        seen[0] += 1

    @lamina.jit
    def f(x: Any) -> Any:
        lamina.debug.callback(count, x)
        return x + 1.0

    x = jnp.asarray(X)

    def run() -> None:
        f(x)
        seen[1] += 1

    def check() -> None:
        lamina.effects_barrier()
        assert seen[0] == seen[1]

    return run, check


def _eager_ops() -> Workload:
    x = jnp.asarray(X)

    def run() -> object:
        return (jnp.sin(x) + 1.0).sum()

    def check() -> None:
        np.testing.assert_allclose(np.asarray(run()), np.sum(np.sin(X) + 1.0), rtol=1e-6)

    return run, check


WORKLOADS = {
    "jit(grad(f)) calls": _jit_grad,
    "eager vmap": _vmap,
    "eager scan": _scan,
    "Ref in-place updates": _ref_updates,
    "host callbacks": _host_callbacks,
    "eager ops": _eager_ops,
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_a_long_run_holds_memory_and_live_arrays_steady(name: str) -> None:
    run, check = WORKLOADS[name]()
    for _ in range(WARM_UP):
        run()
    check()
    gc.collect()
    rss, arrays = resident_bytes(), live_arrays()
    start = time.perf_counter()
    for _ in range(ITERATIONS):
        run()
    seconds = time.perf_counter() - start
    check()
    gc.collect()
    growth, new_arrays = resident_bytes() - rss, live_arrays() - arrays
    print(
        f"{name}: {ITERATIONS} iterations in {seconds:.1f} s; RSS {rss / 2**20:.1f} MB -> "
        f"{(rss + growth) / 2**20:.1f} MB ({growth / 2**20:+.2f} MB); live arrays {arrays} "
        f"({new_arrays:+d})"
    )
    assert growth < MAX_GROWTH, f"resident memory grew by {growth / 2**20:.1f} MB"
    assert new_arrays <= 0, f"{new_arrays} more device arrays alive than after the warm-up"
