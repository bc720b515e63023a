"""Many processes: `lamina.distributed` on jaxlib's coordination service, 2 processes × 4 CPU
devices on localhost, each running `distributed_child.py` (sharded `jit`, `shard_map` with
`psum`, global arrays, checked against NumPy)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import lamina
import lamina_runtime
from lamina_runtime import distributed

CHILD = Path(__file__).with_name("distributed_child.py")
PROCESSES = 2
TIMEOUT = 120.0
"""Seconds for both workers together: a hang (a worker waiting for a peer) fails the test."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port: int = s.getsockname()[1]
        return port


def worker_env(cache_dir: str) -> dict[str, str]:
    """The test process's environment with 4 CPU devices a process (the root conftest asks
    for 8 in pytest processes) and a compilation cache of their own."""
    env = dict(os.environ)
    flags = [
        f
        for f in env.get("XLA_FLAGS", "").split()
        if not f.startswith("--xla_force_host_platform_device_count")
    ]
    env["XLA_FLAGS"] = " ".join([*flags, "--xla_force_host_platform_device_count=4"])
    env["JAX_PLATFORMS"] = "cpu"
    env["LAMINA_COMPILATION_CACHE_DIR"] = env["LAMINA_CACHE_DIR"] = cache_dir
    return env


@pytest.mark.slow
def test_two_processes_run_sharded_programs_over_eight_devices() -> None:
    address = f"localhost:{free_port()}"
    with tempfile.TemporaryDirectory(prefix="lamina-distributed-") as cache_dir:
        env = worker_env(cache_dir)
        workers = [
            subprocess.Popen(
                [sys.executable, str(CHILD), address, str(PROCESSES), str(pid)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for pid in range(PROCESSES)
        ]
        deadline = time.monotonic() + TIMEOUT
        outputs: list[str] = []
        try:
            for worker in workers:
                left = max(deadline - time.monotonic(), 1.0)
                outputs.append(worker.communicate(timeout=left)[0])
        except subprocess.TimeoutExpired:
            for worker in workers:
                worker.kill()
            report = [w.communicate()[0] for w in workers]
            pytest.fail(f"the workers did not finish in {TIMEOUT:.0f} s:\n" + "\n".join(report))
    for pid, (worker, output) in enumerate(zip(workers, outputs, strict=True)):
        log = "\n".join(line for line in output.splitlines() if not line.startswith("[Gloo]"))
        assert worker.returncode == 0, f"process {pid} failed:\n{log}"
        assert f"process {pid}: ok" in output, log


def test_distributed_is_jax_distributed_and_starts_uninitialized() -> None:
    assert lamina.distributed.initialize is distributed.initialize
    assert lamina.distributed.shutdown is distributed.shutdown
    assert not lamina.distributed.is_initialized()
    lamina.distributed.shutdown()  # not connected: does nothing, as JAX's
    assert not lamina.distributed.is_initialized()
    assert lamina.process_index() == 0 and lamina.process_count() == 1
    assert lamina.local_devices(process_index=0) == lamina.devices()
    with pytest.raises(ValueError, match=r"^Unknown process_index 1$"):  # as JAX's
        lamina.local_devices(process_index=1)


def test_initialize_after_the_devices_were_touched_is_jax_error() -> None:
    lamina_runtime.devices()  # the backend exists from here on
    with pytest.raises(RuntimeError, match=r"must be called before any JAX calls"):
        lamina.distributed.initialize("localhost:1", num_processes=2, process_id=0)
    assert not lamina.distributed.is_initialized()
