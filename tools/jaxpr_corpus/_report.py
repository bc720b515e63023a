"""Counts per corpus, and the table and failure list `python -m tools.jaxpr_corpus` prints."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from tools.jaxpr_corpus._check import Outcome, Result


@dataclass(slots=True)
class Counts:
    corpus: str
    programs: int = 0
    """Programs traced (a table's case that does not trace is counted apart)."""
    text_exact: int = 0
    json_exact: int = 0
    json_checked: int = 0
    eval_equal: int = 0
    eval_checked: int = 0
    eval_na: int = 0
    """Programs read back exactly but not evaluated (no arguments, or no evaluator runs
    them)."""
    pending_types: int = 0
    known: int = 0
    failed: int = 0
    not_traced: int = 0
    skipped: str = ""
    """Why part of the corpus did not run here (too few devices), if part did not."""
    seconds: float = 0.0
    results: list[Result] = field(default_factory=list)

    def add(self, r: Result) -> None:
        self.results.append(r)
        if r.outcome is Outcome.NOT_TRACED:
            self.not_traced += 1
            return
        self.programs += 1
        self.text_exact += r.text_exact
        if r.json_exact is not None:
            self.json_checked += 1
            self.json_exact += r.json_exact
        if r.eval_equal is not None:
            self.eval_checked += 1
            self.eval_equal += r.eval_equal
        self.eval_na += r.outcome is Outcome.OK and r.eval_equal is None
        self.pending_types += r.outcome is Outcome.PENDING_TYPES
        self.known += r.outcome is Outcome.KNOWN
        self.failed += r.outcome is Outcome.FAILED

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "programs": self.programs,
            "text_exact": self.text_exact,
            "json_exact": self.json_exact if self.json_checked else None,
            "eval_equal": self.eval_equal,
            "eval_checked": self.eval_checked,
            "eval_na": self.eval_na,
            "pending_types": self.pending_types,
            "known": self.known,
            "failed": self.failed,
            "not_traced": self.not_traced,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 1),
            "failures": [
                {
                    "program": r.program.label,
                    "outcome": r.outcome.value,
                    "stage": r.stage,
                    "error": r.error,
                }
                for r in self.results
                if r.outcome is not Outcome.OK
            ],
        }


_COLUMNS = (
    "corpus",
    "programs",
    "text-exact",
    "json-exact",
    "eval-equal",
    "eval n/a",
    "pending: types",
    "known",
    "failures",
    "not traced",
    "seconds",
)


def _row(c: Counts) -> list[str]:
    json = f"{c.json_exact}" if c.json_checked else "n/a"
    return [
        f"{c.corpus} (part)" if c.skipped else c.corpus,
        str(c.programs),
        str(c.text_exact),
        json,
        str(c.eval_equal),
        str(c.eval_na),
        str(c.pending_types),
        str(c.known),
        str(c.failed),
        str(c.not_traced),
        f"{c.seconds:.1f}",
    ]


def total(counts: Sequence[Counts]) -> Counts:
    out = Counts("total")
    for c in counts:
        for r in c.results:
            out.add(r)
        out.seconds += c.seconds
    return out


def print_report(counts: Sequence[Counts], out: TextIO, verbose: bool = False) -> None:
    rows = [list(_COLUMNS), *(_row(c) for c in counts), _row(total(counts))]
    widths = [max(len(r[k]) for r in rows) for k in range(len(_COLUMNS))]
    for k, row in enumerate(rows):
        if k == len(rows) - 1:
            out.write("-" * (sum(widths) + 2 * len(widths)) + "\n")
        cells = [
            row[0].ljust(widths[0]),
            *(v.rjust(w) for v, w in zip(row[1:], widths[1:], strict=True)),
        ]
        out.write("  ".join(cells).rstrip() + "\n")
    for c in counts:
        if c.skipped:
            out.write(f"\n{c.corpus}: part skipped: {c.skipped}\n")
    _section(out, "failures", _of(counts, Outcome.FAILED))
    _section(out, "known", _of(counts, Outcome.KNOWN))
    _section(out, "pending: types", _of(counts, Outcome.PENDING_TYPES))
    if verbose:
        _section(out, "not traced", _of(counts, Outcome.NOT_TRACED))


def _of(counts: Iterable[Counts], outcome: Outcome) -> list[Result]:
    return [r for c in counts for r in c.results if r.outcome is outcome]


def _section(out: TextIO, title: str, results: list[Result]) -> None:
    if not results:
        return
    out.write(f"\n{title} ({len(results)}):\n")
    for r in results:
        out.write(f"  {r.program.corpus}: {r.program.label}: {r.stage}: {r.error}\n")
