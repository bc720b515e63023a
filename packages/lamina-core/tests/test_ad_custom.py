"""custom_jvp, custom_vjp and stop_gradient against JAX: printed jaxprs before and after
differentiation, values, errors, and the jnp functions that carry custom rules.

Programs are written once as `make(api, jnp)` and built from both libraries (`api` is
`lamina_core` or `jax`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.custom_derivatives import CustomVJPException, SymbolicZero
from lamina_core.testing import Oracle, check_ad
from lamina_core.trace._values import to_numpy

pytestmark = pytest.mark.oracle

f32 = np.float32
X = f32(0.5)
V = (np.array([0.5, -1.0, 2.0], f32), np.array([0.2, 3.0, -0.5], f32))


def make_cf(api: Any, jnp: ModuleType) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cf(x: Any) -> Any:
        return jnp.sin(x)

    def cf_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return cf(x), 2.0 * t * jnp.cos(x)

    cf.defjvp(cf_jvp)
    return cf


def make_vf(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def vf(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y

    def vf_fwd(x: Any, y: Any) -> Any:
        return vf(x, y), (jnp.cos(x), y)

    def vf_bwd(res: Any, g: Any) -> Any:
        c, y = res
        return (c * g * y, g * 3.0)

    vf.defvjp(vf_fwd, vf_bwd)
    return vf


def make_nondiff(api: Any, jnp: ModuleType) -> Any:
    @partial(api.custom_jvp, nondiff_argnums=(1,))
    def scaled(x: Any, k: Any) -> Any:
        return jnp.sin(x) * k

    @scaled.defjvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def scaled_jvp(k: Any, primals: Any, tangents: Any) -> Any:
        return scaled(primals[0], k), tangents[0] * k * 2.0

    return scaled


def make_apply(api: Any, jnp: ModuleType) -> Any:
    @partial(api.custom_jvp, nondiff_argnums=(0,))
    def apply(g: Any, x: Any) -> Any:
        return g(x)

    @apply.defjvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def apply_jvp(g: Any, primals: Any, tangents: Any) -> Any:
        return apply(g, primals[0]), 3.0 * tangents[0]

    return apply


def make_tree_jvp(api: Any, jnp: ModuleType) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def tf(d: Any) -> Any:
        return {"a": d["x"] * d["y"], "b": (jnp.sin(d["x"]),)}

    @tf.defjvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def tf_jvp(primals: Any, tangents: Any) -> Any:
        (d,), (t,) = primals, tangents
        return tf(d), {"a": t["x"] * d["y"] + t["y"], "b": (t["x"],)}

    return lambda x, y: (lambda o: o["a"] + o["b"][0])(tf({"x": x, "y": y}))


def make_defjvps(api: Any, jnp: ModuleType, first: bool = True) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y

    f.defjvps(
        (lambda g, ans, x, y: jnp.cos(x) * g * y) if first else None,
        lambda g, ans, x, y: jnp.sin(x) * g,
    )
    return f


def make_symbolic_jvp(api: Any, jnp: ModuleType) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any, y: Any) -> Any:
        return x * y

    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (tx, ty) = primals, tangents
        assert type(ty).__name__ == "SymbolicZero" and ty.shape == ()
        return f(x, y), tx * y

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


def make_symbolic_vjp(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any, y: Any) -> Any:
        return x * y

    def fwd(x: Any, y: Any) -> Any:
        assert x.perturbed and not y.perturbed
        return f(x.value, y.value), (x.value, y.value)

    f.defvjp(fwd, lambda res, g: (g * res[1], None), symbolic_zeros=True)
    return f


def make_tree_vjp(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(d: Any, s: Any) -> Any:
        return (d["x"] * s, jnp.cos(d["y"]))

    def fwd(d: Any, s: Any) -> Any:
        return f(d, s), (d, s)

    def bwd(res: Any, ct: Any) -> Any:
        (d, s), (a, b) = res, ct
        return ({"x": a * s, "y": jnp.sin(d["y"]) * b}, None)

    f.defvjp(fwd, bwd)
    return lambda x, y, s: (lambda o: o[0] + o[1])(f({"x": x, "y": y}, s))


def make_list_bwd(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any, y: Any) -> Any:
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: [g * r[1], g * r[0]])
    return f


def make_jit_inside(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any) -> Any:
        return api.jit(jnp.sin)(x)

    f.defvjp(lambda x: (f(x), jnp.cos(x)), lambda c, g: (c * g,))
    return lambda x: f(x) * x


def make_closure_jvp(api: Any, jnp: ModuleType) -> Any:
    def outer(x: Any, y: Any) -> Any:
        @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
        def f(x: Any) -> Any:
            return x * y

        f.defjvp(lambda p, t: (f(p[0]), t[0] * 2.0 * y))
        return f(x)

    return outer


def make_kwargs(api: Any, jnp: ModuleType) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any, y: Any, z: Any = 2.0) -> Any:
        return x * y * z

    f.defjvp(lambda p, t: (f(*p), t[0] * p[1] + t[1] * p[0]))
    return lambda x: f(x, y=x)


Make = Callable[[Any, ModuleType], Callable[..., Any]]


def _jvp_at(f: Make, *tangents: Any) -> Make:
    return lambda api, jnp: lambda *xs: api.jvp(f(api, jnp), xs, tangents)


PRINTED: list[tuple[str, Make, tuple[Any, ...]]] = [
    ("D1 custom_jvp", make_cf, (X,)),
    ("D2 grad custom_jvp", lambda api, jnp: api.grad(make_cf(api, jnp)), (X,)),
    ("jvp custom_jvp", _jvp_at(make_cf, X), (X,)),
    (
        "linearize custom_jvp",
        lambda api, jnp: lambda x: api.linearize(make_cf(api, jnp), x)[1](x),
        (X,),
    ),
    ("D4 custom_vjp", make_vf, (X, X)),
    (
        "D5c vjp custom_vjp",
        lambda api, jnp: lambda x, y, c: api.vjp(make_vf(api, jnp), x, y)[1](c),
        (X, X, X),
    ),
    (
        "X1 jvp custom_vjp",
        lambda api, jnp: lambda x: api.jvp(lambda x: make_vf(api, jnp)(x, 2.0), (x,), (1.0,)),
        (X,),
    ),
    ("grad grad custom_jvp", lambda api, jnp: api.grad(api.grad(make_cf(api, jnp))), (X,)),
    ("grad jit custom_jvp", lambda api, jnp: api.grad(api.jit(make_cf(api, jnp))), (X,)),
    ("jit grad custom_jvp", lambda api, jnp: api.jit(api.grad(make_cf(api, jnp))), (X,)),
    (
        "jvp jit custom_jvp",
        lambda api, jnp: lambda x: api.jvp(api.jit(make_cf(api, jnp)), (x,), (x,)),
        (X,),
    ),
    ("jit grad custom_vjp", lambda api, jnp: api.jit(api.grad(make_vf(api, jnp))), (X, X)),
    ("grad jit custom_vjp", lambda api, jnp: api.grad(api.jit(make_vf(api, jnp))), (X, X)),
    ("grad grad custom_vjp", lambda api, jnp: api.grad(api.grad(make_vf(api, jnp))), (X, X)),
    ("jit inside custom_vjp", lambda api, jnp: api.grad(make_jit_inside(api, jnp)), (X,)),
    ("nondiff_argnums staged", make_nondiff, (X, f32(3.0))),
    (
        "grad nondiff_argnums",
        lambda api, jnp: api.grad(lambda x, k: make_nondiff(api, jnp)(x, k) * k),
        (X, f32(3.0)),
    ),
    (
        "grad nondiff function",
        lambda api, jnp: api.grad(lambda x: make_apply(api, jnp)(jnp.sin, x)),
        (X,),
    ),
    (
        "pytree custom_jvp",
        lambda api, jnp: api.grad(make_tree_jvp(api, jnp), argnums=(0, 1)),
        (X, f32(2.0)),
    ),
    (
        "defjvps grad",
        lambda api, jnp: api.grad(make_defjvps(api, jnp), argnums=(0, 1)),
        (X, f32(2.0)),
    ),
    (
        "defjvps None",
        lambda api, jnp: api.grad(make_defjvps(api, jnp, False), argnums=(0, 1)),
        (X, f32(2.0)),
    ),
    ("defjvps jvp", _jvp_at(make_defjvps, f32(1.0), f32(2.0)), (X, f32(2.0))),
    (
        "symbolic_zeros custom_jvp",
        lambda api, jnp: api.grad(make_symbolic_jvp(api, jnp)),
        (X, f32(2.0)),
    ),
    (
        "symbolic_zeros custom_vjp",
        lambda api, jnp: api.grad(make_symbolic_vjp(api, jnp)),
        (X, f32(2.0)),
    ),
    (
        "pytree custom_vjp",
        lambda api, jnp: api.grad(make_tree_vjp(api, jnp), argnums=(0, 1, 2)),
        (f32(1.0), f32(2.0), f32(3.0)),
    ),
    (
        "bwd returns a list",
        lambda api, jnp: api.grad(make_list_bwd(api, jnp), argnums=(0, 1)),
        (X, f32(2.0)),
    ),
    ("closure custom_jvp", lambda api, jnp: api.grad(make_closure_jvp(api, jnp)), (X, f32(3.0))),
    ("keyword arguments", lambda api, jnp: api.grad(make_kwargs(api, jnp)), (f32(2.0),)),
    ("A12 stop_gradient", lambda api, jnp: api.grad(lambda x: x * api.lax.stop_gradient(x)), (X,)),
    (
        "jvp stop_gradient",
        lambda api, jnp: lambda x: api.jvp(lambda x: api.lax.stop_gradient(x) * x, (x,), (x,)),
        (X,),
    ),
    (
        "stop_gradient pytree",
        lambda api, jnp: lambda x: api.lax.stop_gradient({"a": x, "b": (x,)}),
        (X,),
    ),
    ("grad logaddexp", lambda api, jnp: api.grad(lambda x, y: jnp.sum(jnp.logaddexp(x, y))), V),
    ("jvp logaddexp2", lambda api, jnp: lambda x, y: api.jvp(jnp.logaddexp2, (x, y), (y, x)), V),
    (
        "grad logaddexp at -inf",
        lambda api, jnp: api.grad(jnp.logaddexp, argnums=(0, 1)),
        (f32(-np.inf), f32(-np.inf)),
    ),
]

# Lamina's eager values are NumPy arrays, so a bwd rule's arithmetic on grad's (concrete)
# cotangent seed and a constant folds in NumPy, where JAX's array stages `mul 1.0:f32[] 3.0`.
VALUES_ONLY = {"jit grad custom_vjp", "grad grad custom_vjp"}


@pytest.mark.parametrize(("name", "make", "args"), PRINTED, ids=[c[0] for c in PRINTED])
def test_prints_and_computes_as_jax(
    oracle: Oracle, name: str, make: Make, args: tuple[Any, ...]
) -> None:
    ours_f, theirs_f = make(lamina_core, lamina_core.numpy), make(oracle.jax, oracle.jnp)
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    assert (str(ours) == str(theirs)) != (name in VALUES_ONLY)
    if name.startswith("X1"):
        return  # forward mode of a custom_vjp function stages, but cannot be evaluated
    got = oracle.evaluate(ours, lamina_core.tree.tree_util.tree_leaves(args))
    want = oracle.jax.tree_util.tree_leaves(theirs_f(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(to_numpy(g)), np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_jnp_functions_with_custom_rules_differentiate_as_jax(oracle: Oracle, name: str) -> None:
    check_ad(oracle, lambda jnp, lax: getattr(jnp, name), *V)


# --- errors: JAX's types and messages --------------------------------------------------------


def _custom_vjp(api: Any, fwd: Any, bwd: Any) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def f(x: Any) -> Any:
        return x

    f.defvjp(fwd, bwd)
    return f


def _custom_jvp(api: Any, rule: Any, fun: Any = lambda x: x) -> Any:
    f = api.custom_jvp(fun)
    f.__name__ = "f"
    f.fun.__name__ = "f"
    f.defjvp(rule)
    return f


def _bad_bwd(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def g(x: Any, y: Any) -> Any:
        return x * y

    g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: (ct,))
    return api.grad(g)(X, X)


def _nondiff_tracer(api: Any, jnp: ModuleType) -> Any:
    @partial(api.custom_vjp, nondiff_argnums=(1,))
    def f(x: Any, k: Any) -> Any:
        return x * k

    f.defvjp(lambda x, k: (x * k, x), lambda k, x, ct: (ct * k,))
    return api.grad(lambda x: f(x, x))(X)


def _closed_over(api: Any, jnp: ModuleType) -> Any:
    @api.jit  # type: ignore[untyped-decorator]  # JAX's is untyped
    def g(y: Any) -> Any:
        @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
        def f(x: Any) -> Any:
            return x * y

        f.defvjp(lambda x: (f(x), None), lambda r, ct: (ct,))
        return f(y)

    return api.grad(g)(X)


def _defjvps_nondiff(api: Any, jnp: ModuleType) -> Any:
    f = partial(api.custom_jvp, nondiff_argnums=(0,))(lambda k, x: x)
    f.defjvps(None)


def _bad_keyword(api: Any, jnp: ModuleType) -> Any:
    def f(x: Any) -> Any:
        return x

    return _custom_jvp(api, lambda p, t: (p[0], t[0]), f)(X, z=1)


ERRORS: dict[str, Callable[[Any, ModuleType], Any]] = {
    "F5 bwd structure": _bad_bwd,
    "D6 jvp of custom_vjp": lambda api, jnp: api.jvp(
        lambda x: make_vf(api, jnp)(x, 2.0), (X,), (1.0,)
    ),
    "fwd not a pair": lambda api, jnp: api.grad(_custom_vjp(api, lambda x: x, lambda r, g: (g,)))(
        X
    ),
    "fwd structure under jit": lambda api, jnp: api.grad(
        api.jit(_custom_vjp(api, lambda x: ((x, x), None), lambda r, g: (g,)))
    )(X),
    "bwd type": lambda api, jnp: api.grad(
        _custom_vjp(api, lambda x: (x, None), lambda r, g: (jnp.ones(3),))
    )(X),
    "bwd not a tuple": lambda api, jnp: api.grad(
        _custom_vjp(api, lambda x: (x, None), lambda r, g: g)
    )(X),
    "jvp rule not a pair": lambda api, jnp: api.jvp(
        _custom_jvp(api, lambda p, t: (p[0], t[0], 1)), (X,), (X,)
    ),
    "jvp rule tree": lambda api, jnp: api.jvp(
        _custom_jvp(api, lambda p, t: (p[0], (t[0],))), (X,), (X,)
    ),
    "jvp rule primal tree under jit": lambda api, jnp: api.jvp(
        api.jit(_custom_jvp(api, lambda p, t: ((p[0],), (t[0],)))), (X,), (X,)
    ),
    "jvp rule tangent type": lambda api, jnp: api.jvp(
        _custom_jvp(api, lambda p, t: (p[0], jnp.ones(3))), (X,), (X,)
    ),
    "jvp rule tangent types": lambda api, jnp: api.jvp(
        _custom_jvp(api, lambda p, t: ((p[0], p[0]), (jnp.ones(3), t[0])), lambda x: (x, x)),
        (X,),
        (X,),
    ),
    "jvp rule primal type under jit": lambda api, jnp: api.jvp(
        api.jit(_custom_jvp(api, lambda p, t: (jnp.ones(3), jnp.ones(3)))), (X,), (X,)
    ),
    "no jvp rule": lambda api, jnp: api.custom_jvp(lambda x: x)(X),
    "no vjp rule": lambda api, jnp: api.custom_vjp(lambda x: x)(X),
    "defjvps with nondiff_argnums": _defjvps_nondiff,
    "unknown keyword": _bad_keyword,
    "nondiff tracer in custom_vjp": _nondiff_tracer,
    "closed-over value in custom_vjp": _closed_over,
}


def _error(api: Any, jnp: ModuleType, call: Callable[[Any, ModuleType], Any]) -> str:
    with pytest.raises(Exception) as info:
        call(api, jnp)
    return f"{type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jax(oracle: Oracle, name: str) -> None:
    call = ERRORS[name]
    assert _error(lamina_core, lamina_core.numpy, call) == _error(oracle.jax, oracle.jnp, call)


# --- Lamina-only checks ----------------------------------------------------------------------


def test_symbolic_zero_answers_for_its_type() -> None:
    z = SymbolicZero.from_primal_value(np.ones((2, 3), f32))
    assert (z.shape, z.dtype, z.ndim, repr(z)) == ((2, 3), np.dtype(f32), 2, "SymbolicZero")


def test_differentiating_a_closed_over_value_of_custom_vjp_is_an_error() -> None:
    # JAX lets the tracer escape here (UnexpectedTracerError on use); Lamina says why.
    def outer(y: Any) -> Any:
        @lamina_core.custom_vjp
        def f(x: Any) -> Any:
            return x * y

        f.defvjp(lambda x: (x * y, None), lambda r, g: (g * 2.0,))
        return f(y)

    with pytest.raises(CustomVJPException):
        lamina_core.grad(outer)(X)


def test_optimize_remat_is_accepted() -> None:
    @lamina_core.custom_vjp
    def f(x: Any) -> Any:
        return lamina_core.numpy.sin(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * 2.0,), optimize_remat=True)
    assert float(lamina_core.grad(f)(X)) == 2.0
