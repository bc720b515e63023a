"""Bootstrap: make a private virtual environment with nox and uv, then run nox in it.

Needs only Python 3.11 with its standard `venv` module and network access to PyPI. The
environment lives in `.nox-bootstrap/` and is reused; every argument is passed to nox.

    python3 ci/nox.py -s demo      # the showcase
    python3 ci/nox.py -t ci        # everything CI checks
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = ROOT / ".nox-bootstrap"
REQUIREMENTS = ["nox==2026.10.20", "uv==0.13.8"]
STAMP = ENV / "requirements.txt"


def main(argv: list[str]) -> int:
    if sys.version_info < (3, 11):  # noqa: UP036  (this script may run under an older python3)
        sys.exit(f"Lamina needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    python = ENV / "bin" / "python"
    wanted = "\n".join(REQUIREMENTS)
    if not python.exists() or not STAMP.exists() or STAMP.read_text() != wanted:
        print(f"ci/nox.py: creating {ENV.name}/ with {', '.join(REQUIREMENTS)}", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(ENV)
        subprocess.run([python, "-m", "pip", "install", "-q", *REQUIREMENTS], check=True)
        STAMP.write_text(wanted)
    env = dict(os.environ)
    # With Python's bytecode cache off (some machines' environments turn it off), every test
    # process compiles each module it imports from source, JAX's and the tests' included
    # (`import lamina, lamina.numpy`: 18 s against 6.5 s with the cache, on a loaded 2-core
    # machine), and a run starts hundreds of processes.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # nox's uv backend looks for uv beside nox; put the bootstrap's bin first so it finds it.
    env["PATH"] = f"{ENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    nox = [python, "-m", "nox", "-f", str(ROOT / "noxfile.py"), *argv]
    return subprocess.call(nox, env=env, cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
