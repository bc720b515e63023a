"""A corpus of sharded programs (`sharded_programs.py`) run by Lamina and by JAX on 8 devices.

Each program is written once against a namespace of either implementation and checked: its
values equal JAX's, its printed jaxpr is JAX's byte for byte, its outputs are placed as JAX's
(`.sharding.spec`), and its lowered module is JAX's (source locations and result names aside).
Where Lamina differs from JAX knowingly, the case is an expected failure (strict) saying why.
Every multi-device result is waited for before the next call: pipelined collective programs
can deadlock XLA:CPU on few cores.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina import lax as llax
from lamina.sharding import Mesh, NamedSharding, PartitionSpec
from lamina_core.testing import load_test_module, skip_without_devices

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

skip_without_devices(8, len(lamina.devices()), jax.device_count())

corpus = load_test_module(Path(__file__).parent, "sharded_programs")
PROGRAMS: dict[str, Any] = corpus.PROGRAMS
LAMINA = corpus.Side(lamina, lnp, llax, PartitionSpec, NamedSharding, Mesh)
JAX = corpus.Side(
    jax, jnp, jax.lax, jax.sharding.PartitionSpec, jax.sharding.NamedSharding, jax.sharding.Mesh
)

KNOWN: dict[tuple[str, str], str] = {}
"""`(program, check)`: why Lamina knowingly differs from JAX there (a strict xfail)."""

SLOW: frozenset[str] = frozenset()
"""Programs whose checks are left to the slow session (the default run stays under 60 s)."""


def _cases(check: str) -> list[Any]:
    cases = []
    for name in PROGRAMS:
        marks: list[Any] = []
        if (name, check) in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[name, check]))
        if name in SLOW:
            marks.append(pytest.mark.slow)
        cases.append(pytest.param(name, marks=marks, id=name))
    return cases


@functools.cache
def _run(name: str, side: str) -> tuple[Any, Any]:
    """The program's outputs on one side (computed once per session), waited for."""
    fun, args = PROGRAMS[name](LAMINA if side == "lamina" else JAX)
    api = lamina if side == "lamina" else jax
    out = api.block_until_ready(fun(*args))
    return out, api.tree_util.tree_structure(out)


def _leaves(name: str, side: str) -> list[Any]:
    api = lamina if side == "lamina" else jax
    leaves: list[Any] = api.tree_util.tree_leaves(_run(name, side)[0])
    return leaves


@pytest.mark.parametrize("name", _cases("values"))
def test_values_equal_jax(name: str) -> None:
    ours, theirs = _leaves(name, "lamina"), _leaves(name, "jax")
    # Lamina's tree structures print as `PyTreeSpec(...)`, JAX's as `PyTreeDef(...)`.
    assert (
        str(_run(name, "lamina")[1]).partition("(")[2]
        == str(_run(name, "jax")[1]).partition("(")[2]
    )
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape
        assert a.dtype == b.dtype
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", _cases("jaxpr"))
def test_printed_jaxpr_equals_jax(name: str) -> None:
    fun, args = PROGRAMS[name](LAMINA)
    jfun, jargs = PROGRAMS[name](JAX)
    assert str(lamina.make_jaxpr(fun)(*args)) == str(jax.make_jaxpr(jfun)(*jargs))


_LOCATIONS = re.compile(r"loc\(.*?\)|#loc.*")


def _module_text(lowered: Any) -> str:
    """StableHLO text without source locations (results are named by path, as JAX's)."""
    return _LOCATIONS.sub("", lowered.as_text())


@pytest.mark.parametrize("name", _cases("lowered"))
def test_lowered_module_equals_jax(name: str) -> None:
    fun, args = PROGRAMS[name](LAMINA)
    jfun, jargs = PROGRAMS[name](JAX)
    assert _module_text(fun.lower(*args)) == _module_text(jfun.lower(*jargs))


def _spec(x: Any) -> str | None:
    """The printed spec of an output's NamedSharding; None for any other sharding."""
    spec = getattr(x.sharding, "spec", None)
    return None if spec is None else repr(spec)


@pytest.mark.parametrize("name", _cases("specs"))
def test_output_shardings_equal_jax(name: str) -> None:
    ours, theirs = _leaves(name, "lamina"), _leaves(name, "jax")
    assert [_spec(x) for x in ours] == [_spec(x) for x in theirs]
    for a, b in zip(ours, theirs, strict=True):
        assert [d.id for d in a.sharding.device_set] == [d.id for d in b.sharding.device_set]


def test_ring_allreduce_equals_psum() -> None:
    by_hand, reduced = _run("ring_allreduce", "lamina")[0]
    np.testing.assert_allclose(np.asarray(by_hand), np.asarray(reduced), rtol=1e-5, atol=1e-6)


def test_the_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 40
