"""`python -m tools.bench [NAME ...] [--repeats N] [--json PATH] [--list]`."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tools.bench.registry import Registry, discover
from tools.bench.report import Table, default_json_path, to_json, write_json
from tools.bench.runner import CaseResult, run_case
from tools.bench.timing import DEFAULT_CLOCK, MIN_TIME, Clock

DEFAULT_REPEATS = 11


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench",
        description="Benchmark Lamina against JAX in one process, measurements interleaved.",
    )
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="benchmark name, case id (`name[n=100]`), dotted prefix or glob; default: all",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"measurements per side and case; the median is reported (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--min-time",
        type=float,
        default=MIN_TIME,
        metavar="SECONDS",
        help=f"each measurement loops until it lasts this long (default {MIN_TIME})",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="PATH",
        help="where to write the results (default bench-results/<timestamp>.json)",
    )
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    return parser


def _list(registry: Registry, out: TextIO) -> None:
    for bench in registry:
        grid = " ".join(
            f"{key}={','.join(map(str, values))}" for key, values in bench.params.items()
        )
        unit = f"per {bench.unit}" if bench.unit else ""
        doc = f"(Lamina only) {bench.doc}" if bench.lamina_only else bench.doc
        out.write(f"{bench.name:<32} {grid:<28} {unit:<12} {doc}".rstrip() + "\n")


_DEVICE_FLAG = "--xla_force_host_platform_device_count"


def request_host_devices(count: int) -> None:
    """Ask XLA for `count` CPU devices when a selected benchmark needs more than one.

    Only the cases run decide, so single-device suites keep their usual backend. It must run
    before the backend starts: the harness imports neither side before the first case. A flag
    the caller set wins.
    """
    if count <= 1:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if _DEVICE_FLAG not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {_DEVICE_FLAG}={count}".strip()


def main(
    argv: Sequence[str] | None = None,
    *,
    registry: Registry | None = None,
    clock: Clock = DEFAULT_CLOCK,
    out: TextIO | None = None,
) -> int:
    """Run the CLI; `registry`, `clock` and `out` are for tests.

    Returns 0 when every selected case ran on both sides, 1 when any side failed.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    out = out or sys.stdout
    registry = registry if registry is not None else discover()
    if args.list:
        _list(registry, out)
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    try:
        cases = registry.select(args.names)
    except KeyError as err:
        parser.error(str(err.args[0]))
    if not cases:
        parser.error("no benchmarks are registered")
    request_host_devices(max(case.benchmark.devices for case in cases))
    table = Table(out, cases, args.repeats)
    table.header()
    results: list[CaseResult] = []
    for case in cases:
        table.start(case)
        result = run_case(
            case, repeats=args.repeats, min_time=args.min_time, clock=clock, progress=table.mark
        )
        table.finish(result)
        results.append(result)
    path: Path = args.json or default_json_path()
    write_json(path, to_json(results, repeats=args.repeats, min_time=args.min_time))
    out.write(f"\nwrote {path}\n")
    failed = [r.case.id for r in results if r.lamina.error is not None or r.jax.error is not None]
    if failed:
        out.write(f"{len(failed)} case(s) failed on a side: {', '.join(failed)}\n")
        return 1
    return 0
