"""Symbolic dimensions against JAX's: printing, arithmetic, comparisons, parsing and its
errors, argument specs. (Tracing with them: test_symbolic_tracing; exporting and calling:
test_export_shape_poly.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

from lamina import export as lexport
from lamina_core.ir import InconclusiveDimensionOperation

pytestmark = pytest.mark.oracle

EXPRESSIONS: list[Callable[[Any, Any, Any], Any]] = [
    lambda a, b, c: a + b,
    lambda a, b, c: b + a + 1,
    lambda a, b, c: a * b + a + 1,
    lambda a, b, c: c + a * a + b,
    lambda a, b, c: 3 - a * b + 2 * c,
    lambda a, b, c: a * b * c - a,
    lambda a, b, c: a * a * b + a * b * b,
    lambda a, b, c: (a + 1) * (b - 1),
    lambda a, b, c: a // 2 + b,
    lambda a, b, c: (a + b) // 2,
    lambda a, b, c: (2 * a) % 4,
    lambda a, b, c: (4 * a + 2) // 2,
    lambda a, b, c: (4 * a + 3) // 2,
    lambda a, b, c: (4 * a + 3) % 2,
    lambda a, b, c: (a * b) // b,
    lambda a, b, c: 7 // a,
    lambda a, b, c: 2 * a - 2 * a + 5,
    lambda a, b, c: -a,
    lambda a, b, c: a - b,
    lambda a, b, c: a**3,
    lambda a, b, c: (a - b) * (a + b),
]


def _text(value: Any) -> str:
    return f"{type(value).__name__ == 'int'}:{value}"


@pytest.mark.parametrize("make", EXPRESSIONS)
def test_arithmetic_normalizes_and_prints_as_jax(make: Callable[[Any, Any, Any], Any]) -> None:
    ours = make(*lexport.symbolic_shape("a, b, c"))
    theirs = make(*jax.export.symbolic_shape("a, b, c"))
    assert _text(ours) == _text(theirs)


SPECS = [
    "b, 3",
    "(b, 2*b + 1)",
    " b , 2 * a + 1 , a * b , -a + 5, a-1",
    "max(a, b) + min(a, 2)",
    "a*3 + b*-2",
    "mod(a, b) * c",
    "floordiv(a, 2), a^2",
    "max(b, 1), min(b, 1)",
    "",
    "a,",
    "b - 1 + 1",
    "1",
]


@pytest.mark.parametrize("spec", SPECS)
def test_specs_parse_as_jax(spec: str) -> None:
    assert str(lexport.symbolic_shape(spec)) == str(jax.export.symbolic_shape(spec))


def _error(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        fn()
    except Exception as err:  # the class name and text are compared
        return type(err).__name__, str(err)
    raise AssertionError("no error")


MALFORMED = ["...", "b, ...", "_", "2a", "a b", "(a + b)*c", "max(a)", "non_negative(a)"]
MALFORMED += ["b, 3.5", "b +", "b, c//2"]


@pytest.mark.parametrize("spec", MALFORMED)
def test_malformed_specs_raise_jax_s_errors(spec: str) -> None:
    assert _error(lambda: lexport.symbolic_shape(spec)) == _error(
        lambda: jax.export.symbolic_shape(spec)
    )


def test_placeholders_take_the_like_shape_as_in_jax() -> None:
    for spec, like in (("_, 3", (5, 3)), ("b, ...", (5, 3, 2)), ("...", (2,))):
        ours = lexport.symbolic_shape(spec, like=like)
        assert str(ours) == str(jax.export.symbolic_shape(spec, like=like))
    assert _error(lambda: lexport.symbolic_shape("4, _", like=(5, 3))) == _error(
        lambda: jax.export.symbolic_shape("4, _", like=(5, 3))
    )


COMPARISONS: list[Callable[[Any], Any]] = [
    lambda b: b == b,
    lambda b: b + 1 == 1 + b,
    lambda b: b == 3,
    lambda b: b != 3,
    lambda b: b >= 1,
    lambda b: b > 0,
    lambda b: 2 * b >= b,
    lambda b: b >= 2,
    lambda b: b < 5,
    lambda b: max(b, 4),
    lambda b: int(b),
    lambda b: b * 0,
    lambda b: b % 1,
]


@pytest.mark.parametrize("compare", COMPARISONS)
def test_comparisons_decide_or_refuse_as_jax(compare: Callable[[Any], Any]) -> None:
    (ours,) = lexport.symbolic_shape("b")
    (theirs,) = jax.export.symbolic_shape("b")

    def outcome(fn: Callable[[], Any]) -> tuple[str, str]:
        try:
            return "value", str(fn())
        except Exception as err:  # the class name and text are compared
            return type(err).__name__, str(err)

    assert outcome(lambda: compare(ours)) == outcome(lambda: compare(theirs))


def test_constraints_decide_comparisons() -> None:
    x, y = lexport.symbolic_shape("x, y", constraints=("x >= y", "y <= 8"))
    assert x >= y and y <= 8 and y < 9
    with pytest.raises(InconclusiveDimensionOperation):
        _ = x <= 8
    with pytest.raises(ValueError, match="Unsatisfiable explicit constraint: 1 >= 2"):
        lexport.symbolic_shape("a", constraints=("1 >= 2",))


def test_dimensions_of_different_scopes_do_not_mix() -> None:
    (a,) = lexport.symbolic_shape("a", scope=lexport.SymbolicScope())
    (b,) = lexport.symbolic_shape("b")
    with pytest.raises(ValueError, match="Invalid mixing of symbolic scopes"):
        _ = a + b
    assert lexport.is_symbolic_dim(a) and not lexport.is_symbolic_dim(3)


def test_argument_specs_are_jax_s() -> None:
    args = (np.ones((2, 3)), {"k": np.ones(4, np.int32)})
    for specs in ("b, ...", ("b, _", {"k": None}), ["b, 3", "c"]):
        ours = lexport.symbolic_args_specs(args, specs)
        theirs = jax.export.symbolic_args_specs(args, specs)
        assert str(ours) == str(theirs)


def test_every_public_name_of_jax_export_is_here() -> None:
    theirs = {n for n in dir(jax.export) if not n.startswith("_")}
    assert theirs <= set(dir(lexport))
