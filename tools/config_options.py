"""The options of `jax.config` and what Lamina does with each, as a Markdown page.

`python -m tools.config_options` prints the page; `--write PATH` writes it (the docs carry it
as `docs/config-options.md`, and a test keeps that page equal to what this tool writes). Each
option is implemented (with JAX's meaning), accepted without effect, or refused (only its
default is accepted): `lamina_core.config.Support` says what each means, and
`lamina_runtime.jax_options` gives the reason for the last two.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_HEADER = """\
# Configuration options

Every option of JAX 0.10.2's `jax.config` exists in `lamina.config`, under the same name, with
the same default (except where noted below), environment variable and value checks. What setting
one does depends on whether Lamina implements it:

- **implemented**: it has JAX's meaning;
- **accepted**: it tunes something Lamina does not have or does differently (XLA's GPU and TPU
  passes, Pallas, jax2tf, JAX's own logging), so its value is checked, recorded and read back,
  and changes nothing;
- **refused**: another value would change results, jaxprs or errors in a way Lamina does not
  implement, so setting anything but the default raises `NotImplementedError` naming the
  option. Nothing that would change what a program computes is silently ignored.

This page is written by `python -m tools.config_options --write docs/config-options.md`; a test
keeps it equal to the code.

| option | default | Lamina | why |
|---|---|---|---|
"""


def render() -> str:
    """The page, from the options the layers define."""
    import lamina  # noqa: F401  (every layer's options are defined once the umbrella is imported)
    from lamina_core.config import config
    from lamina_runtime import jax_options

    rows = []
    for name, option in sorted(config.options().items()):
        default = f"`{option.default!r}`".replace("|", "\\|")
        reason = jax_options.why(name).replace("|", "\\|")
        rows.append(f"| `{name}` | {default} | {option.support.value} | {reason} |\n")
    return _HEADER + "".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.config_options", description=__doc__)
    parser.add_argument("--write", type=Path, help="write the page to this file")
    args = parser.parse_args(argv)
    page = render()
    if args.write is None:
        sys.stdout.write(page)
    else:
        args.write.write_text(page)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
