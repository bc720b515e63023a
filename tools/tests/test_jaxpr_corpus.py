"""The jaxpr corpus harness (issue 40): the reader over the project's jaxpr test corpora.

By default a sample (the first program of each table and transformation) runs in this
process; the whole harness runs with the slow tests, in a process of its own on 8 devices
(the sharded programs need them). The harness's own checks are tested on programs made to
fail.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import ir
from tools.jaxpr_corpus import (
    CORPORA,
    KNOWN,
    PENDING_TYPES,
    Outcome,
    Program,
    Traced,
    check,
    run,
    same_bits,
    total,
)
from tools.workspace import ROOT

f32 = np.float32


def test_a_sample_of_every_corpus_reads_back_exactly_and_computes_the_same_values() -> None:
    counts = run(per_table=1)
    assert [c.corpus for c in counts] == list(CORPORA)
    for c in counts:
        failures = [f"{r.program.label}: {r.stage}: {r.error}" for r in c.results
                    if r.outcome is Outcome.FAILED]  # fmt: skip
        assert not failures, f"{c.corpus}:\n" + "\n".join(failures)
        # The umbrella's sharded programs need 8 devices (the slow test's process has them).
        assert not c.skipped or c.corpus == "sharding", c.skipped
        assert c.programs > 0, c.corpus
    every = total(counts)
    assert every.programs >= 80
    assert every.text_exact + every.pending_types + every.known == every.programs
    assert every.eval_equal == every.eval_checked
    assert every.eval_equal > every.programs // 2


class _Mode(enum.Enum):
    A = 0

    def __repr__(self) -> str:
        return f"_Mode.{self.name}"


_tagged_p = lc.Primitive("jaxpr_corpus_test_tagged")
lc.abstract_eval_rules.set(_tagged_p, lambda x, **_: x)
lc.impl_rules.set(_tagged_p, lambda x, **_: x)


def _program(make: Any, name: str = "case") -> Program:
    return Program("test", "test_jaxpr_corpus.CASES", name, make)


def _traced(f: Any, *args: Any) -> Traced:
    return Traced(lc.make_jaxpr(f)(*args), list(args))


def test_a_program_read_back_exactly_passes() -> None:
    result = check(_program(lambda: _traced(lambda x: lc.numpy.sin(x) * 2.0, f32(0.5))))
    assert result.outcome is Outcome.OK
    assert result.text_exact and result.eval_equal


def test_a_param_read_back_as_another_value_fails_at_the_text() -> None:
    # `_Mode` is not registered as a param type: `(_Mode.A,)` reads back as a tuple of strings.
    def make() -> Traced:
        return _traced(lambda x: _tagged_p.bind(x, mode=(_Mode.A,)), f32(0.5))

    result = check(_program(make))
    assert result.outcome is Outcome.FAILED
    assert result.stage == "text" and "mode=(_Mode.A,)" in result.error


def test_a_table_entry_that_does_not_trace_is_counted_apart() -> None:
    def make() -> Traced:
        raise TypeError("no such program\nsecond line")

    result = check(_program(make))
    assert result.outcome is Outcome.NOT_TRACED
    assert result.error == "TypeError: no such program"


@pytest.mark.parametrize(
    "shown",
    ["a:f32[3]{V:i}", "b:Ref{f32[3]}", "c:f32[8@x,4]", "mesh=Mesh('i': 4)", "in_specs=(P('i'),)"],
)
def test_the_forms_of_the_types_change_are_pending(shown: str) -> None:
    assert PENDING_TYPES.search(shown)


@pytest.mark.parametrize("shown", ["sharding=None", "out_sharding=None", "c:f32[8,4]", "P"])
def test_other_text_is_not_pending(shown: str) -> None:
    assert not PENDING_TYPES.search(shown)


class _Shown:
    """A param value printed as given."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    ("param", "outcome"),
    [("NamedSharding(mesh=m, spec=P())", Outcome.PENDING_TYPES), ("Other(1)", Outcome.FAILED)],
)
def test_a_reader_error_at_an_equation_with_a_pending_form_is_pending(
    monkeypatch: pytest.MonkeyPatch, param: str, outcome: Outcome
) -> None:
    def parse(text: str, consts: Any = None) -> Any:
        raise ir.JaxprSyntaxError("cannot read this", text, text.index("jaxpr_corpus_test"))

    monkeypatch.setattr(ir, "parse", parse)

    def make() -> Traced:
        return _traced(lambda x: _tagged_p.bind(x, where=_Shown(param)), f32(0.5))

    assert check(_program(make)).outcome is outcome


def test_known_limitations_are_programs_of_the_corpora() -> None:
    for label in KNOWN:
        assert "[" in label and label.endswith("]"), label


def test_values_compare_by_bits() -> None:
    nan = np.array([np.nan, 1.0], f32)
    other_nan = nan.copy()
    other_nan.view(np.uint32)[0] ^= 1  # another NaN payload: the same value
    assert same_bits(nan, other_nan)
    assert not same_bits(np.array(0.0, f32), np.array(-0.0, f32))
    assert not same_bits(np.zeros(2, f32), np.zeros(2, np.float64))
    assert not same_bits(np.zeros(2, f32), np.zeros((1, 2), f32))
    keys = np.zeros(2, np.dtype([("k", "V8")]))
    flipped = keys.copy()
    flipped.view(np.uint8)[3] = 1
    assert same_bits(keys, keys.copy()) and not same_bits(keys, flipped)


def test_json_column_follows_the_ir() -> None:
    result = check(_program(lambda: _traced(lambda x: x + 1.0, f32(0.5))))
    assert (result.json_exact is None) == (not hasattr(ir, "to_json"))


@pytest.mark.slow
def test_every_program_of_the_corpora_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "counts.json"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    done = subprocess.run(
        [sys.executable, "-m", "tools.jaxpr_corpus", "--json", str(out)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    counts = {c["corpus"]: c for c in json.loads(out.read_text())}
    assert set(counts) == set(CORPORA)
    for c in counts.values():
        assert not c["skipped"] and c["failed"] == 0, c
    assert sum(c["programs"] for c in counts.values()) >= 3500
