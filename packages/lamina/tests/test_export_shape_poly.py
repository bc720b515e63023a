"""Exporting with symbolic dimensions against JAX: the exported types, the structure of the
module (the public `@main` computing the dimension variables, with its shape assertions, is
JAX's text), calls at several concrete sizes eagerly and under `jit` (values as JAX's), JAX's
errors for shapes that do not fit, serialization round trips and `grad` of a call."""

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

PROGRAMS: dict[str, Program] = {
    "elementwise": lambda m, jnp, x: jnp.sin(x) * 2 + jnp.sum(x, axis=0),
    "shapes": lambda m, jnp, x: (
        jnp.mean(x, axis=0),
        jnp.broadcast_to(x[:, None, :], (x.shape[0], 2, 3)),
        x.reshape(-1),
        jnp.arange(x.shape[0]),
    ),
    "where": lambda m, jnp, x: jnp.where(x > 0, x, 0.0),
    "mlp": lambda m, jnp, x: m.nn.softmax(jnp.tanh(x @ jnp.ones((3, 4), F32)), axis=-1),
    "indexing": lambda m, jnp, x: (x[1:], x[:, 0], x[::-1], x[-1]),
}


def _export(api: ModuleType, name: str, spec: str = "b, ...") -> Any:
    specs = api.export.symbolic_args_specs((np.ones((2, 3), F32),), spec)
    jnp = api.numpy
    return api.export.export(api.jit(lambda x: PROGRAMS[name](api, jnp, x)))(*specs)


def _without_locations(text: str) -> list[str]:
    return [line.split(" loc(")[0] for line in text.splitlines() if not line.startswith("#loc")]


def _function(lines: list[str], name: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if f"@{name}(" in line and "func.func" in line)
    end = next(i for i in range(start, len(lines)) if lines[i] == "  }")
    return lines[start : end + 1]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_exported_types_are_jax_s(name: str) -> None:
    ours, theirs = _export(lamina, name), _export(jax, name)
    assert str(ours.in_avals) == str(theirs.in_avals)
    assert str(ours.out_avals) == str(theirs.out_avals)
    assert ours.uses_global_constants and theirs.uses_global_constants


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_public_main_is_jax_s(name: str) -> None:
    ours = _without_locations(_export(lamina, name).mlir_module())
    theirs = _without_locations(_export(jax, name).mlir_module())
    assert ours[0] == theirs[0]  # the module's attributes: jax.uses_shape_polymorphism = true
    assert _function(ours, "main") == _function(theirs, "main")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_wrapped_main_uses_jax_s_dynamic_ops(name: str) -> None:
    # The same dynamic ops as JAX's; indeed the same module, locations aside.
    def dynamic_ops(api: ModuleType) -> list[str]:
        text = _export(api, name).mlir_module()
        lines = _function(_without_locations(text), "_wrapped_jax_export_main")
        return sorted(re.findall(r"stablehlo\.dynamic_\w+", "\n".join(lines)))

    assert dynamic_ops(lamina) == dynamic_ops(jax)
    text = _export(lamina, name).mlir_module()
    assert _without_locations(text) == _without_locations(_export(jax, name).mlir_module())
    header = next(line for line in text.splitlines() if "func.func private @_wrapped_jax" in line)
    assert '%arg0: tensor<i32> {jax.global_constant = "b"}' in header
    assert "tensor<?x3xf32>" in header


def _close(ours: Any, theirs: Any) -> bool:
    a, b = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    return len(a) == len(b) and all(
        np.shape(x) == np.shape(y) and np.allclose(x, y, atol=1e-6)
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("size", [1, 2, 5])
def test_calls_compute_jax_s_values(name: str, size: int) -> None:
    exported = _export(lamina, name)
    x = np.linspace(-1, 1, size * 3, dtype=F32).reshape(size, 3)
    want = jax.jit(lambda x: PROGRAMS[name](jax, jax.numpy, x))(x)
    assert _close(exported.call(x), want)
    assert _close(lamina.jit(exported.call)(x), want)
    assert _close(_export(jax, name).call(x), want)


CALLS = [
    (np.ones((4, 3), F32), np.ones(4, F32)),
    (np.ones((4, 5), F32), np.ones(4, F32)),
    (np.ones((4, 3), F32), np.ones(5, F32)),
    (np.ones((0, 3), F32), np.ones(0, F32)),
    (np.ones((4, 3), np.int32), np.ones(4, F32)),
    (np.ones((4,), F32), np.ones(4, F32)),
]


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    try:
        return "value", str(np.shape(fn()))
    except Exception as err:  # the class name and text are compared
        return type(err).__name__, str(err)


@pytest.mark.parametrize("args", CALLS, ids=range(len(CALLS)))
def test_calls_with_shapes_that_do_not_fit_raise_jax_s_errors(args: tuple[Any, ...]) -> None:
    def call(api: ModuleType) -> tuple[str, str]:
        specs = api.export.symbolic_args_specs(
            (np.ones((2, 3), F32), np.ones(2, F32)), ("b, 3", "b")
        )
        exported = api.export.export(api.jit(lambda x, y: x * y[:, None]))(*specs)
        return _outcome(lambda: exported.call(*args))

    assert call(lamina) == call(jax)


@pytest.mark.parametrize("rows", [4, 5])
def test_a_linear_specification_is_solved_as_jax_s(rows: int) -> None:
    def call(api: ModuleType) -> tuple[str, str]:
        specs = api.export.symbolic_args_specs((np.ones((2, 3), F32),), ("2*b, 3",))
        exported = api.export.export(api.jit(lambda x: x.reshape((2, -1, 3)) * 2))(*specs)
        assert str(exported.out_avals) == "(ShapedArray(float32[2,b,3]),)"
        return _outcome(lambda: exported.call(np.ones((rows, 3), F32)))

    assert call(lamina) == call(jax)


def test_serialization_keeps_the_symbolic_types_and_the_vjp() -> None:
    exported = _export(lamina, "mlp")
    loaded = lamina.export.deserialize(exported.serialize(vjp_order=1))
    assert str(loaded.in_avals) == "(ShapedArray(float32[b,3]),)"
    assert str(loaded.out_avals) == "(ShapedArray(float32[b,4]),)"
    x = np.linspace(-1, 1, 12, dtype=F32).reshape(4, 3)
    assert _close(loaded.call(x), exported.call(x))

    def loss(api: ModuleType, call: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda x: api.numpy.sum(call(x) * api.numpy.arange(4.0))

    want = jax.grad(loss(jax, lambda x: PROGRAMS["mlp"](jax, jax.numpy, x)))(x)
    assert _close(lamina.jit(lamina.grad(loss(lamina, loaded.call)))(x), want)
    assert _close(lamina.jit(lamina.grad(loss(lamina, exported.call)))(x), want)


def _shape_poly_page(api: ModuleType) -> list[Any]:
    """The examples of JAX's shape polymorphism page, with what they print or raise."""
    jnp, export = api.numpy, api.export
    seen: list[Any] = []
    a, b = export.symbolic_shape("a, b")
    exp = export.export(api.jit(lambda x: jnp.concatenate([x, x], axis=1)))(
        api.ShapeDtypeStruct((a, b), jnp.int32)
    )
    seen += [exp.in_avals, exp.out_avals, exp.call(np.ones((3, 4), dtype=np.int32)).shape]
    x, y = np.ones((3, 1), F32), np.ones((3, 4), F32)
    exp = export.export(api.jit(lambda x, y: x + y))(*export.symbolic_args_specs((x, y), "a, ..."))
    seen += [exp.in_avals, exp.out_avals, exp.call(x, y).shape]

    def flat(x: Any) -> Any:
        return jnp.reshape(x, (x.shape[0] * x.shape[1],)), jnp.sum(x, axis=0) * x.shape[0]

    exp = export.export(api.jit(flat))(api.ShapeDtypeStruct(export.symbolic_shape("a, b"), F32))
    seen += [exp.out_avals, [r.tolist() for r in exp.call(np.arange(6, dtype=F32).reshape(2, 3))]]
    seen.append(
        _outcome(
            lambda: export.export(api.jit(lambda x: x if x.shape[0] >= 4 else -x))(
                api.ShapeDtypeStruct(export.symbolic_shape("b"), F32)
            )
        )
    )
    a, b = export.symbolic_shape("a, b", constraints=("a >= b",))
    exp = export.export(api.jit(lambda x: x[:, : x.shape[1]] if x.shape[0] >= x.shape[1] else x))(
        api.ShapeDtypeStruct((a, b), F32)
    )
    seen += [exp.out_avals, exp.call(np.ones((3, 2), F32)).shape]
    seen.append(_outcome(lambda: exp.call(np.ones((2, 3), F32))))
    return seen


def test_the_examples_of_jax_s_page_run_as_in_jax() -> None:
    ours, theirs = _shape_poly_page(lamina), _shape_poly_page(jax)
    assert len(ours) == len(theirs)
    for mine, jax_s in zip(ours, theirs, strict=True):
        assert str(mine) == str(jax_s)


def test_constraints_survive_serialization() -> None:
    a, b = lamina.export.symbolic_shape("a, b", constraints=("a >= b",))
    exported = lamina.export.export(lamina.jit(lambda x: x * 2))(
        lamina.ShapeDtypeStruct((a, b), F32)
    )
    loaded = lamina.export.deserialize(exported.serialize())
    rows, cols = loaded.in_avals[0].shape
    assert rows >= cols  # decided by the constraint, as in the exporting process
    assert loaded.call(np.ones((3, 2), F32)).shape == (3, 2)
    kind, text = _outcome(lambda: loaded.call(np.ones((2, 3), F32)))
    assert kind == "ValueError" and text.startswith(
        "Input shapes do not match the symbolic shape constraint a >= b. Expected '- b + a' to "
        "be greater or equal to 0, but found -1."
    )
