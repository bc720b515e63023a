"""Command line: `python -m tools.fuzz [--fast] [--area AREA] [--match TEXT] [--workers N]`."""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from collections.abc import Sequence

from tools.fuzz.cases import KNOWN_ISSUES, Case, all_cases, fast_cases
from tools.fuzz.classify import Category, Verdict, classify
from tools.fuzz.runner import DEFAULT_TIMEOUT, run_cases


def verdicts(cases: Sequence[Case], **kwargs: object) -> list[Verdict]:
    results = run_cases(cases, **kwargs)  # type: ignore[arg-type]
    return [
        classify(c, results["lamina"][c.name], results["jax"].get(c.name) if c.jax else None)
        for c in cases
    ]


def summary(found: Sequence[Verdict]) -> str:
    areas = sorted({v.case.area for v in found})
    counts = collections.Counter((v.case.area, v.category) for v in found)
    cats = list(Category)
    head = f"{'area':<8}" + "".join(f"{c.value:>15}" for c in cats) + f"{'total':>8}"
    rows = [head, "-" * len(head)]
    for area in [*areas, "all"]:
        n = {
            c: sum(k for (a, cc), k in counts.items() if cc is c and area in (a, "all"))
            for c in cats
        }
        rows.append(f"{area:<8}" + "".join(f"{n[c]:>15}" for c in cats) + f"{sum(n.values()):>8}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__)
    parser.add_argument("--fast", action="store_true", help="the fixed CI subset")
    parser.add_argument("--area", action="append", help="only these areas (repeatable)")
    parser.add_argument("--match", help="only cases whose name contains this text")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    parser.add_argument("--json", help="write every verdict to this file")
    parser.add_argument("--verbose", "-v", action="store_true", help="show the ok cases too")
    args = parser.parse_args(argv)
    cases = fast_cases() if args.fast else all_cases()
    if args.area:
        cases = [c for c in cases if c.area in args.area]
    if args.match:
        cases = [c for c in cases if args.match in c.name]
    if args.list:
        for c in cases:
            print(f"{c.name}\t{c.code!r}")
        print(f"{len(cases)} cases")
        return 0
    start = time.monotonic()
    print(f"fuzz: {len(cases)} cases ({len(KNOWN_ISSUES)} known issues)", flush=True)

    def progress(done: int, total: int) -> None:
        if done % 10 == 0 or done == total:
            print(f"  {done}/{total} batches, {time.monotonic() - start:.0f} s", flush=True)

    found = verdicts(cases, workers=args.workers, timeout=args.timeout, progress=progress)
    for v in found:
        if v.category is not Category.OK or args.verbose:
            print(f"{v.category.value:<15} {v.case.name}: {v.detail}")
            if v.category is not Category.OK:
                print(f"{'':<15}   {v.case.code!r}")
    for v in found:
        if v.category is Category.OK and v.case.name in KNOWN_ISSUES:
            print(f"fixed?          {v.case.name}: ok now, remove it from KNOWN_ISSUES")
    print(summary(found))
    failures = [v for v in found if v.category.failure]
    print(
        f"{len(found)} cases in {time.monotonic() - start:.0f} s: "
        f"{sum(v.category is Category.OK for v in found)} ok, "
        f"{sum(v.category.reported for v in found)} reported, {len(failures)} failures"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                [
                    {
                        "name": v.case.name,
                        "area": v.case.area,
                        "category": v.category.value,
                        "detail": v.detail,
                        "code": v.case.code,
                    }
                    for v in found
                ],
                fh,
                indent=1,
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
