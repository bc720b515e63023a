"""Getting a suite's tests, installing what they need, and running them with pytest."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Final

from tools.downstream.suites import Suite

PINNED: Final = ("jax", "jaxlib", "numpy")
"""Never changed by installing a suite's requirements: Lamina is tested against these."""

ENTRIES: Final = {
    "jax": ["-m", "pytest"],
    "plugin": ["-m", "pytest", "-p", "lamina.as_jax"],
    "module": ["-m", "lamina.as_jax", "-m", "pytest"],
}
"""How each run starts pytest: as shipped (JAX), or with `jax` meaning Lamina through the
pytest plugin or `python -m lamina.as_jax -m pytest` (the two must count the same)."""


def fetch(suite: Suite, workdir: Path) -> Path:
    """The suite's unpacked source distribution (its tests are there, not in the wheel);
    downloaded with pip into `workdir` once."""
    folder = workdir / suite.folder
    if (folder / suite.name).is_dir():
        return folder
    workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "--dest", str(workdir), suite.requirement],
        check=True,
    )  # fmt: skip
    with tarfile.open(workdir / f"{suite.folder}.tar.gz") as archive:
        archive.extractall(workdir, filter="data")
    return folder


def install(suite: Suite, workdir: Path) -> None:
    """The library and its tests' requirements, into this interpreter's environment, with
    `PINNED` held at their installed versions."""
    constraints = workdir / "constraints.txt"
    workdir.mkdir(parents=True, exist_ok=True)
    constraints.write_text(
        "".join(f"{name}=={importlib.metadata.version(name)}\n" for name in PINNED)
    )
    requirements = [suite.requirement, *suite.test_requirements]
    uv = shutil.which("uv")
    command = (
        [uv, "pip", "install", "--python", sys.executable]
        if uv
        else [sys.executable, "-m", "pip", "install"]
    )
    subprocess.run([*command, "-c", str(constraints), *requirements], check=True)


def run(
    suite: Suite,
    folder: Path,
    entry: str,
    junit: Path,
    timeout: float,
    pytest_args: list[str],
) -> tuple[bool, str]:
    """Run the suite's tests once, results to `junit`, pytest's output to `junit` with the
    suffix `.log`. Returns whether it finished (not killed by the timeout), and pytest's last
    line."""
    environ = dict(os.environ)
    environ.pop("PYTEST_ADDOPTS", None)
    log = junit.with_suffix(".log")
    junit.unlink(missing_ok=True)
    command = [
        sys.executable, *ENTRIES[entry], "-q", "-p", "no:cacheprovider", "-o", "addopts=",
        "--continue-on-collection-errors", f"--junitxml={junit}", "--rootdir", str(folder),
        *pytest_args, suite.name,
    ]  # fmt: skip
    start = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(
            command, cwd=folder, env=environ, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return False, f"killed after {timeout:.0f} s"
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    last = lines[-1].strip("= ") if lines else "(no output)"
    return junit.exists(), f"{last} ({time.monotonic() - start:.0f} s wall)"
