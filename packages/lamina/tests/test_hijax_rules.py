"""Hi primitives' optional rules against JAX 0.10.2 (issue 38): a `lin`/`linearized` rule in
place of `vjp_fwd`/`vjp_bwd` (used by `linearize`, as JAX's), JAX's default batching from a
`batch_dim_rule` (the primitive wrapped in a `VmapOf`, printed as JAX prints it), and hi
primitives inside `shard_map` (eager, compiled and differentiated). Values, printed jaxprs
and error class and text are JAX's; a hi type's values cross `shard_map` and are differentiated
through it as in JAX."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

import jax
import jax.experimental.hijax as jax_hijax
import numpy as np
import pytest

import lamina
import lamina.experimental.hijax as lamina_hijax

pytestmark = pytest.mark.oracle
os.environ.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")


def make_prims(api: Any, hijax: Any) -> dict[str, Any]:
    typeof = api.typeof

    class Power(hijax.VJPHiPrimitive):  # type: ignore[misc]  # a class from a module
        """`x ** power`, differentiable only by its linearization rule."""

        def __init__(self, aval: Any, *, power: int) -> None:
            self.in_avals = (aval,)
            self.out_aval = aval
            self.params = {"power": power}
            super().__init__()

        def expand(self, x: Any) -> Any:
            return x**self.power

        def lin(self, nzs_in: Any, x: Any) -> Any:
            return self(x), x

        def linearized(self, x: Any, t: Any) -> Any:
            return t * self.power * power(x, self.power - 1)

    class Mul(hijax.VJPHiPrimitive):  # type: ignore[misc]  # likewise
        """`x * y`, batched by JAX's default from where its result's batch axis goes."""

        def __init__(self, aval: Any) -> None:
            self.in_avals = (aval, aval)
            self.out_aval = aval
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, x: Any, y: Any) -> Any:
            return x * y

        def jvp(self, primals: Any, tangents: Any) -> Any:
            (x, y), (tx, ty) = primals, tangents
            return self(x, y), tx * y + x * ty

        def vjp_fwd(self, nzs: Any, x: Any, y: Any) -> Any:
            return self(x, y), (x, y)

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            return g * res[1], g * res[0]

        def batch_dim_rule(self, axis_data: Any, dims: Any) -> Any:
            return dims[1] if dims[0] is None else dims[0]

    class Square(hijax.VJPHiPrimitive):  # type: ignore[misc]  # likewise
        def __init__(self, aval: Any) -> None:
            self.in_avals = (aval,)
            self.out_aval = aval
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, x: Any) -> Any:
            return x**2

        def jvp(self, primals: Any, tangents: Any) -> Any:
            return self(primals[0]), tangents[0] * 2.0 * primals[0]

        def vjp_fwd(self, nzs: Any, x: Any) -> Any:
            return self(x), x

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            return (g * 2.0 * res,)

    def power(x: Any, p: int) -> Any:
        return Power(typeof(x), power=p)(x)

    def mul(x: Any, y: Any) -> Any:
        return Mul(typeof(x))(x, y)

    def square(x: Any) -> Any:
        return Square(typeof(x))(x)

    return {"power": power, "mul": mul, "square": square}


@pytest.fixture(scope="module")
def both() -> list[tuple[Any, dict[str, Any]]]:
    return [(jax, make_prims(jax, jax_hijax)), (lamina, make_prims(lamina, lamina_hijax))]


def _same(got: Any, want: Any) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)


X = np.arange(3.0, dtype=np.float32)
Y = X + 1
A = np.arange(6.0, dtype=np.float32).reshape(2, 3)
B = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def _programs(api: Any, d: dict[str, Any]) -> dict[str, tuple[Any, tuple[Any, ...]]]:
    jnp = api.numpy
    power, mul, square = d["power"], d["mul"], d["square"]
    cube = lambda x: power(x, 3)  # noqa: E731
    x, y, a, b = jnp.asarray(X), jnp.asarray(Y), jnp.asarray(A), jnp.asarray(B)
    nested = api.vmap(api.vmap(mul, in_axes=(0, None)), in_axes=(2, None), out_axes=2)
    return {
        "lin": (cube, (jnp.float32(2.0),)),
        "linearize_by_lin": (lambda x: api.linearize(cube, x)[1](1.0), (jnp.float32(2.0),)),
        "linearize_jit_by_lin": (
            lambda x: api.linearize(api.jit(cube), x)[1](1.0),
            (jnp.float32(2.0),),
        ),
        "vmap_default": (api.vmap(mul), (x, y)),
        "vmap_default_unbatched_operand": (api.vmap(mul, in_axes=(0, None)), (a, y)),
        "vmap_default_nested": (nested, (b, y)),
        "vmap_default_jit": (api.jit(api.vmap(mul)), (x, y)),
        "grad_of_vmap_default": (
            api.grad(lambda a, y: jnp.sum(api.vmap(mul, in_axes=(0, None))(a, y)), (0, 1)),
            (a, y),
        ),
        "vmap_of_grad_default": (api.vmap(api.grad(lambda x, y: mul(x, y))), (x, y)),
        "jvp_of_vmap_default": (lambda x, y: api.jvp(api.vmap(mul), (x, y), (y, x)), (x, y)),
        "grad_of_checkpoint": (api.grad(api.checkpoint(square)), (jnp.float32(2.0),)),
    }


NAMES = list(_programs(jax, make_prims(jax, jax_hijax)))
JAXPR_DIFFERS = {"vmap_of_grad_default"}
"""Same values; JAX stages `g * 2.0` of the constant cotangent seed, Lamina folds it."""


@pytest.mark.parametrize("name", NAMES)
def test_jaxprs_and_values_match_jax(both: Any, name: str) -> None:
    (J, jd), (L, ld) = both
    jf, jargs = _programs(J, jd)[name]
    lf, largs = _programs(L, ld)[name]
    if name not in JAXPR_DIFFERS:
        assert str(L.make_jaxpr(lf)(*largs)) == str(J.make_jaxpr(jf)(*jargs))
    _same(lf(*largs), jf(*jargs))
    _same(L.jit(lf)(*largs), J.jit(jf)(*jargs))


@pytest.mark.parametrize(
    ("transform", "error"),
    [
        (lambda api, f: api.grad(f), "for grad support, subclass {} must implement `vjp_fwd`"),
        (lambda api, f: lambda x: api.jvp(f, (x,), (x,)), "for jvp support, subclass {} must "
         "implement `jvp`"),
        (lambda api, f: api.vmap(f), "for vmap support, subclass {} must implement `batch` or "
         "`batch_dim_rule`"),
    ],
)  # fmt: skip
def test_a_missing_rule_is_named_as_in_jax(both: Any, transform: Any, error: str) -> None:
    texts = []
    for api, d in both:
        cube = functools.partial(d["power"], p=3)
        with pytest.raises(NotImplementedError) as info:
            transform(api, cube)(api.numpy.arange(3.0))
        texts.append(str(info.value))
    assert texts[0] == texts[1]
    assert texts[1].startswith(error.split("{}")[0])


FOUR_DEVICES = len(lamina.devices()) >= 4 and jax.device_count() >= 4


@pytest.mark.skipif(not FOUR_DEVICES, reason="needs 4 devices (XLA_FLAGS=...device_count=8)")
def test_hi_primitive_inside_shard_map_matches_jax(both: Any) -> None:
    texts, values = [], []
    for api, d in both:
        mesh = api.make_mesh((2, 2), ("i", "j"))
        x = api.device_put(api.numpy.arange(4.0), api.sharding.NamedSharding(mesh, api.P("i")))
        g = api.shard_map(d["square"], mesh=mesh, in_specs=(api.P("i"),), out_specs=api.P("i"))
        loss = api.grad(lambda a, g=g, api=api: api.numpy.sum(g(a)))
        with api.set_mesh(mesh):
            texts.append([str(api.make_jaxpr(g)(x)), str(api.make_jaxpr(loss)(x))])
            values.append([g(x), api.jit(g)(x), loss(x), api.jit(loss)(x), str(g(x).sharding.spec)])
    assert texts[0] == texts[1]
    _same(values[1][:4], values[0][:4])
    assert values[0][4] == values[1][4]


def make_wrapped(api: Any, hijax: Any) -> dict[str, Any]:
    """A hi type wrapping one array, whose product primitive differentiates through
    `shard_map` with partition specs of its own (JAX's `MulTy` example)."""
    jnp, typeof = api.numpy, api.typeof

    @dataclass
    class Wrapped:
        val: Any

    @dataclass(frozen=True)
    class WrappedTy(hijax.HiType):  # type: ignore[misc]  # a class from a module
        ty: Any

        def lo_ty(self) -> list[Any]:
            return [self.ty]

        def lower_val(self, v: Any) -> list[Any]:
            return [v.val]

        def raise_val(self, v: Any) -> Any:
            return Wrapped(v)

        def to_tangent_aval(self) -> Any:
            return WrappedTy(self.ty.to_tangent_aval())

        def shard(self, mesh: Any, manual: Any, check_vma: bool, spec: Any) -> Any:
            return WrappedTy(self.ty.shard(mesh, manual, check_vma, spec.val))

        def unshard(self, mesh: Any, check_vma: bool, spec: Any) -> Any:
            return WrappedTy(self.ty.unshard(mesh, check_vma, spec.val))

    hijax.register_hitype(Wrapped, lambda w: WrappedTy(typeof(w.val)))

    @dataclass(frozen=True)
    class WrappedP(hijax.HiPspec):  # type: ignore[misc]  # likewise
        val: Any

        def to_lo(self) -> list[Any]:
            return [self.val]

        def to_tangent_spec(self) -> Any:
            return self

        def to_ct_spec(self) -> Any:
            return self

    class Mul(hijax.VJPHiPrimitive):  # type: ignore[misc]  # likewise
        def __init__(self, aval: Any) -> None:
            self.in_avals = (aval, aval)
            self.out_aval = aval
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, x: Any, y: Any) -> Any:
            return Wrapped(x.val * y.val)

        def vjp_fwd(self, nzs: Any, x: Any, y: Any) -> Any:
            return mul(x, y), (x, y)

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            return mul(g, res[1]), mul(g, res[0])

    def mul(x: Any, y: Any) -> Any:
        return Mul(typeof(x))(x, y)

    del jnp
    return {"Wrapped": Wrapped, "WrappedP": WrappedP, "mul": mul}


def _vjp_through_shard_map(api: Any, hijax: Any) -> list[Any]:
    d = make_wrapped(api, hijax)
    W, WP, P = d["Wrapped"], d["WrappedP"], api.P
    mesh = api.make_mesh((2,), ("x",))
    sharding = api.sharding.NamedSharding(mesh, P("x"))
    a = api.device_put(api.numpy.arange(8, dtype=api.numpy.float32), sharding)
    b = api.device_put(api.numpy.arange(8, dtype=api.numpy.float32) + 1, sharding)
    specs = (WP(P("x")), WP(P("x")))
    f = api.jit(api.shard_map(d["mul"], mesh=mesh, in_specs=specs, out_specs=WP(P("x"))))
    pullback: Any
    out, pullback = api.vjp(f, W(a), W(b))
    ga, gb = pullback(W(api.device_put(api.numpy.ones(8, api.numpy.float32), sharding)))
    return [out.val, ga.val, gb.val, str(ga.val.sharding.spec)]


@pytest.mark.skipif(not FOUR_DEVICES, reason="needs 4 devices (XLA_FLAGS=...device_count=8)")
def test_vjp_through_shard_map_of_hi_values_matches_jax() -> None:
    want = _vjp_through_shard_map(jax, jax_hijax)
    got = _vjp_through_shard_map(lamina, lamina_hijax)
    _same(got[:3], want[:3])
    assert got[3] == want[3]
