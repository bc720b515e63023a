"""Command line: `python -m tools.downstream [--suite NAME] [--install] [--entry plugin|module]`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from tools.downstream.report import Report, compare, parse_junit
from tools.downstream.runner import fetch, install, run
from tools.downstream.suites import SUITES
from tools.workspace import ROOT


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.downstream", description=__doc__)
    parser.add_argument(
        "--suite", action="append", choices=sorted(SUITES), help="only these (repeatable)"
    )
    parser.add_argument(
        "--install", action="store_true", help="pip-install each library and its test needs"
    )
    parser.add_argument(
        "--entry",
        choices=("plugin", "module"),
        default="plugin",
        help="Lamina's run: `pytest -p lamina.as_jax` (plugin) or "
        "`python -m lamina.as_jax -m pytest` (module)",
    )
    parser.add_argument("--workdir", type=Path, default=ROOT / ".nox" / "downstream")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    parser.add_argument(
        "--reuse-jax", action="store_true", help="keep JAX's results of an earlier run if any"
    )
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        help="passed to both runs, e.g. --pytest-arg=-k=adam (repeatable)",
    )
    parser.add_argument("--top", type=int, default=25, help="causes shown per suite")
    parser.add_argument("--json", type=Path, help="write the reports here")
    args = parser.parse_args(argv)
    workdir: Path = args.workdir.resolve()
    reports: list[Report] = []
    incomplete = False
    for name in args.suite or sorted(SUITES):
        suite = SUITES[name]
        folder = fetch(suite, workdir)
        if args.install:
            install(suite, workdir)
        runs = {}
        for side, entry in (("jax", "jax"), ("lamina", args.entry)):
            junit = workdir / f"{name}-{side}.xml"
            if side == "jax" and args.reuse_jax and junit.exists():
                print(f"{name} on jax: results of an earlier run ({junit})", flush=True)
            else:
                print(f"{name} on {side}: running ({entry})...", flush=True)
                finished, last = run(suite, folder, entry, junit, args.timeout, args.pytest_arg)
                print(f"{name} on {side}: {last}", flush=True)
                if not finished:
                    incomplete = True
                    break
            runs[side] = parse_junit(junit)
        else:
            reports.append(compare(name, runs["jax"], runs["lamina"]))
    print()
    for report in reports:
        print(report.render(args.top))
        print()
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=1))
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
