"""`jax_num_cpu_devices`: set before the backend starts, it decides how many CPU devices there
are (by `config.update` or the environment); afterwards only the same value is accepted, with
JAX's RuntimeError. Each case runs in a fresh process: this one's backend has started."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | env
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_update_before_the_backend_starts_sets_the_device_count() -> None:
    done = _run(
        """
        from lamina_core.config._config import config
        from lamina_runtime import environment
        config.update("jax_num_cpu_devices", 4)
        print(environment.device_count(), config.jax_num_cpu_devices)
        config.update("jax_num_cpu_devices", 4)  # the same value: accepted
        try:
            config.update("jax_num_cpu_devices", 2)
        except RuntimeError as err:
            print(err)
        print(config.jax_num_cpu_devices)
        """
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "4 4"
    assert lines[1] == (
        "jax_num_cpu_devices config should be updated before backends are initialized i.e. "
        "before any JAX operation is executed. You should initialize this config immediately "
        "after `import jax`."
    )
    assert lines[2] == "4"  # the refused value did not take effect


def test_the_environment_sets_the_device_count() -> None:
    done = _run(
        """
        from lamina_runtime import environment
        print(environment.device_count())
        """,
        LAMINA_NUM_CPU_DEVICES="3",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"


def test_the_option_takes_an_int() -> None:
    from lamina_core.config._config import config
    from lamina_runtime import environment

    assert environment.num_cpu_devices.name == "jax_num_cpu_devices"
    with pytest.raises(ValueError, match="new int config value must be None or of type int"):
        config.update("jax_num_cpu_devices", "4")
