"""Sharding in types over Explicit mesh axes (issue 20): a value split over a `make_mesh`
mesh carries its spec in its type (`f32[8@x,4@y]`), every staged primitive splits its result
as JAX's sharding rule does, and the lowered module constrains each result to its type
(`sdy.sharding_constraint`). Each program runs on 8 devices in Lamina and in JAX: printed
jaxprs byte-identical, result types and placements equal, values equal, lowered modules
equal (locations aside); conflicting specs raise JAX's errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina import lax as llax
from lamina.sharding import AxisType, NamedSharding, PartitionSpec
from lamina_core.ir._avals import ShapedArray
from lamina_core.ir._explicit_sharding import ShardingTypeError
from lamina_core.ir._mesh import AbstractMesh
from lamina_core.testing import sweep

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

if len(lamina.devices()) < 8 or jax.device_count() < 8:
    pytest.skip(
        "needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)",
        allow_module_level=True,
    )


class Side(NamedTuple):
    api: Any
    np: Any
    lax: Any
    P: Any
    NamedSharding: Any
    mesh: Any


def _side(api: ModuleType, np_: Any, lax_: Any, p: Any, ns: Any) -> Side:
    return Side(api, np_, lax_, p, ns, api.make_mesh((2, 4), ("x", "y")))


LAMINA = _side(lamina, lnp, llax, PartitionSpec, NamedSharding)
JAX = _side(jax, jnp, jax.lax, jax.sharding.PartitionSpec, jax.sharding.NamedSharding)
A = (np.arange(32, dtype=np.float32).reshape(8, 4) - 10) / 10
B = (np.arange(16, dtype=np.float32).reshape(4, 4) - 5) / 10


def put(s: Side, a: np.ndarray, *spec: Any) -> Any:
    return s.api.device_put(a, s.NamedSharding(s.mesh, s.P(*spec)))


Built = tuple[Callable[..., Any], tuple[Any, ...]]


def _programs() -> dict[str, Callable[[Side], Built]]:
    def xy(s: Side) -> Any:
        return put(s, A, "x", "y")

    def rows(s: Side) -> Any:
        return put(s, A, "x", None)

    return {
        "sin_mul": lambda s: (lambda x: s.np.sin(x) * 2.0, (xy(s),)),
        "elementwise_chain": lambda s: (
            lambda x: s.np.tanh(x) * x - s.np.exp(x) / 2,
            (xy(s),),
        ),
        "broadcast_add": lambda s: (
            lambda x, y: x + y,
            (rows(s), put(s, np.ones((1, 4), np.float32), None, "y")),
        ),
        "sum_axis0": lambda s: (lambda x: s.np.sum(x, axis=0), (xy(s),)),
        "sum_all": lambda s: (lambda x: s.np.sum(x), (xy(s),)),
        "max_axis1": lambda s: (lambda x: s.np.max(x, axis=1), (xy(s),)),
        "mean_axis0": lambda s: (lambda x: s.np.mean(x, axis=0), (xy(s),)),
        "argmax": lambda s: (lambda x: s.np.argmax(x, axis=1), (rows(s),)),
        "transpose": lambda s: (lambda x: x.T, (xy(s),)),
        "dot_free": lambda s: (lambda a, b: a @ b, (rows(s), put(s, B, None, "y"))),
        "dot_out_sharding": lambda s: (
            lambda a, b: s.np.matmul(a, b, out_sharding=s.NamedSharding(s.mesh, s.P("x"))),
            (rows(s), put(s, B, "y", None)),
        ),
        "reshape_split": lambda s: (lambda x: x.reshape(2, 4, 4), (rows(s),)),
        "reshape_merge": lambda s: (lambda x: x.reshape(32), (rows(s),)),
        "reshape_singleton": lambda s: (lambda x: x.reshape(8, 1, 4), (xy(s),)),
        "expand_dims": lambda s: (lambda x: x[None], (xy(s),)),
        "broadcast_to": lambda s: (lambda x: s.np.broadcast_to(x, (3, 8, 4)), (xy(s),)),
        "slice": lambda s: (lambda x: x[:, 1:3], (rows(s),)),
        "squeeze": lambda s: (lambda x: s.np.squeeze(x.reshape(8, 1, 4), 1), (xy(s),)),
        "full_concrete_sharding": lambda s: (
            lambda x: s.lax.full((8, 4), 2.0, sharding=s.NamedSharding(s.mesh, s.P("x", "y"))) + x,
            (xy(s),),
        ),
        "full_abstract_sharding": lambda s: (
            lambda x: (
                s.lax.full(
                    (8, 4), 2.0, sharding=s.NamedSharding(s.mesh.abstract_mesh, s.P("x", "y"))
                )
                + x
            ),
            (xy(s),),
        ),
        "concatenate": lambda s: (lambda x: s.np.concatenate([x, x], axis=1), (rows(s),)),
        "where": lambda s: (lambda x: s.np.where(x > 1.0, x, 0.0), (xy(s),)),
        "astype": lambda s: (lambda x: x.astype(s.np.int32), (xy(s),)),
        "softmax": lambda s: (lambda x: s.api.nn.softmax(x, axis=-1), (rows(s),)),
        "iota_sharded": lambda s: (
            lambda x: (
                x
                + s.lax.broadcasted_iota(
                    s.np.float32, (8, 4), 0, out_sharding=s.NamedSharding(s.mesh, s.P("x", "y"))
                )
            ),
            (xy(s),),
        ),
        "reshard": lambda s: (
            lambda x: s.api.sharding.reshard(x, s.NamedSharding(s.mesh, s.P(None, "x"))) * 2,
            (xy(s),),
        ),
        "grad_sin_w": lambda s: (
            s.api.grad(lambda x, w: s.np.sum(s.np.sin(x) * w)),
            (xy(s), xy(s)),
        ),
        "grad_dot_tanh": lambda s: (
            s.api.grad(lambda a, b: s.np.sum(s.np.tanh(a @ b))),
            (rows(s), put(s, B, None, "y")),
        ),
        "grad_dot_both": lambda s: (
            s.api.grad(lambda a, b: s.np.sum(a @ b), argnums=(0, 1)),
            (rows(s), put(s, B, "y", None)),
        ),
        "jvp": lambda s: (
            lambda x: s.api.jvp(lambda v: s.np.sin(v) * v, (x,), (x,))[1],
            (xy(s),),
        ),
        "cond": lambda s: (
            lambda x: s.lax.cond(True, lambda v: v * 2, lambda v: v + 1, x),
            (xy(s),),
        ),
        "fori_loop": lambda s: (lambda x: s.lax.fori_loop(0, 3, lambda i, v: v * 2, x), (xy(s),)),
        "scan": lambda s: (
            lambda x: s.lax.scan(lambda c, r: (c + r, r * 2), x[0], x),
            (put(s, A, None, "y"),),
        ),
        "cumsum": lambda s: (lambda x: s.np.cumsum(x, axis=1), (rows(s),)),
        "vmap_rows": lambda s: (s.api.vmap(lambda r: s.np.sin(r) * 2.0), (rows(s),)),
        "vmap_in_axis1": lambda s: (
            s.api.vmap(lambda c: s.np.sin(c) + 1, in_axes=1, out_axes=1),
            (xy(s),),
        ),
        "vmap_zeros_like": lambda s: (
            s.api.vmap(lambda r: s.np.zeros_like(r) + r),
            (xy(s),),
        ),
        "vmap_grad": lambda s: (
            s.api.vmap(s.api.grad(lambda r: s.np.sum(s.np.sin(r) * 2))),
            (xy(s),),
        ),
        "vmap_sum": lambda s: (s.api.vmap(lambda r: s.np.sum(r)), (xy(s),)),
    }


PROGRAMS = _programs()
_LOCATIONS = re.compile(r"loc\(.*?\)|#loc.*")


def _built(name: str, side: Side) -> Built:
    return PROGRAMS[name](side)


@pytest.mark.parametrize("name", sweep(list(PROGRAMS), list(PROGRAMS), unpack=False))
def test_program_as_jax(name: str) -> None:
    """The printed jaxpr, the lowered module, and the jitted result (type, placement,
    values) are JAX's."""
    fun, args = _built(name, LAMINA)
    jfun, jargs = _built(name, JAX)
    assert str(lamina.make_jaxpr(fun)(*args)) == str(jax.make_jaxpr(jfun)(*jargs))
    ours = _LOCATIONS.sub("", lamina.jit(fun).lower(*args).as_text())
    assert ours == _LOCATIONS.sub("", jax.jit(jfun).lower(*jargs).as_text())
    out = lamina.tree_util.tree_leaves(lamina.jit(fun)(*args))
    expected = jax.tree_util.tree_leaves(jax.jit(jfun)(*jargs))
    for a, b in zip(out, expected, strict=True):
        assert str(lamina.typeof(a)) == str(jax.typeof(b))
        assert str(a.sharding.spec) == str(b.sharding.spec)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "name", ["sin_mul", "sum_axis0", "transpose", "reshape_split", "broadcast_to", "vmap_sum"]
)
def test_eager_result_types_as_jax(name: str) -> None:
    """Eager results are typed (and placed) as JAX's: `typeof(jnp.sin(x))` keeps the spec."""
    fun, args = _built(name, LAMINA)
    jfun, jargs = _built(name, JAX)
    out, expected = fun(*args), jfun(*jargs)
    assert str(lamina.typeof(out)) == str(jax.typeof(expected))
    assert str(out.sharding.spec) == str(expected.sharding.spec)
    np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "spec", [("x", "y"), (("x", "y"), None), ("y", None), (("y", "x"), None), ()]
)
def test_device_put_types_print_as_jax(spec: tuple[Any, ...]) -> None:
    ours = put(LAMINA, A, *spec)
    theirs = put(JAX, A, *spec)
    assert str(lamina.typeof(ours)) == str(jax.typeof(theirs))
    assert lamina.typeof(ours).str_short(True) == jax.typeof(theirs).str_short(short_dtypes=True)
    assert str(_aval(ours).sharding.spec) == str(jax.typeof(theirs).sharding.spec)


def _aval(x: Any) -> ShapedArray:
    aval = lamina.typeof(x)
    assert isinstance(aval, ShapedArray)
    return aval


def test_types_compare_by_spec() -> None:
    mesh = AbstractMesh((2, 4), ("x", "y"), (AxisType.Explicit,) * 2)
    a = ShapedArray((8, 4), np.dtype(np.float32), mesh=mesh, spec=("x", None))
    b = ShapedArray((8, 4), np.dtype(np.float32), mesh=mesh, spec=("y", None))
    assert a != b and a == a.update() and hash(a) == hash(a.update())
    assert a.update(spec=(None, None)).spec is None  # unsplit types hold no spec
    assert a.dec_rank(8, 0).spec is None and a.inc_rank(3, 0).spec == (None, "x", None)
    with pytest.raises(ValueError, match="does not evenly divide the dimension size 3"):
        ShapedArray((3, 4), np.dtype(np.float32), mesh=mesh, spec=("x", None))


def test_auto_axes_types_are_unchanged() -> None:
    """Over Auto axes the spec stays out of the type (JAX's, too)."""
    mesh = lamina.make_mesh((8,), ("i",), axis_types=(AxisType.Auto,))
    x = lamina.device_put(A, NamedSharding(mesh, PartitionSpec("i")))
    assert str(lamina.typeof(x)) == "float32[8,4]" and _aval(x).spec is None
    text = lamina.jit(lambda v: lnp.sin(v) * 2).lower(x).as_text()
    assert "sharding_constraint" not in text


def _errors(name: str, side: Side) -> Any:
    s = side
    if name == "broadcast_conflict":
        return lambda: s.api.make_jaxpr(lambda a, b: a + b)(
            put(s, A, "x", None), put(s, A, "y", None)
        )
    if name == "dot_contracting":
        return lambda: s.api.make_jaxpr(lambda a, b: a @ b)(
            put(s, A, None, "y"), put(s, B, "y", None)
        )
    if name == "dot_contracting_mismatch":
        return lambda: s.api.make_jaxpr(lambda a, b: a @ b)(
            put(s, A, None, "y"), put(s, B, "x", None)
        )
    if name == "cumsum_split_axis":
        return lambda: s.api.make_jaxpr(lambda a: s.np.cumsum(a, axis=0))(put(s, A, "x", "y"))
    if name == "reshape_unsupported":
        return lambda: s.api.make_jaxpr(lambda a: a.reshape(4, 8))(put(s, A, "x", "y"))
    if name == "select_cases":
        return lambda: s.api.make_jaxpr(lambda c, a, b: s.lax.select(c, a, b))(
            put(s, np.ones((8, 4), bool), "x", None),
            put(s, A, "x", None),
            put(s, A, None, "y"),
        )
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name",
    [
        "broadcast_conflict",
        "dot_contracting",
        "dot_contracting_mismatch",
        "reshape_unsupported",
        "select_cases",
        "cumsum_split_axis",
    ],
)
def test_conflicting_specs_raise_jax_errors(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        _errors(name, JAX)()
    with pytest.raises(ShardingTypeError) as ours:
        _errors(name, LAMINA)()
    assert type(theirs.value).__name__ == "ShardingTypeError"
    # JAX prints its AbstractMesh with device details: compare up to the mesh's repr.
    mesh_repr = re.compile(r"AbstractMesh\([^)]*\)")
    assert mesh_repr.sub("M", str(ours.value)) == mesh_repr.sub("M", str(theirs.value))


def test_primitive_without_rule_names_itself() -> None:
    x = put(LAMINA, A, "x", None)
    with pytest.raises(NotImplementedError, match=r"'sort' has no sharding rule.*Explicit"):
        lamina.make_jaxpr(lambda v: lnp.sort(v, axis=1))(x)
