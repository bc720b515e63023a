"""Shared fixtures for lamina-mlir's tests.

The `oracle` fixture gives tests real JAX 0.10.2 to compare against, and `pjrt` compiles and
runs Lamina's modules on JAX's CPU client (tests only: lamina-mlir itself never runs code).
JAX is imported lazily, so the non-oracle tests run where JAX is not installed, and with
simplified constants, the mode Lamina lowers by default.
"""

from __future__ import annotations

import contextlib
import io
import os
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

from lamina_core.testing import Oracle
from lamina_mlir import LoweredModule

# Must precede the first `import jax` of the process.
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


FileCheck = Callable[[str, str], None]
"""`filecheck(text, checks)`: `checks` are FileCheck `// CHECK:` lines that `text` must match."""


@pytest.fixture
def filecheck(tmp_path: os.PathLike[str]) -> FileCheck:
    def check(text: str, checks: str) -> None:
        check_file = os.path.join(tmp_path, "checks.mlir")
        input_file = os.path.join(tmp_path, "input.mlir")
        with open(check_file, "w") as f:
            f.write(textwrap.dedent(checks))
        with open(input_file, "w") as f:
            f.write(text)
        report = io.StringIO()
        with contextlib.redirect_stderr(report):
            code = Matcher.from_opts(Options(check_file, input_file)).run()
        assert code == 0, f"FileCheck failed:\n{report.getvalue()}\n--- input ---\n{text}"

    return check


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    return Oracle(jax, jnp, lax)


@dataclass(frozen=True)
class Pjrt:
    """Compiles module text with JAX's PJRT CPU client and runs it on NumPy inputs."""

    jax: Any

    def run(self, lowered: LoweredModule, *args: Any) -> list[np.ndarray]:
        """Run `lowered` with its const args first, as the runtime will."""
        from jaxlib import xla_client as xc

        device = self.jax.devices("cpu")[0]
        options = xc.CompileOptions()
        options.num_replicas = 1
        options.num_partitions = 1
        options.executable_build_options.use_spmd_partitioning = True
        executable = device.client.compile_and_load(
            lowered.as_text(), xc.DeviceList((device,)), options
        )
        inputs = [*lowered.const_args.values, *args]
        buffers = [
            self.jax.device_put(np.asarray(x, dtype=getattr(a, "dtype", None)), device)
            for x, a in zip(inputs, [*lowered.const_args.avals, *lowered.in_avals], strict=True)
        ]
        results = executable.execute_sharded(buffers).disassemble_into_single_device_arrays()
        return [np.asarray(r[0]) for r in results]

    @staticmethod
    def assert_close(got: Sequence[Any], want: Sequence[Any]) -> None:
        """Equal shapes and dtypes, and values within a few ulps (exact for integers)."""
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
            if w.dtype.kind in "biu":
                np.testing.assert_array_equal(g, w)
            else:
                tol = 2e-2 if w.dtype.itemsize <= 2 else 1e-5
                np.testing.assert_allclose(
                    g.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                    w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
                    rtol=tol,
                    atol=tol,
                )


@pytest.fixture(scope="session")
def pjrt() -> Pjrt:
    return Pjrt(pytest.importorskip("jax"))
