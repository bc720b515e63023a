"""Run cases in child processes, batched, with a per-case timeout.

Cases are grouped by side, isolation and environment. A batch is one child fed many cases; it
reports one JSON line per case. When the child dies (a signal, an exit) or a case takes longer
than the timeout, the case it was running gets that outcome (`abort`, `exit`, `hang`) and the
rest of the batch continues in a fresh child. Cases marked `isolate` get a child each.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.fuzz.cases import Case

CHILD = Path(__file__).with_name("child.py")
SIDES = ("lamina", "jax")
DEFAULT_TIMEOUT = 30.0
"""Seconds one case may take (compilations included) before it counts as a hang."""
STARTUP = 30.0
"""Extra seconds for a child's imports, on top of the first case's timeout."""
BATCH = 40


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one side did with one case."""

    status: str
    """`ok`, `raise`, `abort` (killed by a signal), `exit` (died otherwise), `hang`."""
    leaves: tuple[dict[str, Any], ...] = ()
    type: str = ""
    message: str = ""
    seconds: float = 0.0
    mro: tuple[str, ...] = ()
    """The exception's class and its bases, by name."""

    @classmethod
    def from_record(cls, record: dict[str, Any], seconds: float) -> Outcome:
        return cls(
            status=str(record["status"]),
            leaves=tuple(record.get("leaves", ())),
            type=str(record.get("type", "")),
            message=str(record.get("message", "")),
            seconds=seconds,
            mro=tuple(record.get("mro", ())),
        )


@dataclass
class _Batch:
    side: str
    cases: list[Case]
    env: dict[str, str] = field(default_factory=dict)


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")
    env.update(extra)
    return env


def _reader(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _run_batch(batch: _Batch, timeout: float, cwd: str) -> dict[str, Outcome]:
    """Run the batch's cases, restarting the child after each death or hang."""
    results: dict[str, Outcome] = {}
    pending = list(batch.cases)
    while pending:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), batch.side],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_child_env(batch.env),
            cwd=cwd,  # a scratch directory: relative paths of cases land there
            start_new_session=True,  # the child and anything it starts are one group to kill
        )
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True)
        reader.start()
        try:
            proc.stdin.write(json.dumps([{"name": c.name, "code": c.code} for c in pending]))
            proc.stdin.close()
        except BrokenPipeError:
            pass
        budget = timeout + STARTUP
        started = time.monotonic()
        done = 0
        hung = False
        while done < len(pending):
            case = pending[done]
            try:
                line = lines.get(timeout=max(0.0, started + budget - time.monotonic()))
            except queue.Empty:
                hung = True
                break
            if line is None:  # the child's stdout closed: it died
                break
            now = time.monotonic()
            record = json.loads(line)
            assert record["name"] == case.name, (record["name"], case.name)
            results[case.name] = Outcome.from_record(record, now - started)
            done += 1
            started, budget = now, timeout
        if done < len(pending):
            case = pending[done]
            if hung:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                results[case.name] = Outcome("hang", seconds=time.monotonic() - started)
            else:
                code = proc.wait()
                if code < 0:
                    name = signal.Signals(-code).name
                    results[case.name] = Outcome("abort", type=name, message=f"signal {name}")
                else:
                    results[case.name] = Outcome("exit", type="exit", message=f"exit code {code}")
            done += 1
        else:
            proc.wait()
        reader.join(timeout=5)
        pending = pending[done:]
    return results


def _batches(cases: Sequence[Case], sides: Iterable[str], batch_size: int) -> list[_Batch]:
    out: list[_Batch] = []
    for side in sides:
        mine = [c for c in cases if side == "lamina" or c.jax]
        shared: dict[tuple[tuple[str, str], ...], list[Case]] = {}
        for case in mine:
            if case.isolate:
                out.append(_Batch(side, [case], dict(case.env)))
            else:
                shared.setdefault(tuple(sorted(case.env.items())), []).append(case)
        for env, group in shared.items():
            out.extend(
                _Batch(side, group[i : i + batch_size], dict(env))
                for i in range(0, len(group), batch_size)
            )
    # Long batches first: the pool ends together.
    out.sort(key=lambda b: -len(b.cases))
    return out


Progress = Callable[[int, int], None]


def run_cases(
    cases: Sequence[Case],
    *,
    workers: int = 2,
    timeout: float = DEFAULT_TIMEOUT,
    batch_size: int = BATCH,
    sides: Sequence[str] = SIDES,
    progress: Progress | None = None,
) -> dict[str, dict[str, Outcome]]:
    """Every case's outcome per side: `result[side][case.name]`. JAX runs only cases with
    `case.jax`."""
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError("case names must be unique")
    batches = _batches(cases, sides, batch_size)
    results: dict[str, dict[str, Outcome]] = {side: {} for side in sides}
    total, finished = len(batches), 0
    with (
        tempfile.TemporaryDirectory(prefix="lamina-fuzz-") as scratch,
        ThreadPoolExecutor(max_workers=max(1, workers)) as pool,
    ):
        futures = [(b, pool.submit(_run_batch, b, timeout, scratch)) for b in batches]
        for batch, future in futures:
            results[batch.side].update(future.result())
            finished += 1
            if progress is not None:
                progress(finished, total)
    return results
