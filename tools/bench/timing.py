"""One measurement: time a callable in a loop long enough to rise above timer noise.

The clock is injected (`time.perf_counter` by default) so the arithmetic is testable with a
fake one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

Clock = Callable[[], float]
"""Seconds since an arbitrary origin, e.g. `time.perf_counter`."""

MIN_TIME: Final = 0.02
"""A measurement lasts at least this long (seconds): far above perf_counter's resolution."""
DEFAULT_CLOCK: Final[Clock] = time.perf_counter


@dataclass(frozen=True, slots=True)
class Elapsed:
    """What a timed callable that measures itself returns: the seconds that count.

    For work the harness cannot time from outside without also timing what does not count,
    such as the time to first result of a fresh process, measured inside the child after its
    imports. When every call of a measurement returns one, their mean is the time per call.
    """

    seconds: float


@dataclass(frozen=True, slots=True)
class Measurement:
    per_call: float
    """Seconds per call."""
    loops: int
    """Calls in the timed loop."""


def measure(
    fn: Callable[[], object],
    *,
    loops: int = 1,
    min_time: float = MIN_TIME,
    clock: Clock = DEFAULT_CLOCK,
) -> Measurement:
    """Time `loops` calls of `fn`; while that takes under `min_time`, raise `loops` and retry.

    Calibrating in every measurement (starting from the previous one's count) keeps each
    measurement above `min_time` even when the machine speeds up between them.
    """
    if loops < 1:
        raise ValueError(f"loops must be at least 1, got {loops}")
    while True:
        reported, self_timed = 0.0, 0
        start = clock()
        for _ in range(loops):
            result = fn()
            if type(result) is Elapsed:
                reported += result.seconds
                self_timed += 1
        elapsed = clock() - start
        if elapsed >= min_time:
            return Measurement((reported if self_timed == loops else elapsed) / loops, loops)
        loops = _more_loops(loops, elapsed, min_time)


def _more_loops(loops: int, elapsed: float, min_time: float) -> int:
    if elapsed <= 0:
        return loops * 10
    # Aim 10% over the target so a slightly faster retry still clears it; grow at most 10x per
    # try so one anomalously fast run cannot make the next one take forever.
    wanted = math.ceil(loops * min_time * 1.1 / elapsed)
    return max(loops + 1, min(wanted, loops * 10))
