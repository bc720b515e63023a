"""The reader over the project's own jaxpr test corpora (issue 40): every program of the
golden, control-flow, autodiff, vmap, random, sharding, Refs and hijax tables, and the
transformations their tests trace, printed, read back by `lamina_core.ir.parse` and checked:
the text round trip exact, the JSON round trip exact (once the IR has `to_json`), and the
program read back computing the original's values.

`python -m tools.jaxpr_corpus` prints the counts per corpus and lists the failures; the
tables are imported from their test modules, never copied here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from tools.jaxpr_corpus import _corpora_core as core
from tools.jaxpr_corpus import _corpora_upper as upper
from tools.jaxpr_corpus._check import KNOWN, PENDING_TYPES, Outcome, Result, check, same_bits
from tools.jaxpr_corpus._programs import NeedsDevices, Program, Traced
from tools.jaxpr_corpus._report import Counts, print_report, total

CORPORA: Final[dict[str, tuple[Callable[[], list[Program]], ...]]] = {
    "golden": (core.golden,),
    "control-flow": (core.control_flow, upper.control_flow),
    "autodiff": (core.autodiff,),
    "vmap": (core.vmap,),
    "random": (core.random,),
    "sharding": (core.shard_map, upper.sharding),
    "refs": (upper.refs,),
    "hijax": (upper.hijax,),
}
"""Each corpus's gatherers: its programs, in table order."""


def sample(programs: Sequence[Program], per_table: int) -> list[Program]:
    """The first `per_table` programs of each table and transformation."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for p in programs:
        key = (p.table, p.transform)
        if seen.get(key, 0) < per_table:
            out.append(p)
            seen[key] = seen.get(key, 0) + 1
    return out


def run_corpus(name: str, per_table: int | None = None) -> Counts:
    counts = Counts(name)
    start = time.perf_counter()
    programs: list[Program] = []
    for gather in CORPORA[name]:
        try:
            programs += gather()
        except NeedsDevices as e:
            counts.skipped = str(e)
    if per_table is not None:
        programs = sample(programs, per_table)
    for p in programs:
        counts.add(check(p))
    counts.seconds = time.perf_counter() - start
    return counts


def run(names: Iterable[str] | None = None, per_table: int | None = None) -> list[Counts]:
    """Check every program of the named corpora (default: all); with `per_table`, only the
    first programs of each table and transformation."""
    return [run_corpus(n, per_table) for n in (names or CORPORA)]


__all__ = [
    "CORPORA",
    "KNOWN",
    "PENDING_TYPES",
    "Counts",
    "NeedsDevices",
    "Outcome",
    "Program",
    "Result",
    "Traced",
    "check",
    "print_report",
    "run",
    "run_corpus",
    "same_bits",
    "sample",
    "total",
]
