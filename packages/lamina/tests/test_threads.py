"""Issue 41, item 3: Lamina used from several threads at once.

Eight threads each run rounds of what a program does: trace functions no one traced before,
hit and miss `jit`'s caches (a function all threads share, with shapes they share and shapes of
their own), differentiate, batch and scan, run eager operations, update Refs of their own, each
under a `config` scope of its own (x64 on in half of them), while another thread empties every
in-memory cache again and again; compilations write the persistent cache, which later runs read.
The results must equal a serial run's, no thread may raise, and none may hang: every join has a
timeout, and a hang fails the test with the stack of every thread.

JAX's configuration scopes are thread-local (a thread does not see another's `with` block, nor
a new thread its parent's); the first tests check that JAX behaves so and Lamina the same.
"""

from __future__ import annotations

import faulthandler
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp_oracle
import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
import lamina_runtime as lr
from lamina import lax
from lamina_runtime.compilation_cache import (
    ENTRY_SUFFIX,
    TEMP_SUFFIX,
    CorruptEntry,
    decode_entry,
)

THREADS = 8
ROUNDS = 3
SLOW_ROUNDS = 20
JOIN_TIMEOUT = 240.0
"""Seconds all threads together may take before the run counts as hung."""
SWITCH_INTERVAL = 1e-4
"""Seconds between the interpreter's thread switches during threaded runs (default 5e-3):
more interleavings per run."""

Result = list[tuple[str, str, np.ndarray]]
"""(what, dtype, value) of every value a worker computed, in order."""


# ---- config scopes are thread-local, in JAX and in Lamina -------------------------------------


def _x64_seen(module: Any, numpy: Any) -> dict[str, tuple[str, bool]]:
    """What each thread sees while one thread is inside `with enable_x64(True)`: the dtype of
    `arange` and the option's value."""
    seen: dict[str, tuple[str, bool]] = {}
    entered, release = threading.Event(), threading.Event()

    def look(where: str) -> None:
        seen[where] = (numpy.arange(3).dtype.name, bool(module.enable_x64.value))

    def holder() -> None:
        with module.enable_x64(True):
            look("inside the scope")
            _run_thread(lambda: look("a thread started inside the scope"))
            entered.set()
            release.wait(JOIN_TIMEOUT)
        look("the same thread after the scope")

    thread = threading.Thread(target=holder, daemon=True)
    thread.start()
    assert entered.wait(JOIN_TIMEOUT)
    look("another thread meanwhile")
    _run_thread(lambda: look("a third thread meanwhile"))
    release.set()
    thread.join(JOIN_TIMEOUT)
    assert not thread.is_alive()
    return seen


def _run_thread(target: Callable[[], None]) -> None:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(JOIN_TIMEOUT)
    assert not thread.is_alive()


X64_SEEN = {
    "inside the scope": ("int64", True),
    "a thread started inside the scope": ("int32", False),
    "another thread meanwhile": ("int32", False),
    "a third thread meanwhile": ("int32", False),
    "the same thread after the scope": ("int32", False),
}


def test_jax_config_scopes_are_thread_local() -> None:
    assert _x64_seen(jax, jnp_oracle) == X64_SEEN


def test_lamina_config_scopes_are_thread_local_as_jax() -> None:
    assert _x64_seen(lamina, jnp) == _x64_seen(jax, jnp_oracle) == X64_SEEN


def test_a_jitted_call_follows_its_own_threads_scope() -> None:
    """One jitted function, called at once by a thread with x64 and one without: C++ dispatch
    and Lamina's caches keep the two apart (a weak Python float becomes each thread's float)."""
    f = lamina.jit(lambda x: x * 2.0)
    dtypes: dict[bool, set[str]] = {True: set(), False: set()}
    barrier = threading.Barrier(2, timeout=JOIN_TIMEOUT)

    def call(x64: bool) -> None:
        with lamina.enable_x64(x64):
            barrier.wait()
            for i in range(50):
                dtypes[x64].add(np.asarray(f(float(i))).dtype.name)

    threads = [threading.Thread(target=call, args=(x64,), daemon=True) for x64 in (True, False)]
    for thread in threads:
        thread.start()
    _join_all(threads, time.monotonic() + JOIN_TIMEOUT)
    assert dtypes == {True: {"float64"}, False: {"float32"}}


# ---- the workload -------------------------------------------------------------------------------


def _shared(x: Any) -> Any:
    return jnp.tanh(x) * 2.0 + jnp.sum(x)


def _loss(w: Any, x: Any) -> Any:
    return jnp.sum(jnp.sin(w * x) ** 2)


def _bump_body(ref: Any, v: Any) -> None:
    ref[...] = ref[...] * 0.5 + v


_shared_jit = lamina.jit(_shared)
_grad_jit = lamina.jit(lamina.grad(_loss))
_bump = lamina.jit(_bump_body)


def _round(tid: int, r: int, ref: Any, out: Result) -> None:
    """One round of thread `tid`'s work; every value computed goes to `out`."""

    def put(what: str, value: Any) -> None:
        array = np.asarray(value)
        out.append((f"thread {tid} round {r}: {what}", array.dtype.name, array))

    c = float(tid + 1) + 0.25 * r
    x = jnp.arange(4.0) + c
    # A function no one traced: trace, lower, then compile or read the persistent cache.
    fresh = lamina.jit(lambda y: jnp.sin(y) * c + float(r))
    put("a new function", fresh(x))
    put("the new function again (hit)", fresh(x + 1.0))
    put("shared function, shared shape", _shared_jit(jnp.ones(r % 3 + 1) * c))
    put("shared function, own shape", _shared_jit(jnp.ones(tid + 2 + THREADS * r)))
    put("shared function, Python float", _shared_jit(c))
    put("jit(grad)", _grad_jit(x, x * 0.5))
    put("new jit(grad) over a closure", lamina.jit(lamina.grad(lambda w: _loss(w, x)))(x))
    put("vmap", lamina.vmap(lambda row: jnp.dot(row, x))(jnp.outer(x, x)))
    batched = lamina.vmap(lamina.grad(lambda w, y: jnp.sum(jnp.cos(w * y))), in_axes=(0, None))
    put("jit(vmap(grad))", lamina.jit(batched)(jnp.outer(x, x), x))
    carry, ys = lax.scan(lambda h, y: (h * 0.5 + y, h * y), x[0], x)
    put("scan carry", carry)
    put("scan outputs", ys)
    put(
        "grad(scan)",
        lamina.grad(lambda a: lax.scan(lambda h, y: (jnp.sin(h * y), None), a, x)[0])(x[1]),
    )
    put("eager float", jnp.cumsum(x * x) - jnp.max(x))
    put("eager int", jnp.arange(tid + 3) * (r + 1))
    _bump(ref, x[:3])
    put("Ref after a jitted update", ref[...])
    ref[1] += 1.0
    put("Ref after an eager update", ref[...])


def _work(tid: int, rounds: int) -> Result:
    """Thread `tid`'s rounds, under its own scope: x64 in odd threads."""
    out: Result = []
    with lamina.enable_x64(tid % 2 == 1):
        ref = lamina.new_ref(jnp.zeros(3))
        out.append((f"thread {tid}: x64", "bool", np.asarray(lamina.enable_x64.value)))
        for r in range(rounds):
            _round(tid, r, ref, out)
    return out


def _join_all(threads: list[threading.Thread], deadline: float) -> None:
    """Join every thread by `deadline`, else fail with every thread's stack (a hang)."""
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = [t.name for t in threads if t.is_alive()]
    if hung:
        with tempfile.TemporaryFile("w+") as f:
            faulthandler.dump_traceback(f, all_threads=True)
            f.seek(0)
            stacks = f.read()
        pytest.fail(f"threads {hung} still running after the timeout (a deadlock?):\n{stacks}")


def _threaded(rounds: int) -> tuple[dict[int, Result], int]:
    """Every worker in a thread of its own, started together, while another thread clears the
    caches; the results by thread, and how many times the caches were cleared."""
    results: dict[int, Result] = {}
    errors: dict[int, str] = {}
    start = threading.Barrier(THREADS + 1, timeout=JOIN_TIMEOUT)
    stop = threading.Event()
    clears = 0

    def worker(tid: int) -> None:
        try:
            start.wait()
            results[tid] = _work(tid, rounds)
        except BaseException:
            errors[tid] = traceback.format_exc()

    def clearer() -> None:
        nonlocal clears
        try:
            start.wait()
            while not stop.wait(0.05):
                lamina.clear_caches()
                clears += 1
        except BaseException:
            errors[-1] = traceback.format_exc()

    threads = [
        threading.Thread(target=worker, args=(tid,), name=f"worker-{tid}", daemon=True)
        for tid in range(THREADS)
    ]
    cleaner = threading.Thread(target=clearer, name="clear_caches", daemon=True)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        for thread in [*threads, cleaner]:
            thread.start()
        _join_all(threads, time.monotonic() + JOIN_TIMEOUT)
        stop.set()
        _join_all([cleaner], time.monotonic() + JOIN_TIMEOUT)
    finally:
        stop.set()
        sys.setswitchinterval(interval)
    assert not errors, "\n".join(f"thread {t}:\n{tb}" for t, tb in sorted(errors.items()))
    return results, clears


def _serial(rounds: int) -> dict[int, Result]:
    return {tid: _work(tid, rounds) for tid in range(THREADS)}


def _assert_same(got: dict[int, Result], expected: dict[int, Result]) -> None:
    assert sorted(got) == sorted(expected) == list(range(THREADS))
    for tid in range(THREADS):
        assert [w for w, _, _ in got[tid]] == [w for w, _, _ in expected[tid]]
        for (what, dtype, value), (_, want_dtype, want) in zip(
            got[tid], expected[tid], strict=True
        ):
            assert dtype == want_dtype, what
            # The same programs on the same inputs: bitwise the same results.
            np.testing.assert_array_equal(value, want, err_msg=what)


def _entries_are_whole(root: Path) -> int:
    """How many entries the cache directory holds; fails on any partial or corrupt one, or on a
    temporary file left behind."""
    leftovers = [p.name for p in root.iterdir() if p.name.endswith(TEMP_SUFFIX)]
    assert not leftovers, f"temporary files left in the cache: {leftovers}"
    entries = [p for p in root.iterdir() if p.name.endswith(ENTRY_SUFFIX)]
    for path in entries:
        # The file's name ends with its key's digest: the entry must be whole and for that key.
        key = lr.CacheKey(path.stem, (), path.stem[-64:])
        try:
            decode_entry(key, path.read_bytes())
        except CorruptEntry as err:
            pytest.fail(f"{path.name}: {err}")
    return len(entries)


@pytest.fixture
def fresh_persistent_cache(tmp_path: Path) -> Iterator[Path]:
    """An empty persistent cache for every thread (a `config` scope would be this thread's only),
    and empty in-memory caches, so that the first run compiles and writes."""
    option = "jax_compilation_cache_dir"
    before = lamina.config.values[option]
    lamina.config.update(option, str(tmp_path))
    lamina.clear_caches()
    try:
        yield tmp_path
    finally:
        lamina.config.update(option, before)


def _check_threads_against_serial(cache_dir: Path, rounds: int) -> None:
    runtime = lr.runtime()
    # Cold: every thread compiles and writes the persistent cache, racing on shared programs.
    threaded, clears = _threaded(rounds)
    assert clears > 0
    written = _entries_are_whole(cache_dir)
    assert written > THREADS * rounds
    # Serial, after clearing memory: the entries the threads wrote are read back.
    lamina.clear_caches()
    hits = runtime.persistent_hits
    serial = _serial(rounds)
    assert runtime.persistent_hits > hits
    _assert_same(threaded, serial)
    # Warm: the threads read the persistent cache at once.
    lamina.clear_caches()
    hits = runtime.persistent_hits
    again, _ = _threaded(rounds)
    assert runtime.persistent_hits > hits
    _assert_same(again, serial)
    _entries_are_whole(cache_dir)


def test_eight_threads_give_the_serial_results(fresh_persistent_cache: Path) -> None:
    _check_threads_against_serial(fresh_persistent_cache, ROUNDS)


@pytest.mark.slow
def test_eight_threads_give_the_serial_results_over_many_rounds(
    fresh_persistent_cache: Path,
) -> None:
    _check_threads_against_serial(fresh_persistent_cache, SLOW_ROUNDS)
