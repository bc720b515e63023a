"""The two constants forms print as JAX 0.10.2 prints them in its two modes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_consts
import lamina_core
from lamina_core.testing import Oracle

f32 = np.float32
C16 = np.arange(16, dtype=f32)
C64 = np.linspace(0.0, 1.0, 16)  # float64: canonicalized to f32 once
C_INT = np.arange(16, dtype=np.int32)
SMALL = np.arange(4, dtype=f32)
MATRIX = np.ones((4, 4), f32)
SCALAR = np.float32(2.5)

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

CASES: list[tuple[str, Program, tuple[Any, ...]]] = [
    ("one array", lambda jnp, lax: lambda x: x + C16, (np.ones(16, f32),)),
    ("array used twice", lambda jnp, lax: lambda x: x * C16 + C16, (np.ones(16, f32),)),
    ("two arrays", lambda jnp, lax: lambda x: x + C16 - C64, (np.ones(16, f32),)),
    ("float64 array twice", lambda jnp, lax: lambda x: x * C64 + C64, (np.ones(16, f32),)),
    ("int array promoted", lambda jnp, lax: lambda x: x * C_INT, (np.ones(16, f32),)),
    ("small array", lambda jnp, lax: lambda x: x + SMALL, (np.ones(4, f32),)),
    ("matrix", lambda jnp, lax: lambda x: x - MATRIX, (np.ones((4, 4), f32),)),
    ("numpy scalar stays literal", lambda jnp, lax: lambda x: x + SCALAR, (np.ones(3, f32),)),
    ("python scalar stays literal", lambda jnp, lax: lambda x: x * 3.0, (np.ones(3, f32),)),
    ("array output", lambda jnp, lax: lambda x: (x, C16), (f32(1),)),
    ("array output and use", lambda jnp, lax: lambda x: (x + C16, C16), (np.ones(16, f32),)),
    ("only output", lambda jnp, lax: lambda x: SMALL, (f32(1),)),
    ("constant first operand", lambda jnp, lax: lambda x: C16 - x, (np.ones(16, f32),)),
    ("constant broadcast", lambda jnp, lax: lambda x: x + SMALL, (np.ones((3, 4), f32),)),
    ("constant in sin", lambda jnp, lax: lambda x: jnp.sin(C16) + x, (np.ones(16, f32),)),
    ("constant in sum", lambda jnp, lax: lambda x: jnp.sum(C16) * x, (f32(1),)),
    ("int sin promotes", lambda jnp, lax: lambda x: jnp.sin(C_INT) * x, (f32(1),)),
    ("three uses", lambda jnp, lax: lambda x: (x + C16) * C16 - C16, (np.ones(16, f32),)),
    ("interleaved", lambda jnp, lax: lambda x: (x + C16) * C64 + C16 * C64, (np.ones(16, f32),)),
    ("jnp.ones is staged", lambda jnp, lax: lambda x: x + jnp.ones(16), (np.ones(16, f32),)),
    ("full is staged", lambda jnp, lax: lambda x: x + jnp.full((16,), 142.0), (np.ones(16, f32),)),
    (
        "seed mix",
        lambda jnp, lax: lambda x: x + C16 + np.full((16,), 42.0) + jnp.full((16,), 142.0),
        (np.arange(16, dtype=f32),),
    ),
    (
        "bool array",
        lambda jnp, lax: lambda x: x | np.array([True, False, True]),
        (np.array([False, False, True]),),
    ),
    ("lax with constant", lambda jnp, lax: lambda x: lax.add(x, C16), (np.ones(16, f32),)),
    ("lax max constant", lambda jnp, lax: lambda x: lax.max(C16, x), (np.ones(16, f32),)),
    (
        "convert constant",
        lambda jnp, lax: lambda x: lax.convert_element_type(C_INT, jnp.float32) + x,
        (np.ones(16, f32),),
    ),
    (
        "broadcast_in_dim constant",
        lambda jnp, lax: lambda x: lax.broadcast_in_dim(SMALL, (2, 4), (1,)) * x,
        (f32(2),),
    ),
    ("no constants", lambda jnp, lax: lambda x: jnp.sin(x) * 2.0, (np.ones(3, f32),)),
    (
        "pytree input with constant",
        lambda jnp, lax: lambda p: p["a"] + C16 * p["b"],
        ({"a": np.ones(16, f32), "b": f32(3)},),
    ),
    (
        "two outputs share constant",
        lambda jnp, lax: lambda x: (x + C16, x - C16),
        (np.ones(16, f32),),
    ),
    (
        "constant reduced twice",
        lambda jnp, lax: lambda x: jnp.sum(C16) + jnp.sum(C16 * x),
        (np.ones(16, f32),),
    ),
]


@contextmanager
def jax_simplified(jax: ModuleType, on: bool) -> Iterator[None]:
    previous = jax.config.jax_use_simplified_jaxpr_constants
    jax.config.update("jax_use_simplified_jaxpr_constants", on)
    try:
        yield
    finally:
        jax.config.update("jax_use_simplified_jaxpr_constants", previous)


def test_the_corpus_has_thirty_programs() -> None:
    assert len(CASES) >= 30


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_literal_form_matches_simplified_mode(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    with jax_simplified(oracle.jax, True):
        oracle.check(program, *args)


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), CASES, ids=[c[0] for c in CASES])
def test_constvars_form_matches_previous_mode(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    ours = lamina_consts.hoist(
        lamina_core.make_jaxpr(program(lamina_core.numpy, lamina_core.lax))(*args)
    )
    with jax_simplified(oracle.jax, False):
        theirs = oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args)
    assert str(ours) == str(theirs)
    assert len(ours.consts) == len(theirs.consts)
    for mine, reference in zip(ours.consts, theirs.consts, strict=True):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(reference))
    lamina_core.check_jaxpr(ours)


@pytest.mark.oracle
@pytest.mark.parametrize(("name", "program", "args"), CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_make_jaxpr_follows_the_configured_mode(
    oracle: Oracle, name: str, program: Program, args: tuple[Any, ...]
) -> None:
    fun = program(lamina_core.numpy, lamina_core.lax)
    with lamina_core.config(jax_use_simplified_jaxpr_constants=False):
        previous = lamina_consts.make_jaxpr(fun)(*args)
    with jax_simplified(oracle.jax, False):
        assert str(previous) == str(oracle.jax.make_jaxpr(program(oracle.jnp, oracle.lax))(*args))
    assert str(lamina_consts.make_jaxpr(fun)(*args)) == str(lamina_core.make_jaxpr(fun)(*args))
