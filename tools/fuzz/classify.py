"""Compare Lamina's outcome of a case with JAX's (or with the case's own expectation).

| Lamina         | JAX            | category                                                  |
|----------------|----------------|-----------------------------------------------------------|
| abort / exit   | any            | `abort` (failure)                                         |
| hang           | any            | `hang` (failure)                                          |
| answers        | answers        | `ok` if equal (numerics to tolerance), else `wrong`       |
| raises         | raises / dies  | `ok` if the message names the fault, else `unhelpful`;    |
|                |                | `other_class` if JAX's exception class is not a base of   |
|                |                | Lamina's (an `except` written for JAX would miss it)      |
| raises         | answers        | `lamina_raises` (reported)                                |
| answers        | raises / dies  | `ok` if `case.deliberate`, else `lamina_answers`          |

Cases without JAX (`case.jax` false: AOT artifacts, cache settings) compare an answer with
`case.expect` (a NumPy expression) and an error with `case.blame`. A case listed in
`KNOWN_ISSUES` that does not come out `ok` is `known` (reported, not a failure).
"""

from __future__ import annotations

import base64
import enum
import io
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from tools.fuzz.cases import KNOWN_ISSUES, Case
from tools.fuzz.runner import Outcome

JAX_INTERNAL = frozenset(
    {
        "IndexError",
        "AttributeError",
        "KeyError",
        "ZeroDivisionError",
        "NameError",
        "MLIRError",
        "NotImplementedError",
        "RuntimeError",
        "AssertionError",
    }
)
"""JAX exception classes that are internal errors there: Lamina's cleaner error of another
class is not reported as `other_class`."""
RTOL = 1e-5
ATOL = 1e-6


class Category(enum.Enum):
    OK = "ok"
    UNHELPFUL = "unhelpful"
    LAMINA_RAISES = "lamina_raises"
    LAMINA_ANSWERS = "lamina_answers"
    OTHER_CLASS = "other_class"
    KNOWN = "known"
    WRONG = "wrong"
    ABORT = "abort"
    HANG = "hang"

    @property
    def failure(self) -> bool:
        return self in (Category.WRONG, Category.ABORT, Category.HANG)

    @property
    def reported(self) -> bool:
        return not self.failure and self is not Category.OK


@dataclass(frozen=True, slots=True)
class Verdict:
    case: Case
    category: Category
    detail: str
    lamina: Outcome
    jax: Outcome | None


def decode(leaf: dict[str, Any]) -> np.ndarray[Any, Any] | str:
    if "repr" in leaf:
        return str(leaf["repr"])
    return np.load(io.BytesIO(base64.b64decode(leaf["npy"])), allow_pickle=False)  # type: ignore[no-any-return]


def _differ(ours: Outcome, theirs: tuple[dict[str, Any], ...]) -> str | None:
    """Why two answers differ, or None when they agree."""
    if len(ours.leaves) != len(theirs):
        return f"{len(ours.leaves)} leaves, expected {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours.leaves, theirs, strict=True)):
        if a.get("dtype") != b.get("dtype"):
            return f"leaf {i}: dtype {a.get('dtype')}, expected {b.get('dtype')}"
        x, y = decode(a), decode(b)
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return f"leaf {i}: {x!r}, expected {y!r}"
            continue
        if x.shape != y.shape:
            return f"leaf {i}: shape {x.shape}, expected {y.shape}"
        if x.dtype.kind in "fc":
            same = np.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True)
            # inf must match inf of the same sign
            same = same and bool(np.array_equal(np.isinf(x), np.isinf(y)))
        else:
            same = bool(np.array_equal(x, y))
        if not same:
            return f"leaf {i}: {_short(x)}, expected {_short(y)}"
    return None


def _short(x: np.ndarray[Any, Any]) -> str:
    text = np.array2string(x, threshold=8, edgeitems=2)
    return text if len(text) < 120 else text[:117] + "..."


def names_fault(case: Case, message: str) -> bool:
    """The heuristic of issue 21: the message mentions the parameter, the value, the shape or
    the dtype at fault (any of `case.blame`, case-insensitively, numbers as whole words)."""
    low = message.lower()
    for token in case.blame:
        t = token.lower()
        if re.fullmatch(r"-?[\d.]+", t):
            if re.search(rf"(?<![\w.]){re.escape(t)}(?![\w])", low):
                return True
        elif t in low:
            return True
    return False


def _normal(message: str) -> str:
    """A message without object addresses and library names, to compare Lamina's with JAX's."""
    text = re.sub(r" at 0x[0-9a-f]+", "", message)
    return re.sub(r"\b(lamina_core|lamina_runtime|lamina)\b", "jax", text)


def _error_ok(case: Case, ours: Outcome, theirs: Outcome | None) -> bool:
    if (
        theirs is not None
        and theirs.status == "raise"
        and ours.message
        and _normal(ours.message) == _normal(theirs.message)
    ):
        return True
    return names_fault(case, ours.message)


def _describe(o: Outcome) -> str:
    if o.status == "raise":
        msg = o.message.splitlines()[0] if o.message else ""
        return f"{o.type}: {msg[:200]}"
    if o.status == "ok":
        return "answers"
    return f"{o.status} {o.message}".strip()


def _expected(case: Case) -> tuple[dict[str, Any], ...]:
    assert case.expect is not None
    value = eval(case.expect, {"np": np})
    values = value if isinstance(value, tuple) else (value,)
    leaves = []
    for v in values:
        arr = np.asarray(v)
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        leaves.append({"dtype": str(arr.dtype), "npy": base64.b64encode(buf.getvalue()).decode()})
    return tuple(leaves)


def _raw(case: Case, ours: Outcome, theirs: Outcome | None) -> tuple[Category, str]:
    if ours.status in ("abort", "exit"):
        return Category.ABORT, _describe(ours)
    if ours.status == "hang":
        return Category.HANG, f"no answer in {ours.seconds:.0f} s"
    if theirs is None:  # no JAX: the case's own expectation
        if ours.status == "ok":
            if case.expect is None:
                return Category.OK, "answers"
            why = _differ(ours, _expected(case))
            return (Category.OK, "answers") if why is None else (Category.WRONG, why)
        if case.expect is not None and not case.may_raise:
            return Category.LAMINA_RAISES, _describe(ours)
        if _error_ok(case, ours, None):
            return Category.OK, _describe(ours)
        return Category.UNHELPFUL, _describe(ours)
    jax_answers = theirs.status == "ok"
    if ours.status == "ok" and jax_answers:
        why = _differ(ours, theirs.leaves)
        return (Category.OK, "equal") if why is None else (Category.WRONG, why)
    if ours.status == "ok":
        if case.deliberate:
            return Category.OK, f"deliberate: {case.deliberate}"
        return Category.LAMINA_ANSWERS, f"JAX: {_describe(theirs)}"
    if jax_answers:
        return Category.LAMINA_RAISES, _describe(ours)
    versus = f"{_describe(ours)} | JAX: {_describe(theirs)}"
    if not _error_ok(case, ours, theirs):
        return Category.UNHELPFUL, versus
    if (
        theirs.status == "raise"
        and ours.mro
        and theirs.type not in ours.mro
        and theirs.type not in JAX_INTERNAL
    ):
        return Category.OTHER_CLASS, versus
    return Category.OK, _describe(ours)


def classify(case: Case, ours: Outcome, theirs: Outcome | None) -> Verdict:
    category, detail = _raw(case, ours, theirs)
    if category is not Category.OK and case.name in KNOWN_ISSUES:
        detail = f"{detail} [known: {KNOWN_ISSUES[case.name]}]"
        category = Category.KNOWN
    return Verdict(case, category, detail, ours, theirs)
