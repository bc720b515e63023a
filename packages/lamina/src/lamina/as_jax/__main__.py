"""`python -m lamina.as_jax (-m MODULE | SCRIPT) [ARGS...]`: run a program written for JAX on
Lamina. The program sees `sys.argv` and `sys.path[0]` as `python SCRIPT` or `python -m MODULE`
would set them."""

from __future__ import annotations

import os
import runpy
import sys

from lamina.as_jax import install

USAGE = """usage: python -m lamina.as_jax SCRIPT [ARGS...]
       python -m lamina.as_jax -m MODULE [ARGS...]

Runs SCRIPT (or MODULE, as `python -m` would) with `import jax` resolving to Lamina: `jax` is
`lamina` and `jax.X` is `lamina.X`; a `jax.X` that Lamina lacks raises ModuleNotFoundError."""


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        raise SystemExit(0 if argv else 2)
    if argv[0] == "-m":
        if len(argv) < 2:
            print(f"{USAGE}\n\nerror: -m needs a module name", file=sys.stderr)
            raise SystemExit(2)
        module, args = argv[1], argv[2:]
        if module == "pytest" and "lamina.as_jax" not in args:
            # pytest hands the plugins named with -p to the worker processes of pytest-xdist,
            # which are new interpreters: so `-n 2` runs the tests on Lamina too.
            args = ["-p", "lamina.as_jax", *args]
        install()
        sys.argv = [module, *args]  # run_module puts the module's file in sys.argv[0]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        return
    if argv[0].startswith("-"):
        print(f"{USAGE}\n\nerror: unknown option {argv[0]}", file=sys.stderr)
        raise SystemExit(2)
    script, args = argv[0], argv[1:]
    install()
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python SCRIPT` sets it
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
