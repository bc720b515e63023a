"""The `lamina` command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lamina", description="Lamina's command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("demo", help="run the showcase: what Lamina can do today")
    parser.parse_args(argv)
    from lamina._demo import run_demo  # only `demo` exists so far

    return run_demo()
