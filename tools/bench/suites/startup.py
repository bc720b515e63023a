"""Start-up (issue 39): a fresh process importing the library and making its first array.

`startup.import_ones` times whole processes from outside, imports included:
`import lamina, lamina.numpy as jnp; jnp.ones(3)` against the same with `jax`. Children write
bytecode as a user's installed packages have it (the harness's own environment may forbid it)
and run once untimed first. `cache=warm` gives Lamina's child the persistent compilation cache a
second run of a program finds (Lamina's default: on); `cache=cold` an empty one each time. JAX's
persistent cache is off by default, so its side is the same process in both cases.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from tools.bench.registry import Side, Timed, benchmark

PROGRAM = "import {api}, {api}.numpy as jnp; jnp.ones(3).block_until_ready()"


def _run(side: Side, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM.format(api=side.value)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{side.value} child failed:\n{done.stderr[-2000:]}")


def _environment(cache_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["LAMINA_CACHE_DIR"] = str(cache_dir)
    return env


@benchmark("startup.import_ones", params={"cache": ("warm", "cold")})
def import_ones(side: Side, cache: str) -> Timed:
    """Fresh process: import the library and its numpy, make `ones(3)`; wall time."""
    root = Path(tempfile.mkdtemp(prefix=f"lamina-bench-startup-{side.value}-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    warm = _environment(root / "warm")
    _run(side, warm)  # bytecode written, the warm cache filled (untimed)
    if cache == "warm":
        return lambda: _run(side, warm)
    counter = iter(range(1_000_000))

    def cold() -> None:
        directory = root / f"cold{next(counter)}"
        try:
            _run(side, _environment(directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    run: Callable[[], None] = cold
    return run
