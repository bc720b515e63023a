"""Benchmark harness: Lamina against JAX, in one process, measurements interleaved.

A benchmark is one setup function registered with `@benchmark`. The harness calls it once per
side (`Side.LAMINA`, `Side.JAX`) and parameter combination; it returns the zero-argument callable
that is timed. Setup is never timed. Suites live in `tools/bench/suites/` and are found by
`discover`; `python -m tools.bench --list` shows them.

    @benchmark("trivial.tree_flatten", params={"leaves": (10,)}, unit="leaf", unit_count="leaves")
    def tree_flatten(side: Side, leaves: int) -> Timed:
        ...
"""

from tools.bench.registry import (
    REGISTRY,
    Benchmark,
    Case,
    Registry,
    Side,
    Timed,
    benchmark,
    discover,
)
from tools.bench.runner import CaseResult, SideResult, run_case
from tools.bench.timing import Clock, Elapsed, Measurement, measure

__all__ = [
    "REGISTRY",
    "Benchmark",
    "Case",
    "CaseResult",
    "Clock",
    "Elapsed",
    "Measurement",
    "Registry",
    "Side",
    "SideResult",
    "Timed",
    "benchmark",
    "discover",
    "measure",
    "run_case",
]
