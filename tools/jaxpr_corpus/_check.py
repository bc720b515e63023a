"""One program through the reader: its text read back exactly, its JSON form (when the IR has
one) read back exactly, and the program read back computing the original's values bit for bit.

Values come from the NumPy reference evaluator; where it cannot run a program (a primitive
only the runtime executes), from the runtime's eager evaluation, the same for both programs.
"""

from __future__ import annotations

import contextlib
import enum
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np

from lamina_core import ir
from lamina_core.testing import reference_evaluator
from lamina_core.trace import (
    install_eager_impl,
    install_materializer,
    reference_impl,
    to_numpy,
)
from lamina_core.tree import tree_util
from tools.jaxpr_corpus._programs import Program, Traced


class Outcome(enum.Enum):
    OK = "ok"
    NOT_TRACED = "not traced"
    """The table's program does not trace (not the reader's concern; listed)."""
    PENDING_TYPES = "pending: types"
    """Fails on a form another change is adding to the reader (see `PENDING_TYPES`)."""
    KNOWN = "known"
    """Fails as `KNOWN` says it does, for a reason stated there."""
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Result:
    program: Program
    outcome: Outcome
    text_exact: bool = False
    json_exact: bool | None = None
    """None: the IR has no JSON form yet (or the text did not read back)."""
    eval_equal: bool | None = None
    """None: not evaluated (no arguments, or neither evaluator runs the original)."""
    stage: str = ""
    """Where it failed: trace, parse, text, json, eval."""
    error: str = ""
    """The first line of what went wrong."""


PENDING_TYPES: Final = re.compile(
    r"\{V:|\bRef\{|\d@\w|\b(Abstract)?Mesh\(|NamedSharding\(|\bP(artitionSpec)?\("
)
"""The forms the types change reads: types varying over manual axes (`f32[3]{V:i}`), Ref
types (`Ref{f32[3]}`), sharding in types (`f32[8@x]`), meshes, shardings and specs in
params (`mesh=Mesh('i': 4)`, `in_specs=(P('i'),)`); and hi types (`q8[2,3]`). A failure
whose error, or the equation it points at, shows one counts under "pending: types"."""

PENDING_WORDS: Final = ("mesh", "sharding", "spec", "manual axes", "'@'", "'Ref'")
"""The same, as the reader's and the rules' errors name them."""


KNOWN: Final[dict[str, str]] = {
    "sharded_programs.PROGRAMS[tp_matmul_shard_map]": (
        "a `custom_jvp_call` read back has no jvp rule and no pytrees (the text shows neither), "
        "and the NumPy evaluator runs a `shard_map` body batched over its devices: batching "
        "the call needs them (XLA runs the program read back)"
    ),
}
"""Programs that fail for a reason the reader cannot remove, by label: why. A listed program
that passes is a failure (remove it from the list)."""


def check(program: Program) -> Result:
    """The program through the reader (see the module's docstring)."""
    result = _check(program)
    why = KNOWN.get(program.label)
    if why is None or result.outcome is Outcome.NOT_TRACED:
        return result
    if result.outcome is Outcome.OK:
        return replace(result, outcome=Outcome.FAILED, error="passes: remove it from KNOWN")
    return replace(result, outcome=Outcome.KNOWN, error=f"{result.error} ({why})")


def _check(program: Program) -> Result:
    try:
        t = program.make()
    except Exception as e:
        return Result(program, Outcome.NOT_TRACED, stage="trace", error=_first_line(e))
    with contextlib.nullcontext() if t.mesh is None else ir.set_mesh(t.mesh):
        return _read_back(program, t)


def _read_back(program: Program, t: Traced) -> Result:
    text = str(t.closed)
    try:
        parsed = ir.parse(text, ir.elided_constants(t.closed))
    except Exception as e:
        return _failed(program, "parse", e, t)
    again = str(parsed)
    if again != text:
        return _failed(program, "text", _Differs(_first_difference(text, again)), t)
    json_exact = _json_round_trip(t.closed, text)
    if json_exact is False:
        return Result(program, Outcome.FAILED, True, False, None, "json", "JSON round trip differs")
    if isinstance(json_exact, Exception):
        return _failed(program, "json", json_exact, t, text_exact=True)
    try:
        equal = _same_values(t, parsed)
    except Exception as e:
        return _failed(program, "eval", e, t, text_exact=True, json_exact=json_exact)
    if equal is False:
        return Result(program, Outcome.FAILED, True, json_exact, False, "eval", "values differ")
    return Result(program, Outcome.OK, True, json_exact, equal)


class _Differs(Exception):
    pass


def _failed(
    program: Program,
    stage: str,
    e: BaseException,
    t: Traced,
    text_exact: bool = False,
    json_exact: bool | None = None,
) -> Result:
    error = _first_line(e)
    outcome = Outcome.PENDING_TYPES if _pending(error, e, t) else Outcome.FAILED
    return Result(program, outcome, text_exact, json_exact, None, stage, error)


def _pending(error: str, e: BaseException, t: Traced) -> bool:
    """Whether the error, or the equation it points at, shows a form in `PENDING_TYPES` or
    a hi type of the program."""
    shown = f"{error}\n{_equation_at(str(t.closed), e)}"
    if any(word in error for word in PENDING_WORDS) or PENDING_TYPES.search(shown):
        return True
    return any(f"'{name}'" in shown or f"{name}[" in shown for name in _hi_type_names(t.closed))


def _equation_at(text: str, e: BaseException) -> str:
    """The text of the equation a located error points at: its line, and its params up to
    their closing bracket."""
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    if not isinstance(line, int) or not isinstance(column, int):
        return ""
    lines = text.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        return ""
    start = sum(map(len, lines[: line - 1]))
    end, depth = start + column - 1, 0
    while end < len(text) and not (text[end] == "\n" and depth <= 0):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        end += 1
    return text[start:end]


def _hi_type_names(closed: ir.ClosedJaxpr) -> set[str]:
    """How the program's hi types print (`q8` of `q8[2,3]`)."""
    names: set[str] = set()
    todo = [closed.jaxpr]
    while todo:
        jaxpr = todo.pop()
        binders = [*jaxpr.invars, *jaxpr.constvars, *(v for e in jaxpr.eqns for v in e.outvars)]
        for v in binders:
            if getattr(v.aval, "is_high", False):
                names.add(v.aval.str_short().partition("[")[0])
        todo += [sub for e in jaxpr.eqns for sub in ir.jaxprs_in_params(e.params)]
    return names


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


def _first_difference(a: str, b: str) -> str:
    for k, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return f"line {k + 1}: {x.strip()!r} read back as {y.strip()!r}"
    return "the texts differ in length"


def _json_round_trip(closed: ir.ClosedJaxpr, text: str) -> bool | Exception | None:
    to_json = getattr(ir, "to_json", None)
    from_json = getattr(ir, "from_json", None)
    if to_json is None or from_json is None:
        return None
    try:
        return str(from_json(to_json(closed))) == text
    except Exception as e:
        return e


# --- values -----------------------------------------------------------------------------------


@contextlib.contextmanager
def _numpy_reference() -> Iterator[None]:
    """Eager evaluation by the NumPy reference, even where the runtime installed XLA's."""
    impl = install_eager_impl(reference_impl)
    materialize = install_materializer(lambda v: v)
    try:
        yield
    finally:
        install_eager_impl(impl)
        install_materializer(materialize)


def _evaluate(closed: ir.ClosedJaxpr, args: Sequence[Any], numpy: bool) -> list[np.ndarray]:
    if numpy:
        with _numpy_reference():
            outs = reference_evaluator(closed, args)
    else:
        outs = reference_evaluator(closed, args)
    return [_host(v) for v in tree_util.tree_leaves(list(outs))]


def _host(v: Any) -> np.ndarray:
    return np.asarray(to_numpy(v))


def _same_values(t: Traced, parsed: ir.ClosedJaxpr) -> bool | None:
    """Whether both programs compute the same bits (None: neither evaluator runs the
    original on these arguments, so there is nothing to compare)."""
    if t.args is None:
        return None
    for numpy in (True, False):
        try:
            want = _evaluate(t.closed, t.args, numpy)
        except Exception:
            continue
        got = _evaluate(parsed, t.args, numpy)
        return len(got) == len(want) and all(map(same_bits, got, want))
    return None


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtypes, shapes and bytes (keys compared by their bits, `-0.0` unlike `0.0`; NaNs
    alike whatever their payloads)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.tobytes() == b.tobytes():
        return True
    if a.dtype.kind not in "fc":
        return False
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    zero = np.zeros((), a.dtype)
    same_elsewhere = np.where(nan_a, zero, a).tobytes() == np.where(nan_b, zero, b).tobytes()
    return bool(np.array_equal(nan_a, nan_b)) and same_elsewhere
