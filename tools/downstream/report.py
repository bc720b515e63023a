"""Reading pytest's JUnit XML, and comparing a suite's run on Lamina with its run on JAX."""

from __future__ import annotations

import collections
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

PASSED: Final = "passed"
FAILED: Final = "failed"
SKIPPED: Final = "skipped"
NOT_RUN: Final = "not run"

_WRAPPED: Final = re.compile(r'^failed on (?:setup|teardown|call) with "(?P<inner>.*)"$', re.S)
_RAISED_AT: Final = re.compile(r"^\S+:\d+: (?P<type>[A-Za-z_][\w.]*)$")
_NAMED: Final = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\b)"
)


@dataclass(frozen=True)
class Outcome:
    status: str
    cause: str = ""
    """For a failure: the exception's type and the first line of its message."""


def cause_of(message: str, text: str) -> str:
    """`Type: first line` of a JUnit failure or error (pytest puts the exception's short form
    in `message`, the traceback in the element's text, ending in `path:line: Type`)."""
    wrapped = _WRAPPED.match(message)
    if wrapped:
        message = wrapped["inner"]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if message == "collection failure":  # the error is in the text's `E   ` lines
        message = next((line[1:].strip() for line in lines if line.startswith("E ")), message)
    first = message.strip().splitlines()[0] if message.strip() else ""
    if _NAMED.match(first):
        return first[:200]
    raised = next((m["type"] for m in map(_RAISED_AT.match, reversed(lines)) if m), "")
    return f"{raised}: {first}"[:200] if raised else first[:200]


@dataclass
class Run:
    """One pytest run: each test's outcome, and the modules that failed to import."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    collection_errors: dict[str, str] = field(default_factory=dict)
    """Module (dotted, as pytest names it) -> the cause it could not be imported."""

    def outcome(self, test: str) -> Outcome:
        """A test's outcome; one missing from the run is `not run`, with its module's import
        error as the cause when there is one."""
        found = self.outcomes.get(test)
        if found is not None:
            return found
        classname = test.partition("::")[0]
        for module, cause in self.collection_errors.items():
            if classname == module or classname.startswith(module + "."):
                return Outcome(NOT_RUN, f"(collection) {cause}")
        return Outcome(NOT_RUN, "(not in the run)")


def parse_junit(path: Path) -> Run:
    run = Run()
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        problems = [child for child in case if child.tag in ("failure", "error")]
        if not classname and problems:  # a module pytest could not collect
            run.collection_errors[name] = cause_of(
                problems[0].get("message", ""), problems[0].text or ""
            )
            continue
        test = f"{classname}::{name}"
        if problems:
            problem = problems[0]
            cause = cause_of(problem.get("message", ""), problem.text or "")
            run.outcomes[test] = Outcome(FAILED, cause)
        elif case.find("skipped") is not None:
            run.outcomes.setdefault(test, Outcome(SKIPPED))
        else:
            run.outcomes.setdefault(test, Outcome(PASSED))
    return run


@dataclass
class Report:
    """A suite on Lamina against the same suite on JAX."""

    suite: str
    counted: int
    """Tests that pass on JAX: the only ones counted."""
    passed: int
    """Of those, the tests that pass on Lamina too."""
    jax_totals: Mapping[str, int]
    lamina_totals: Mapping[str, int]
    causes: list[tuple[str, int]]
    """The causes of the counted tests that do not pass on Lamina, most frequent first."""
    failing: dict[str, str]
    """Each counted test that does not pass on Lamina -> its cause."""
    lamina_only: list[str]
    """Tests that pass on Lamina but not on JAX (not counted)."""

    @property
    def ratio(self) -> float:
        return self.passed / self.counted if self.counted else 1.0

    def render(self, top: int = 25) -> str:
        lines = [
            f"{self.suite}: {self.passed} of {self.counted} tests passing on JAX pass on Lamina "
            f"({100 * self.ratio:.1f}%)",
            f"  on JAX:    {_totals(self.jax_totals)}",
            f"  on Lamina: {_totals(self.lamina_totals)}",
        ]
        if self.lamina_only:
            lines.append(f"  passing on Lamina only: {len(self.lamina_only)}")
        if self.causes:
            lines.append(f"  causes ({len(self.causes)} distinct), most frequent first:")
            lines += [f"  {n:6d}  {cause}" for cause, n in self.causes[:top]]
            if len(self.causes) > top:
                rest = sum(n for _, n in self.causes[top:])
                lines.append(f"  {rest:6d}  ({len(self.causes) - top} other causes)")
        return "\n".join(lines)


def _totals(totals: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {status}" for status, n in sorted(totals.items())) or "nothing ran"


def _count(run: Run) -> dict[str, int]:
    counts = collections.Counter(o.status for o in run.outcomes.values())
    if run.collection_errors:
        counts["modules not imported"] = len(run.collection_errors)
    return dict(counts)


def compare(suite: str, jax: Run, lamina: Run) -> Report:
    counted = sorted(t for t, o in jax.outcomes.items() if o.status == PASSED)
    failing = {
        test: outcome.cause or outcome.status
        for test in counted
        if (outcome := lamina.outcome(test)).status != PASSED
    }
    lamina_only = sorted(
        t
        for t, o in lamina.outcomes.items()
        if o.status == PASSED and jax.outcome(t).status != PASSED
    )
    return Report(
        suite=suite,
        counted=len(counted),
        passed=len(counted) - len(failing),
        jax_totals=_count(jax),
        lamina_totals=_count(lamina),
        causes=collections.Counter(failing.values()).most_common(),
        failing=failing,
        lamina_only=lamina_only,
    )
