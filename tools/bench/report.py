"""The results table (printed as the run goes) and the JSON document.

The JSON document's schema, version 1:

    {"schema": 1, "created": ISO-8601 UTC, "commit": git HEAD or null,
     "python": "3.11.7", "platform": "...", "versions": {distribution: version},
     "settings": {"repeats": int, "min_time_s": float},
     "results": [{"id": "name[k=v]", "name": str, "params": {k: v},
                  "unit": str | null, "unit_count": int | null, "ratio": float | null,
                  "lamina": SIDE, "jax": SIDE | null}]}
    SIDE = {"median_s": float | null, "per_unit_s": float | null, "times_s": [float],
            "loops": int, "error": str | null}

`jax` is null for a Lamina-only benchmark (one JAX has no counterpart to).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import platform
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from tools.bench.registry import Case, Side
from tools.bench.runner import CaseResult
from tools.workspace import ROOT

SCHEMA_VERSION: Final = 1
VERSIONED: Final = ("lamina", "lamina-core", "jax", "jaxlib", "numpy", "optree")
"""Distributions whose versions go into the JSON; read from metadata, nothing imported."""


def format_time(seconds: float | None) -> str:
    """`1.23 µs`-style text with three significant digits; `-` for a missing figure."""
    if seconds is None:
        return "-"
    value, suffix = seconds * 1e9, "ns"
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= scale:
            value, suffix = seconds / scale, name
            break
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:.{decimals}f} {suffix}"


def format_ratio(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


class Table:
    """A fixed-width table; a row is written in two parts so its progress shows as it runs."""

    def __init__(self, out: TextIO, cases: Sequence[Case], repeats: int) -> None:
        self._out = out
        self._id_width = max([len("benchmark"), *(len(case.id) for case in cases)])
        # One mark per measurement: `l` and `j` interleaved.
        self._runs_width = max(len("runs"), 2 * repeats)
        self._marks = 0

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def header(self) -> None:
        self._write(
            f"{'benchmark':<{self._id_width}}  {'runs':<{self._runs_width}}  "
            f"{'lamina':>9}  {'jax':>9}  {'lamina/jax':>10}  {'lamina/unit':>15}  "
            f"{'jax/unit':>15}\n"
        )

    def start(self, case: Case) -> None:
        self._marks = 0
        self._write(f"{case.id:<{self._id_width}}  ")

    def mark(self, side: Side, index: int) -> None:
        """Progress: one letter per finished measurement."""
        self._marks += 1
        self._write("l" if side is Side.LAMINA else "j")

    def finish(self, result: CaseResult) -> None:
        unit = result.case.benchmark.unit
        per_unit = [
            "-" if figure is None else f"{format_time(figure)}/{unit}"
            for figure in (result.per_unit(Side.LAMINA), result.per_unit(Side.JAX))
        ]
        self._write(
            " "
            * (self._runs_width - self._marks)
            + f"  {format_time(result.lamina.median):>9}  {format_time(result.jax.median):>9}"
            f"  {format_ratio(result.ratio):>10}  {per_unit[0]:>15}  {per_unit[1]:>15}\n"
        )
        for side in Side:
            error = result.side(side).error
            if error is not None:
                self._write(f"    {side.value} failed: {error}\n")


def _side_json(result: CaseResult, side: Side) -> dict[str, Any]:
    measured = result.side(side)
    return {
        "median_s": measured.median,
        "per_unit_s": result.per_unit(side),
        "times_s": list(measured.times),
        "loops": measured.loops,
        "error": measured.error,
    }


def _commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip() or None


def _versions() -> dict[str, str]:
    found: dict[str, str] = {}
    for dist in VERSIONED:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def to_json(
    results: Sequence[CaseResult],
    *,
    repeats: int,
    min_time: float,
    created: datetime.datetime | None = None,
) -> dict[str, Any]:
    """The JSON document for a run (schema in this module's docstring)."""
    when = created or datetime.datetime.now(datetime.UTC)
    return {
        "schema": SCHEMA_VERSION,
        "created": when.isoformat(timespec="seconds"),
        "commit": _commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": _versions(),
        "settings": {"repeats": repeats, "min_time_s": min_time},
        "results": [
            {
                "id": result.case.id,
                "name": result.case.benchmark.name,
                "params": dict(result.case.params),
                "unit": result.case.benchmark.unit,
                "unit_count": result.case.units,
                "ratio": result.ratio,
                "lamina": _side_json(result, Side.LAMINA),
                "jax": (
                    _side_json(result, Side.JAX)
                    if Side.JAX in result.case.benchmark.sides
                    else None
                ),
            }
            for result in results
        ],
    }


def default_json_path(now: datetime.datetime | None = None) -> Path:
    """`bench-results/<UTC timestamp>.json` at the repository root (git-ignored)."""
    when = now or datetime.datetime.now(datetime.UTC)
    return ROOT / "bench-results" / f"{when:%Y%m%d-%H%M%S}.json"


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
