"""`shard_map` and `smap` without `in_specs` (`in_axes`), against JAX 0.10.2: over mesh axes
all Explicit, each argument's spec is read from its type (the manual axes of its sharding);
over a mesh all manual and Explicit, an `in_specs` the arguments' types contradict raises
JAX's error. Each program runs in Lamina and in JAX on 8 devices: printed jaxprs
byte-identical, result types and values equal, errors of the same class and message.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

import lamina
from lamina import lax as llax
from lamina.sharding import NamedSharding, PartitionSpec

jax = pytest.importorskip("jax")

pytestmark = pytest.mark.oracle

if len(lamina.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )


class Side(NamedTuple):
    api: Any
    lax: Any
    P: Any
    NamedSharding: Any
    mesh: Any


def _side(api: ModuleType, lax_: Any, p: Any, ns: Any) -> Side:
    return Side(api, lax_, p, ns, api.make_mesh((2, 4), ("x", "y")))  # Explicit axes


LAMINA = _side(lamina, llax, PartitionSpec, NamedSharding)
JAX = _side(jax, jax.lax, jax.sharding.PartitionSpec, jax.sharding.NamedSharding)
A = (np.arange(32, dtype=np.float32).reshape(8, 4) - 10) / 10
V = np.arange(8, dtype=np.float32) / 4


def put(s: Side, a: np.ndarray, *spec: Any) -> Any:
    return s.api.device_put(a, s.NamedSharding(s.mesh, s.P(*spec)))


Built = tuple[Callable[..., Any], tuple[Any, ...]]


def _scale_and_shift(s: Side) -> Built:
    f = s.api.shard_map(lambda u, v: (u * 2, v + 1), out_specs=(s.P("x", "y"), s.P("y")))
    return f, (put(s, A, "x", "y"), put(s, V, "y"))


def _programs() -> dict[str, Callable[[Side], Built]]:
    return {
        "full_manual": _scale_and_shift,
        "full_manual_jit": lambda s: (s.api.jit(_scale_and_shift(s)[0]), _scale_and_shift(s)[1]),
        "partial_manual_keeps_explicit_y": lambda s: (
            s.api.shard_map(lambda u: u * 2, out_specs=s.P("x"), axis_names={"x"}),
            (put(s, A, "x", "y"),),
        ),
        "tuple_entry_full_manual": lambda s: (
            s.api.shard_map(lambda u: u, out_specs=s.P(("x", "y"))),
            (put(s, A, ("x", "y")),),
        ),
        "tuple_entry_leading_manual_axis": lambda s: (
            s.api.shard_map(lambda u: u, out_specs=s.P("x"), axis_names={"x"}),
            (put(s, A, ("x", "y")),),
        ),
        "unplaced_scalar_replicated": lambda s: (
            s.api.shard_map(lambda u: u, out_specs=s.P(), axis_names={"x"}),
            (np.float32(1.0),),
        ),
        "python_scalar_psum": lambda s: (
            s.api.shard_map(lambda u: s.lax.psum(u, "y"), out_specs=s.P()),
            (2.0,),
        ),
        "pytree_argument_psum": lambda s: (
            s.api.jit(
                s.api.shard_map(
                    lambda d: s.lax.psum(d["k"], "x") + d["b"], out_specs=s.P(None, "y")
                )
            ),
            ({"k": put(s, A, "x", "y"), "b": put(s, A[:4], None, "y")},),
        ),
        "smap_without_in_axes": lambda s: (
            s.api.smap(lambda u: u * 3, out_axes=0, axis_name="x"),
            (put(s, A, "x", "y"),),
        ),
        "smap_without_in_axes_over_y": lambda s: (
            s.api.smap(lambda u, v: (u, v * 2), out_axes=(1, 0), axis_name="y"),
            (put(s, A, "x", "y"), put(s, V, "y")),
        ),
    }


PROGRAMS = _programs()


def _run(s: Side, name: str) -> tuple[str, list[str], list[np.ndarray]]:
    with s.api.set_mesh(s.mesh):
        f, args = PROGRAMS[name](s)
        text = str(s.api.make_jaxpr(f)(*args))
        outs = s.api.tree.leaves(f(*args))
        return text, [str(s.api.typeof(o)) for o in outs], [np.asarray(o) for o in outs]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_in_specs_inferred_from_argument_types_as_jax(name: str) -> None:
    text, types, values = _run(LAMINA, name)
    want_text, want_types, want_values = _run(JAX, name)
    assert text == want_text
    assert types == want_types
    assert len(values) == len(want_values)
    for got, want in zip(values, want_values, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _error(s: Side, build: Callable[[Side], Built]) -> tuple[type[BaseException], str]:
    with s.api.set_mesh(s.mesh):
        f, args = build(s)
        with pytest.raises(Exception) as err:  # any class: it is compared with JAX's below
            s.api.make_jaxpr(f)(*args)
    return err.type, str(err.value)


ERRORS: dict[str, Callable[[Side], Built]] = {
    # A non-manual axis splits the dimension before the manual one: no manual split exists.
    "manual_axis_not_leading_its_entry": lambda s: (
        s.api.shard_map(lambda u: u, out_specs=s.P("y"), axis_names={"y"}),
        (put(s, A, ("x", "y")),),
    ),
    "in_specs_coarser_than_type": lambda s: (
        s.api.shard_map(lambda u: u, in_specs=s.P("x"), out_specs=s.P("x")),
        (put(s, A, "x", "y"),),
    ),
    "in_specs_on_unplaced_argument": lambda s: (
        s.api.shard_map(lambda u: u, in_specs=s.P("x", "y"), out_specs=s.P("x", "y")),
        (np.ones((8, 4), np.float32),),
    ),
    "in_specs_with_unconstrained_entry": lambda s: (
        s.api.shard_map(lambda u: u, in_specs=s.P(s.P.UNCONSTRAINED, "y"), out_specs=s.P("x", "y")),
        (put(s, A, "x", "y"),),
    ),
    "mesh_other_than_context": lambda s: (
        s.api.shard_map(
            lambda u: u,
            mesh=s.api.make_mesh((4, 2), ("x", "y")),
            in_specs=s.P("x"),
            out_specs=s.P("x"),
        ),
        (np.ones((8, 4), np.float32),),
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_in_specs_errors_as_jax(name: str) -> None:
    assert _error(LAMINA, ERRORS[name]) == _error(JAX, ERRORS[name])


def test_in_specs_matching_types_need_no_reshard() -> None:
    def run(s: Side) -> str:
        with s.api.set_mesh(s.mesh):
            f = s.api.shard_map(lambda u: u, in_specs=s.P("x", "y"), out_specs=s.P("x", "y"))
            return str(s.api.make_jaxpr(f)(put(s, A, "x", "y")))

    assert run(LAMINA) == run(JAX)


def test_partial_manual_in_specs_need_not_match_types() -> None:
    """Only a fully manual shard_map checks its in_specs against the arguments' types."""

    def run(s: Side) -> tuple[str, np.ndarray]:
        with s.api.set_mesh(s.mesh):
            f = s.api.shard_map(
                lambda u: u + 1, in_specs=s.P("y"), out_specs=s.P("y"), axis_names={"y"}
            )
            x = put(s, V, None)
            return str(s.api.make_jaxpr(f)(x)), np.asarray(f(x))

    (text, value), (want_text, want_value) = run(LAMINA), run(JAX)
    assert text == want_text
    np.testing.assert_array_equal(value, want_value)
