"""The child process of `test_interrupts.py`: work that a SIGINT interrupts, then checks.

`python interrupt_child.py MODE TRIALS SEED`, with the persistent cache in
`$LAMINA_COMPILATION_CACHE_DIR` (a fresh directory).

Each iteration of the work empties the in-memory caches, then traces, lowers and compiles a
function no iteration compiled before (its executable is written to the persistent cache),
reads an older one back from the persistent cache, runs eager operations, and runs a jitted
function updating a Ref. A SIGINT interrupts it somewhere; the child then names the phase the
`KeyboardInterrupt` came from (the innermost phase function on its traceback), checks that the
interrupted function, a new function of the same program, an eager operation and the Ref all
still give the right answers, and that every entry of the persistent cache is whole and loads,
and prints one JSON line: `{"phase": ..., "problems": [...]}`.

Modes:
- `signal`: the parent sends the SIGINTs, at random times; the child prints `ready` before
  each trial's work.
- `targeted`: the child sends SIGINT to itself, from a profiling hook, at a random point inside
  a chosen phase (each phase in turn) where CPython could raise it, so that every phase is hit;
  it reports `"lost"` for an interrupt Python dropped.

A Ref's update interrupted as its results come back may lose the Ref's value (see
`test_interrupts.py`); the child counts such Refs (`"ref lost"`) and makes a new one.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FrameType, TracebackType
from typing import Any

import jax
import numpy as np
from jaxlib import xla_client

import lamina
import lamina.numpy as jnp
import lamina_runtime as lr
from lamina_runtime.compilation_cache import (
    ENTRY_SUFFIX,
    TEMP_SUFFIX,
    CorruptEntry,
    decode_entry,
)

PHASES = (
    "tracing",
    "lowering",
    "compilation",
    "persistent cache write",
    "persistent cache read",
    "execution",
    "Ref update",
)
_PHASE_FUNCTIONS = {
    ("lamina_core/transforms/_jit.py", "_trace"): "tracing",
    ("lamina_runtime/pipeline.py", "lower_staged"): "lowering",
    ("lamina_runtime/_bridge_executables.py", "compile"): "compilation",
    ("lamina_runtime/_bridge_executables.py", "serialize_executable"): "persistent cache write",
    ("lamina_runtime/compilation_cache.py", "put"): "persistent cache write",
    ("lamina_runtime/compilation_cache.py", "get"): "persistent cache read",
    ("lamina_runtime/_bridge_executables.py", "deserialize_executable"): "persistent cache read",
    ("interrupt_child.py", "execute"): "execution",
    ("interrupt_child.py", "update_ref"): "Ref update",
}
_phase_of_code: dict[CodeType, str | None] = {}

X = np.linspace(-1.0, 1.0, 8, dtype=np.float32)


def phase_of(code: CodeType) -> str | None:
    """The phase a function is, if it is one of the phase functions."""
    try:
        return _phase_of_code[code]
    except KeyError:
        path = code.co_filename.replace(os.sep, "/")
        found = next(
            (
                p
                for (f, name), p in _PHASE_FUNCTIONS.items()
                if path.endswith(f) and code.co_name == name
            ),
            None,
        )
        _phase_of_code[code] = found
        return found


def phase_of_traceback(tb: TracebackType | None) -> str:
    """The innermost phase function on `tb` (the work loop's own code: "between calls")."""
    phase = "between calls"
    while tb is not None:
        phase = phase_of(tb.tb_frame.f_code) or phase
        tb = tb.tb_next
    return phase


def innermost_frames(tb: TracebackType | None, count: int = 3) -> str:
    """`file:line function` of the innermost frames of `tb` (the test's hook left out)."""
    frames = [
        f"{Path(f.filename).name}:{f.lineno} {f.name}"
        for f in traceback.extract_tb(tb)
        if not (f.filename == __file__ and f.name == "__call__")
    ]
    return " < ".join(reversed(frames[-count:]))


def body(c: float) -> Callable[[Any], Any]:
    return lambda x: jnp.sin(x) * c + jnp.cos(x * c)


def expected(c: float) -> np.ndarray:
    value: np.ndarray = np.sin(X) * np.float32(c) + np.cos(X * np.float32(c))
    return value


def bump_body(ref: Any, v: Any) -> None:
    ref[...] = ref[...] + v


class Work:
    """The work loop's state: what a check after an interrupt needs."""

    def __init__(self) -> None:
        self.iteration = 0
        self.f: Callable[[Any], Any] = lamina.jit(body(0.0))
        self.c = 0.0
        self.ref = lamina.new_ref(jnp.zeros(8))
        self.bumps = 0
        """Calls of `bump` that returned; one more may have updated the Ref when interrupted."""
        self.bump = lamina.jit(bump_body)
        self.checked: set[tuple[str, int, int]] = set()
        """Cache entries (name, size, mtime) already loaded by a check."""
        self.refs_lost = 0
        """Refs whose value an interrupt of their update's execution lost."""

    def iterate(self) -> None:
        self.iteration += 1
        lamina.clear_caches()
        c = 1.0 + self.iteration / 64
        f = lamina.jit(body(c))  # a new program: traced, lowered, compiled, written
        # Replaced together: an interrupt while `f` is made leaves the last function and its
        # constant, which the check expects of each other.
        self.f, self.c = f, c
        np.testing.assert_allclose(np.asarray(f(X)), expected(c), rtol=2e-6, atol=2e-6)
        old = 1.0 + (self.iteration // 2) / 64  # written by an earlier iteration: read back
        np.testing.assert_allclose(
            np.asarray(lamina.jit(body(old))(X)), expected(old), rtol=2e-6, atol=2e-6
        )
        execute(self)
        update_ref(self)

    def check(self, phase: str) -> list[str]:
        """What is wrong after an interrupt in `phase` (nothing, if it left no trace)."""
        problems: list[str] = []

        def attempt(what: str, run: Callable[[], None]) -> None:
            try:
                run()
            except Exception:
                problems.append(f"{what}: {traceback.format_exc(limit=-6)}")

        c = self.c
        want = expected(c)
        attempt("the interrupted function", lambda: _close(self.f(X), want))
        attempt("a new function of its program", lambda: _close(lamina.jit(body(c))(X), want))
        attempt("an eager operation", lambda: _close(jnp.sin(X) * 2.0, np.sin(X) * 2.0))

        def ref_ok() -> None:
            value = np.asarray(self.ref[...])
            # The interrupted call updated the Ref or did not; either is whole.
            if not (np.all(value == self.bumps) or np.all(value == self.bumps + 1)):
                raise AssertionError(f"Ref holds {value}, expected all {self.bumps} or +1")
            self.bumps = int(value[0])
            self.bump(self.ref, np.ones(8, np.float32))
            self.bumps += 1
            assert np.all(np.asarray(self.ref[...]) == self.bumps)

        try:
            ref_ok()
        except Exception as err:
            # A Ref whose update was running: its buffer went to the call, and the call's
            # results were dropped by the interrupt (as in JAX). Anything else is a problem.
            if phase == "Ref update" and ("deleted" in str(err) or "donated" in str(err)):
                self.refs_lost += 1
            else:
                problems.append(f"the Ref: {traceback.format_exc(limit=-6)}")
            self.ref = lamina.new_ref(jnp.zeros(8))
            self.bumps = 0
        attempt("the persistent cache", lambda: problems.extend(self.check_cache()))
        return problems

    def check_cache(self) -> list[str]:
        """Every entry whole (its header, length and checksum, for the key its name says) and
        loadable by XLA; no temporary file left behind."""
        root = Path(os.environ["LAMINA_COMPILATION_CACHE_DIR"])
        problems = [f"temporary file left: {p.name}" for p in root.glob(f"*{TEMP_SUFFIX}")]
        device = jax.devices()[0]
        for path in sorted(root.glob(f"*{ENTRY_SUFFIX}")):
            info = path.stat()
            seen = (path.name, info.st_size, info.st_mtime_ns)
            if seen in self.checked:
                continue
            key = lr.CacheKey(path.stem, (), path.stem[-64:])
            try:
                payload = decode_entry(key, path.read_bytes())
                options = xla_client.CompileOptions()
                device.client.deserialize_executable(
                    payload, xla_client.DeviceList((device,)), options
                )
            except CorruptEntry as err:
                problems.append(f"partial or corrupt entry {path.name}: {err}")
                continue
            except Exception as err:
                problems.append(f"entry {path.name} does not load: {err}")
                continue
            self.checked.add(seen)
        return problems


def execute(work: Work) -> None:
    """Runs of compiled programs: the new function and eager operations."""
    for _ in range(20):
        work.f(X)
        jnp.sin(X) * 2.0


def update_ref(work: Work) -> None:
    """Jitted calls updating a Ref in place (its buffer donated to the call). The first after
    the caches were emptied is traced, lowered and compiled (phases of their own) and run by
    Python; the others by C++ dispatch. An interrupt as any of them runs is a Ref update's."""
    for _ in range(4):
        work.bump(work.ref, np.ones(8, np.float32))
        work.bumps += 1


def _close(got: Any, want: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=2e-6)


class Target:
    """A profiling hook sending SIGINT at the `at`-th event inside `phase` (`at` None: counting
    only). The handler raises `KeyboardInterrupt` in the hook, which CPython raises in its
    place: at a function's start, or just after a call of a C function returns, as a real
    signal would be."""

    def __init__(self, phase: str, at: int | None) -> None:
        self.phase = phase
        self.at = at
        self.stack: list[str | None] = []
        self.count = 0
        self.fired = False

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.stack.append(phase_of(frame.f_code) or (self.stack[-1] if self.stack else None))
        inside = bool(self.stack) and self.stack[-1] == self.phase
        if event == "return" and self.stack:
            self.stack.pop()
        # Only where CPython 3.11 checks for signals: as a function starts ("call"; not a
        # generator's, which may be resumed by `close()`, unchecked) and as a call of a C
        # function returns ("c_return"); never as a function returns.
        if inside and (
            event == "c_return" or (event == "call" and not frame.f_code.co_flags & _RESUMABLE)
        ):
            if self.count == self.at:
                sys.setprofile(None)
                self.fired = True
                signal.raise_signal(signal.SIGINT)
            self.count += 1


_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def events_per_phase(work: Work) -> dict[str, int]:
    """How many profiled events an iteration has inside each phase (one iteration, measured)."""
    counts = {}
    for phase in PHASES:
        target = Target(phase, None)
        sys.setprofile(target)
        try:
            work.iterate()
        finally:
            sys.setprofile(None)
        counts[phase] = target.count
    return counts


def report(work: Work, phase: str, where: str, raised: str) -> None:
    lost = work.refs_lost
    problems = work.check(phase)
    if raised != "KeyboardInterrupt":
        problems.insert(0, f"the interrupt raised {raised}, not KeyboardInterrupt")
    record = {"phase": phase, "where": where, "problems": problems}
    print(json.dumps({**record, "ref lost": work.refs_lost > lost}), flush=True)


def main() -> None:
    mode, trials, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    work = Work()
    work.iterate()  # imports and first compilations out of the way
    counts = events_per_phase(work) if mode == "targeted" else {}
    print(json.dumps({"events": counts}), flush=True)
    for trial in range(trials):
        target = None
        if mode == "targeted":
            chosen = PHASES[trial % len(PHASES)]
            target = Target(chosen, rng.randrange(max(counts[chosen], 1)))
            sys.setprofile(target)
        try:
            if mode == "signal":
                print("ready", flush=True)
            while target is None or not target.fired:
                work.iterate()
            # Raised where Python drops exceptions (a finalizer, a weak reference's callback).
            phase, where, raised = "lost", "", "KeyboardInterrupt"
        except BaseException as err:
            sys.setprofile(None)
            phase = phase_of_traceback(err.__traceback__)
            where = innermost_frames(err.__traceback__)
            raised = type(err).__name__
            if not isinstance(err, KeyboardInterrupt):
                raised += f": {traceback.format_exc(limit=-6)}"
        # Checked once the exception is dropped, as by a program that catches the interrupt and
        # goes on: a `with` block interrupted as it enters or leaves is undone when the
        # exception's traceback releases its frames (CPython cannot promise more, bpo-29988).
        report(work, phase, where, raised)


if __name__ == "__main__":
    main()
