"""`python -m tools.jaxpr_corpus [CORPUS ...] [--per-table N] [--json PATH] [-v]`.

Exits 1 when a program fails other than on the forms the types change is adding ("pending:
types"), 0 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import lamina
from tools.jaxpr_corpus import CORPORA, print_report, run, total

DEVICES = 8
"""The sharded programs run on 8 devices, as their tests do."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.jaxpr_corpus",
        description="Print every program of the jaxpr test corpora, read it back, compare.",
    )
    parser.add_argument(
        "corpora", nargs="*", choices=[[], *CORPORA], metavar="CORPUS",
        help=f"among {', '.join(CORPORA)} (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--per-table", type=int, metavar="N",
        help="only the first N programs of each table and transformation",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the counts here")
    parser.add_argument(
        "-v", "--verbose", action="store_true",
        help="also list the table entries that do not trace",
    )  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Before the backend starts; a process that started it keeps its devices.
    with contextlib.suppress(RuntimeError):
        lamina.config.update("jax_num_cpu_devices", DEVICES)
    counts = run(args.corpora or None, args.per_table)
    print_report(counts, sys.stdout, args.verbose)
    if args.json is not None:
        args.json.write_text(json.dumps([c.as_dict() for c in counts], indent=1) + "\n")
    return 1 if total(counts).failed else 0
