"""Run one case: set up both sides, then measure them interleaved and take medians.

Measurements alternate lamina, jax, lamina, jax, ... so that slow drifts of the machine (thermal
state, other processes) hit both sides alike. A side whose setup or call raises is recorded as
failed and the other side still runs, so a feature Lamina lacks still gives JAX's baseline. A
Lamina-only benchmark measures one side; the other's result is empty (no times, no error).
"""

from __future__ import annotations

import gc
import statistics
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from tools.bench.registry import Case, Side, Timed
from tools.bench.timing import DEFAULT_CLOCK, MIN_TIME, Clock, measure

Progress = Callable[[Side, int], None]
"""Called after each measurement with the side and the repeat index (from 0)."""


@dataclass(frozen=True, slots=True)
class SideResult:
    """One side's measurements of one case."""

    times: tuple[float, ...]
    """Seconds per call, one per measurement, in the order taken."""
    loops: int
    """Calls per measurement in the last one; 0 for a side the benchmark does not have."""
    error: str | None = None
    """`Type: message` when setup or a call raised; the measurements stop there."""

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times and self.error is None else None


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: Case
    lamina: SideResult
    jax: SideResult

    def side(self, side: Side) -> SideResult:
        return self.lamina if side is Side.LAMINA else self.jax

    @property
    def ratio(self) -> float | None:
        """Lamina's median over JAX's: below 1 means Lamina is faster."""
        lamina, jax = self.lamina.median, self.jax.median
        if lamina is None or jax is None or jax == 0:
            return None
        return lamina / jax

    def per_unit(self, side: Side) -> float | None:
        """The side's median divided by the case's unit count (seconds per unit)."""
        median, units = self.side(side).median, self.case.units
        return None if median is None or units is None else median / units


def _describe(err: BaseException) -> str:
    return "".join(traceback.format_exception_only(err)).strip()


def run_case(
    case: Case,
    *,
    repeats: int,
    min_time: float = MIN_TIME,
    clock: Clock = DEFAULT_CLOCK,
    progress: Progress | None = None,
) -> CaseResult:
    """Set up both sides (untimed, one warm-up call each), then take `repeats` measurements
    per side, interleaved."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    sides = case.benchmark.sides
    fns: dict[Side, Timed] = {}
    errors: dict[Side, str] = {}
    for side in sides:
        try:
            fn = case.prepare(side)
            fn()  # warm-up: first-call caches and imports belong to setup, not to the timing
            fns[side] = fn
        except Exception as err:
            errors[side] = f"setup: {_describe(err)}"
    times: dict[Side, list[float]] = {side: [] for side in Side}
    loops = dict.fromkeys(Side, 1)
    for index in range(repeats):
        for side in sides:
            if side in errors:
                continue
            # Collect now so one side's garbage is not collected during the other's timing.
            gc.collect()
            try:
                measured = measure(fns[side], loops=loops[side], min_time=min_time, clock=clock)
            except Exception as err:
                errors[side] = _describe(err)
                continue
            times[side].append(measured.per_call)
            loops[side] = measured.loops
            if progress is not None:
                progress(side, index)
    results = {
        side: SideResult(tuple(times[side]), loops[side] if side in sides else 0, errors.get(side))
        for side in Side
    }
    return CaseResult(case, results[Side.LAMINA], results[Side.JAX])
