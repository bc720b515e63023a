"""The jaxpr_io benchmarks' program: exactly N equations of the intended mix, on both sides."""

from __future__ import annotations

import pytest

import lamina
from tools.bench.registry import Side
from tools.bench.suites.jaxpr_io import count_eqns, parse_10k, program

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("n", [300, 401])
def test_the_program_has_exactly_n_equations_on_both_sides(n: int) -> None:
    closed = program(lamina, n)
    assert count_eqns(closed.jaxpr) == n
    assert count_eqns(program(jax, n).jaxpr) == n  # print_10k prints as many on each side
    text = str(closed)
    mix = ("dot_general", "top_k", "split[", "jit[", "let layer_norm", "[...]:f32[16]", "sin")
    for piece in mix:
        assert piece in text, piece


def test_the_parse_case_reads_the_program_back() -> None:
    parsed = parse_10k(Side.LAMINA, 300)()
    assert count_eqns(parsed.jaxpr) == 300  # type: ignore[attr-defined]
