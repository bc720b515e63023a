"""Symbolic dimensions as values and in nested lowerings, against JAX: a function returning
a dimension (`x.shape[0]`) traces and exports as JAX's (`dim_as_value` outputs); evaluating
`dim_as_value` outside tracing raises JAX's error; helper functions (`argmax`, the jitted
`_where`, `floor_divide`, `divmod` of `jnp`) take the dimension variables; the exported
module, its public `@main` solving `2*b` or `b + 1` included, is JAX's text (locations
aside); symbolic shapes exported for several platforms, or with ordered effects, behave as
in JAX."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

F32 = np.float32
Program = Callable[[ModuleType, Any, Any], Any]
"""`(api, jnp, x) -> outputs`, run with JAX's modules and with Lamina's."""

RETURNING: dict[str, Program] = {
    "shape": lambda m, jnp, x: x.shape[0],
    "size": lambda m, jnp, x: x.size,
    "with_array": lambda m, jnp, x: (x.shape[0], x * 2),
    "expression": lambda m, jnp, x: (2 * x.shape[0] + 1, x.shape[0] // 2),
    "nested_jit": lambda m, jnp, x: m.jit(lambda y: (y.shape[0], y.sum()))(x),
}

NESTED: dict[str, Program] = {
    "where_scalar": lambda m, jnp, x: jnp.where(x > 0, x, x.shape[0]),
    "floor_divide": lambda m, jnp, x: (
        jnp.arange(x.shape[0]) // 2,
        jnp.arange(x.shape[0]) % 3,
        x.shape[0] // 2 + jnp.zeros(x.shape[0] // 2 + 1),
    ),
    "argmax": lambda m, jnp, x: (
        jnp.argmax(x, axis=0),
        jnp.argmin(x, axis=1),
        jnp.argmax(jnp.broadcast_to(x.shape[0], (x.shape[0],))),
    ),
    "argmax_under_vmap": lambda m, jnp, x: m.vmap(lambda r: r * x.shape[0] + jnp.argmax(r))(x),
    "cond": lambda m, jnp, x: m.lax.cond(
        x[0, 0] > 0, lambda y: y + y.shape[0], lambda y: y - jnp.mean(y), x
    ),
    "linalg": lambda m, jnp, x: jnp.linalg.norm(x, axis=1) + jnp.linalg.norm(x),
    "nested_jit": lambda m, jnp, x: m.jit(lambda y: m.jit(lambda z: z * z.shape[0])(y) + 1)(x),
    "remat": lambda m, jnp, x: m.checkpoint(lambda y: jnp.sin(y) * y.shape[0])(x),
    "grad": lambda m, jnp, x: m.grad(lambda y: jnp.sum(jnp.mean(y, axis=0) ** 2))(x),
}


def _text(exported: Any) -> list[str]:
    """The module without locations."""
    return [
        re.sub(r" loc\((?:[^()]|\([^()]*\))*\)", "", line)
        for line in exported.mlir_module().splitlines()
        if not line.startswith("#loc")
    ]


def _export(api: ModuleType, fn: Program, spec: str = "b, ...", **kwargs: Any) -> Any:
    specs = api.export.symbolic_args_specs((np.ones((3, 3), F32),), spec)
    return api.export.export(api.jit(lambda x: fn(api, api.numpy, x)), **kwargs)(*specs)


def _values(out: Any) -> list[Any]:
    return [np.asarray(v).tolist() for v in jax.tree.leaves(out)]


@pytest.mark.parametrize("name", sorted(RETURNING))
def test_a_returned_dimension_is_staged_as_jax_s(name: str) -> None:
    def jaxpr(api: ModuleType) -> str:
        x = api.ShapeDtypeStruct(api.export.symbolic_shape("b, 3"), F32)
        return str(api.make_jaxpr(lambda a: RETURNING[name](api, api.numpy, a))(x))

    assert jaxpr(lamina) == jaxpr(jax)


@pytest.mark.parametrize("name", sorted(RETURNING))
def test_a_returned_dimension_is_exported_as_jax_s(name: str) -> None:
    ours, theirs = _export(lamina, RETURNING[name]), _export(jax, RETURNING[name])
    assert str(ours.out_avals) == str(theirs.out_avals)
    assert _text(ours) == _text(theirs)
    for rows in (1, 4):
        x = np.ones((rows, 3), F32)
        assert _values(ours.call(x)) == _values(theirs.call(x))


def test_dim_as_value_outside_tracing_raises_jax_s_error() -> None:
    def outcome(api: ModuleType) -> tuple[str, str]:
        (b,) = api.export.symbolic_shape("b")
        try:
            b.dimension_as_value()
        except Exception as err:  # the class name and text are compared
            return type(err).__name__, str(err)
        raise AssertionError("no error")

    assert outcome(lamina) == outcome(jax)


@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_functions_take_the_dimension_variables(name: str) -> None:
    ours, theirs = _export(lamina, NESTED[name]), _export(jax, NESTED[name])
    assert _text(ours) == _text(theirs)
    for rows in (1, 2, 5):
        x = np.linspace(-1, 1, rows * 3, dtype=F32).reshape(rows, 3)
        want = _values(theirs.call(x))
        got = _values(ours.call(x))
        assert len(got) == len(want)
        assert all(np.allclose(g, w, atol=1e-5) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("spec", ["b, ...", "2*b, ...", "b + 1, ...", "2*b + 1, ...", "a, 2*b"])
def test_the_public_main_solves_the_specification_as_jax(spec: str) -> None:
    def fn(m: ModuleType, jnp: Any, x: Any) -> Any:
        return jnp.sin(x) * x.shape[0]

    def export(api: ModuleType) -> Any:
        specs = api.export.symbolic_args_specs((np.ones((3, 4), F32),), spec)
        return api.export.export(api.jit(lambda x: fn(api, api.numpy, x)))(*specs)

    ours, theirs = export(lamina), export(jax)
    assert _text(ours) == _text(theirs)

    def outcome(exported: Any, x: Any) -> Any:
        try:
            return _values(exported.call(x))
        except ValueError as err:  # the text is compared
            return str(err)

    for rows in (1, 2, 3, 5):
        x = np.ones((rows, 4), F32)
        assert outcome(ours, x) == outcome(theirs, x)


def test_checks_of_several_arguments_show_each_value_once_as_jax() -> None:
    def export(api: ModuleType, spec: tuple[str, str]) -> Any:
        args = (np.ones((8,), F32), np.ones((4, 3), F32))
        specs = api.export.symbolic_args_specs(args, spec)
        return api.export.export(api.jit(lambda x, y: (x.sum() * y.shape[0], y * 2)))(*specs)

    for spec in (("2*b", "b, 3"), ("b + 1", "b, 3"), ("b + 1", "2*b, 3")):
        ours, theirs = export(lamina, spec), export(jax, spec)
        assert _text(ours) == _text(theirs)
        bad = (np.ones((8,), F32), np.ones((5, 3), F32))
        with pytest.raises(ValueError) as our_error:
            ours.call(*bad)
        with pytest.raises(ValueError) as their_error:
            theirs.call(*bad)
        assert str(our_error.value) == str(their_error.value)


def test_symbolic_shapes_export_for_several_platforms_as_jax() -> None:
    def fn(m: ModuleType, jnp: Any, x: Any) -> Any:
        return x * x.shape[0]

    ours = _export(lamina, fn, platforms=("cpu", "cuda"))
    theirs = _export(jax, fn, platforms=("cpu", "cuda"))
    assert ours.platforms == theirs.platforms
    assert ours.uses_global_constants and theirs.uses_global_constants
    main = [line for line in _text(ours) if "func.func public @main" in line]
    assert main == [line for line in _text(theirs) if "func.func public @main" in line]
    x = np.ones((4, 3), F32)
    assert _values(ours.call(x)) == _values(theirs.call(x))
    assert _values(lamina.jit(ours.call)(x)) == _values(theirs.call(x))


def test_ordered_effects_with_symbolic_shapes_fail_as_in_jax() -> None:
    def outcome(api: ModuleType) -> tuple[str, str]:
        def fn(m: ModuleType, jnp: Any, x: Any) -> Any:
            m.debug.print("rows={}", x.shape[0], ordered=True)
            return x * 2

        try:
            _export(api, fn)
        except Exception as err:  # the class name and text are compared
            return type(err).__name__, str(err)
        raise AssertionError("no error")

    assert outcome(lamina) == outcome(jax)


def test_a_composite_under_symbolic_shapes_fails_verification_as_in_jax() -> None:
    # JAX's decomposition takes the dimension variables, which the composite op does not
    # pass: the module does not verify.
    def fn(m: ModuleType, jnp: Any, x: Any) -> Any:
        return m.lax.composite(lambda y: y * 2, name="my.double")(x)

    for api in (lamina, jax):
        with pytest.raises(ValueError, match="has 1 operand\\(s\\), but decomposition has 2"):
            _export(api, fn)
