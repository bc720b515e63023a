"""Programs on 8 CPU devices (XLA's SPMD partitioner), checked against JAX: values, the
shardings of outputs, and errors. The cases are in `multidevice_cases.py`; they need 8
devices, which jaxlib gives only when XLA_FLAGS is set before its backend starts, so unless
this process already has them they run in a fresh pytest process with the flag.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FLAG = "--xla_force_host_platform_device_count=8"
CASES = Path(__file__).with_name("multidevice_cases.py")


@pytest.mark.oracle
def test_multidevice_cases_in_a_process_with_8_devices() -> None:
    pytest.importorskip("jax")
    env = {
        **os.environ,
        "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} {FLAG}".strip(),
        # JAX in simplified constants mode, the one Lamina prints (a sharded constant stays
        # a sharded argument of the module)
        "JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS": "True",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(CASES), "-q", "-p", "no:cacheprovider", "-p",
         "no:xdist", "-x"],
        capture_output=True, text=True, env=env, timeout=900, cwd=CASES.parent,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout
