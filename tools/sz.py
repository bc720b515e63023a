"""Module-size report over `packages/*/src`: `python -m tools.sz [--top N]`.

Counts lines of code: lines that are neither blank nor comment-only (docstrings count). Lists
the largest modules, warns about each above the soft cap (500, near the budget) and exits 1 when any
module is above STYLE.md's budget (600): split it by concept before it becomes a god module.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from tools.workspace import ROOT, distributions

SOFT_CAP: Final = 500
HARD_LIMIT: Final = 600
DEFAULT_TOP: Final = 15


@dataclass(frozen=True, slots=True)
class ModuleSize:
    path: Path
    """Relative to the repository root when it is under it."""
    lines: int
    """Lines of code: not blank, not only a comment."""


def count_lines(text: str) -> int:
    """Lines that are neither blank nor comment-only."""
    return sum(
        1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )


def _shown(path: Path) -> Path:
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def scan(src_dirs: Iterable[Path]) -> list[ModuleSize]:
    """Every `.py` file under `src_dirs`, largest first (ties by path)."""
    sizes = [
        ModuleSize(_shown(path), count_lines(path.read_text(encoding="utf-8")))
        for src in src_dirs
        for path in src.rglob("*.py")
    ]
    return sorted(sizes, key=lambda size: (-size.lines, str(size.path)))


def report(sizes: Sequence[ModuleSize], out: TextIO, *, top: int = DEFAULT_TOP) -> int:
    """Write the report; return the exit status (1 when a module is above the hard limit)."""
    total = sum(size.lines for size in sizes)
    out.write(
        f"{len(sizes)} modules, {total} lines of code (not blank, not comment-only); "
        f"soft cap {SOFT_CAP}, hard limit {HARD_LIMIT}\n\n"
    )
    out.write(f"{'lines':>6}  module (largest {min(top, len(sizes))})\n")
    for size in sizes[:top]:
        out.write(f"{size.lines:>6}  {size.path}\n")
    over_cap = [size for size in sizes if SOFT_CAP < size.lines <= HARD_LIMIT]
    over_limit = [size for size in sizes if size.lines > HARD_LIMIT]
    if over_cap or over_limit:
        out.write("\n")
    for size in over_cap:
        out.write(
            f"warning: {size.path} has {size.lines} lines, above the soft cap of {SOFT_CAP}\n"
        )
    for size in over_limit:
        out.write(
            f"error: {size.path} has {size.lines} lines, above the hard limit of {HARD_LIMIT}; "
            "split it by concept (STYLE.md §2, §12)\n"
        )
    return 1 if over_limit else 0


def main(argv: Sequence[str] | None = None, *, src_dirs: Sequence[Path] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sz", description=__doc__)
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="how many modules to list")
    args = parser.parse_args(argv)
    dirs = src_dirs if src_dirs is not None else [dist.src for dist in distributions()]
    return report(scan(dirs), sys.stdout, top=args.top)


if __name__ == "__main__":
    raise SystemExit(main())
