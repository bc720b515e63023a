# ruff: noqa: E501  (one case per line reads best)
"""vmap with the other transformations, against JAX: the call primitives' batching rules
(custom_jvp_call, custom_vjp_call, remat2, name), jacfwd/jacrev/hessian, eval_shape,
custom_vmap/sequential_vmap, and vmap composed with grad, jvp, jit and linearize.

Programs are written once as `make(api, jnp)` and built from both libraries (`api` is
`lamina_core` or `jax`); `check` compares the printed jaxprs, JAX's values, and (for vmap
cases) a per-example loop.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import tree_util
from lamina_core.testing import Oracle
from lamina_core.trace._typecheck import check_jaxpr
from lamina_core.trace._values import to_numpy

pytestmark = pytest.mark.oracle

f32 = np.float32
Make = Callable[[Any, ModuleType], Callable[..., Any]]


def arr(*shape: int, lo: float = -0.8, hi: float = 0.9) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    return np.linspace(lo, hi, n).reshape(shape).astype(f32)


def _close(got: Any, want: Any, what: str) -> None:
    g, w = np.asarray(to_numpy(got)), np.asarray(want)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=what)
    else:
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=what)


def check(
    oracle: Oracle, make: Make, *args: Any, printed: bool = True, loop: Any = None
) -> lamina_core.ClosedJaxpr:
    """`make(api, jnp)` built from Lamina and from JAX: the same text (if `printed`), JAX's
    values (jitted) from Lamina's jaxpr and eagerly; with `loop=(make_one, in_axes)`, also a per-example
    loop of JAX's `make_one` (the function that was vmapped)."""
    ours_f = make(lamina_core, lamina_core.numpy)
    theirs_f = make(oracle.jax, oracle.jnp)
    ours: lamina_core.ClosedJaxpr = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    if printed:
        assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    check_jaxpr(ours)
    # JAX's values under one jit: op by op, its eager transformations compile every op.
    want = oracle.jax.tree_util.tree_leaves(oracle.jit(theirs_f)(*args))
    got = oracle.evaluate(ours, tree_util.tree_leaves(args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        _close(g, w, "jaxpr vs jax")
    eager = tree_util.tree_leaves(ours_f(*args))
    for g, w in zip(eager, want, strict=True):
        _close(g, w, "eager vs jax")
    if loop is not None:
        make_one, in_axes = loop
        one = oracle.jit(make_one(oracle.jax, oracle.jnp))
        size = next(np.shape(a)[d] for a, d in zip(args, in_axes, strict=True) if d is not None)
        rows = [
            one(
                *[
                    a if d is None else np.take(a, i, axis=d)
                    for a, d in zip(args, in_axes, strict=True)
                ]
            )
            for i in range(size)
        ]
        columns = zip(*[oracle.jax.tree_util.tree_leaves(r) for r in rows], strict=True)
        for g, col in zip(got, columns, strict=True):
            _close(g, np.stack([np.asarray(c) for c in col]), "vmap vs loop")
    return ours


# --- programs with custom rules -------------------------------------------------------------


def make_cj(api: Any, jnp: ModuleType) -> Any:
    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cj(x: Any) -> Any:
        return jnp.sin(x)

    def cj_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return cj(x), jnp.cos(x) * t * 2.0

    cj.defjvp(cj_jvp)
    return cj


def make_cj2(api: Any, jnp: ModuleType) -> Any:
    """Two arguments, a pytree output, and a closed-over constant."""
    scale = np.array([1.5, -2.0], f32)

    @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cj2(x: Any, y: Any) -> Any:
        return {"p": x * y * scale, "s": jnp.sin(x)}

    def cj2_jvp(primals: Any, tangents: Any) -> Any:
        (x, y), (tx, ty) = primals, tangents
        return cj2(x, y), {"p": (tx * y + x * ty) * scale, "s": jnp.cos(x) * tx}

    cj2.defjvp(cj2_jvp)
    return cj2


def make_cv(api: Any, jnp: ModuleType) -> Any:
    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cv(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y

    def cv_fwd(x: Any, y: Any) -> Any:
        return cv(x, y), (jnp.cos(x), y)

    def cv_bwd(res: Any, g: Any) -> Any:
        c, y = res
        return (c * g * y, g * 3.0)

    cv.defvjp(cv_fwd, cv_bwd)
    return cv


def make_cv_sz(api: Any, jnp: ModuleType) -> Any:
    """symbolic_zeros: bwd sees SymbolicZero cotangents, returns None for y."""

    @api.custom_vjp  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cvz(x: Any, y: Any) -> Any:
        return jnp.exp(x) * y, x * 2.0

    def cvz_fwd(x: Any, y: Any) -> Any:
        return cvz(x.value, y.value), (jnp.exp(x.value), y.value)

    def cvz_bwd(res: Any, g: Any) -> Any:
        e, y = res
        g1, g2 = g
        out = e * y * g1
        if type(g2).__name__ != "SymbolicZero":
            out = out + 2.0 * g2
        return (out, None)

    cvz.defvjp(cvz_fwd, cvz_bwd, symbolic_zeros=True)
    return cvz


# --- 1. the call primitives' batching rules ---------------------------------------------------

X3 = arr(3, 2)
Y2 = arr(2, lo=0.3, hi=1.1)


def test_vmap_custom_jvp_keeps_rule(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(make_cj(api, jnp)), X3, loop=(make_cj, (0,)))


def test_vmap_custom_jvp_axis_1_and_unbatched(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cj2 = make_cj2(api, jnp)
        return api.vmap(cj2, in_axes=(1, None))

    check(oracle, make, arr(2, 3), Y2)


def test_vmap_custom_jvp_out_axes(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(make_cj(api, jnp), in_axes=1, out_axes=1), arr(2, 4))


def test_grad_of_vmap_custom_jvp_uses_rule(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.grad(lambda x: api.vmap(make_cj(api, jnp))(x).sum())

    out = check(oracle, make, X3)
    assert "custom_jvp_call" in str(out)


def test_vmap_of_grad_custom_jvp(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.vmap(api.grad(lambda x: make_cj(api, jnp)(x).sum()))

    check(oracle, make, X3)


def test_jvp_of_vmap_custom_jvp(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return lambda x, t: api.jvp(api.vmap(make_cj(api, jnp)), (x,), (t,))

    check(oracle, make, X3, arr(3, 2, lo=1.0, hi=2.0))


def test_grad_of_vmap_custom_jvp_two_args_unbatched(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cj2 = make_cj2(api, jnp)

        def loss(x: Any, y: Any) -> Any:
            out = api.vmap(cj2, in_axes=(0, None))(x, y)
            return out["p"].sum() + out["s"].sum()

        return api.grad(loss, argnums=(0, 1))

    check(oracle, make, X3, Y2)


def make_closing(api: Any, jnp: ModuleType) -> Any:
    """A custom_jvp function (and rule) defined inside the vmapped function, closing over a
    batched value."""

    def f(x: Any, y: Any) -> Any:
        @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
        def g(z: Any) -> Any:
            return jnp.sin(z) * x

        def g_jvp(p: Any, t: Any) -> Any:
            return g(p[0]), jnp.cos(p[0]) * t[0] * x

        g.defjvp(g_jvp)
        return g(y)

    return f


def test_vmap_custom_jvp_closing_over_batched_value(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(make_closing(api, jnp), in_axes=(0, None)), X3, Y2)


def test_grad_of_vmap_custom_jvp_rule_closing_over_batched_value(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = api.vmap(make_closing(api, jnp), in_axes=(0, None))
        return api.grad(lambda x, y: f(x, y).sum(), argnums=1)

    check(oracle, make, X3, Y2)


def test_jvp_of_vmap_custom_jvp_tangent_mapped_where_value_is_not(oracle: Oracle) -> None:
    # JAX's call takes the rule's (merged) mapped axes when the rule runs; Lamina batches
    # the call again with that output mapped: JAX's values, one dead call more in the text.
    def make(api: Any, jnp: ModuleType) -> Any:
        @api.custom_jvp  # type: ignore[untyped-decorator]  # JAX's is untyped
        def first(x: Any, y: Any) -> Any:
            return x

        first.defjvp(lambda p, t: (first(*p), t[0] + t[1]))
        return lambda a, b: api.jvp(api.vmap(first, in_axes=(None, 0)), (a, b), (a, b))

    check(oracle, make, Y2, X3, printed=False)


def test_hessian_of_custom_jvp(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.hessian(lambda x: make_cj(api, jnp)(x).sum()), Y2)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobians_of_custom_jvp(oracle: Oracle, kind: str) -> None:
    check(oracle, lambda api, jnp: getattr(api, kind)(make_cj(api, jnp)), Y2)


def test_jacrev_of_custom_vjp(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.jacrev(make_cv(api, jnp), argnums=(0, 1)), Y2, Y2)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobians_of_checkpoint(oracle: Oracle, kind: str) -> None:
    check(
        oracle,
        lambda api, jnp: getattr(api, kind)(api.checkpoint(lambda x: jnp.sin(jnp.sin(x)))),
        Y2,
    )


def test_grad_of_vmap_custom_vjp_nondiff_function_argument(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        def apply(fn: Any, x: Any) -> Any:
            return fn(x)

        h = api.custom_vjp(apply, nondiff_argnums=(0,))
        h.defvjp(lambda fn, x: (fn(x), x), lambda fn, r, g: (g * jnp.cos(r),))
        return api.grad(lambda x: api.vmap(lambda v: h(jnp.sin, v))(x).sum())

    check(oracle, make, X3)


def test_vmap_of_jit_of_grad_custom_vjp(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)
        return api.vmap(api.jit(api.grad(lambda x, y: cv(x, y).sum())), in_axes=(1, None))

    check(oracle, make, arr(2, 3), Y2)


def test_vmap_custom_vjp(oracle: Oracle) -> None:
    check(
        oracle,
        lambda api, jnp: api.vmap(make_cv(api, jnp), in_axes=(0, None)),
        X3,
        Y2,
        loop=(make_cv, (0, None)),
    )


def test_grad_of_vmap_custom_vjp_sums_unbatched_cotangent(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)
        return api.grad(lambda x, y: api.vmap(cv, in_axes=(0, None))(x, y).sum(), argnums=(0, 1))

    check(oracle, make, X3, Y2)


def test_grad_of_vmap_custom_vjp_first_arg(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)
        return api.grad(lambda x, y: api.vmap(cv, in_axes=(0, None))(x, y).sum())

    check(oracle, make, X3, Y2)


def test_vmap_of_grad_custom_vjp_per_example(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)
        return api.vmap(api.grad(lambda x, y: cv(x, y).sum()), in_axes=(0, None))

    check(oracle, make, X3, Y2)


def test_vmap_of_grad_custom_vjp_both_batched(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)
        return api.vmap(api.grad(lambda x, y: cv(x, y).sum(), argnums=(0, 1)))

    check(oracle, make, X3, arr(3, 2, lo=0.2, hi=0.7))


def test_grad_of_vmap_custom_vjp_symbolic_zeros(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cvz = make_cv_sz(api, jnp)
        return api.grad(lambda x, y: api.vmap(cvz, in_axes=(0, None))(x, y)[0].sum())

    check(oracle, make, X3, Y2)


def test_vmap_of_vjp_custom_vjp_pullback(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        cv = make_cv(api, jnp)

        def f(x: Any, y: Any, ct: Any) -> Any:
            _, pb = api.vjp(cv, x, y)
            return api.vmap(pb)(ct)

        return f

    check(oracle, make, Y2, Y2, arr(4, 2))


def _jax_checkpoint_name() -> Any:
    from jax.ad_checkpoint import checkpoint_name

    return checkpoint_name


def test_vmap_checkpoint(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.vmap(api.checkpoint(lambda x: jnp.sin(jnp.sin(x))))

    check(oracle, make, X3, loop=(lambda api, jnp: lambda x: jnp.sin(jnp.sin(x)), (0,)))


def test_vmap_checkpoint_axis_1_with_policy(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = api.checkpoint(
            lambda x, y: (jnp.dot(x, y), jnp.cos(x).sum()),
            policy=api.checkpoint_policies.dots_saveable,
        )
        return api.vmap(f, in_axes=(1, None))

    check(oracle, make, arr(2, 3), arr(2, 2))


def test_grad_of_vmap_checkpoint(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = api.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
        return api.grad(lambda x: api.vmap(f)(x).sum())

    check(oracle, make, X3)


def test_vmap_of_grad_checkpoint(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = api.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
        return api.vmap(api.grad(lambda x: f(x).sum()))

    check(oracle, make, X3)


def test_vmap_checkpoint_name(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        name = lamina_core.checkpoint_name if api is lamina_core else _jax_checkpoint_name()
        return api.vmap(lambda x: name(jnp.sin(x), "a") * 2.0, in_axes=1)

    check(oracle, make, arr(2, 3))


def test_grad_of_vmap_checkpoint_with_names(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        name = lamina_core.checkpoint_name if api is lamina_core else _jax_checkpoint_name()
        policy = api.checkpoint_policies.save_only_these_names("a")
        f = api.checkpoint(lambda x: jnp.sin(name(jnp.cos(x), "a")), policy=policy)
        return api.grad(lambda x: api.vmap(f)(x).sum())

    check(oracle, make, X3)


def test_custom_lin_has_no_batching_rule(oracle: Oracle) -> None:
    """As in JAX: vmap of the linear function of a custom_vjp's linearization is forward
    mode of a custom_vjp function, JAX's error."""

    def run(api: Any, jnp: ModuleType) -> str:
        cv = make_cv(api, jnp)
        _, f_jvp = api.linearize(cv, Y2, Y2)
        with pytest.raises(Exception) as info:
            api.vmap(f_jvp)(arr(3, 2), arr(3, 2))
        return str(info.value).splitlines()[0]

    assert run(lamina_core, lamina_core.numpy) == run(oracle.jax, oracle.jnp)


# --- 2. jacobians -----------------------------------------------------------------------------

V3 = arr(3, lo=-0.6, hi=0.7)
M23 = arr(2, 3, lo=0.1, hi=1.2)

FUNS: list[tuple[str, Any, tuple[Any, ...], bool]] = [
    # name, make(jnp) -> f, args, text matches JAX for jacfwd/jacrev
    ("sin", lambda jnp: jnp.sin, (V3,), True),
    ("cube sum", lambda jnp: lambda x: (x**3).sum(), (V3,), True),
    ("tanh times x", lambda jnp: lambda x: jnp.tanh(x) * x, (V3,), True),
    ("exp over quadratic", lambda jnp: lambda x: jnp.exp(x) / (1.0 + x**2), (V3,), True),
    ("matvec", lambda jnp: lambda x: jnp.dot(M23, x), (V3,), True),
    ("logsumexp", lambda jnp: lambda x: jnp.log(jnp.sum(jnp.exp(x))), (V3,), True),
    ("softmax", lambda jnp: lambda x: jnp.exp(x) / jnp.sum(jnp.exp(x)), (V3,), True),
    ("gram", lambda jnp: lambda x: x @ x.T, (M23,), True),
    ("max over axis", lambda jnp: lambda x: jnp.max(x, axis=1), (M23,), True),
    ("leaky relu", lambda jnp: lambda x: jnp.where(x > 0, x, 0.1 * x), (V3,), True),
    ("sqrt norm", lambda jnp: lambda x: jnp.sqrt(jnp.sum(x * x) + 1.0), (V3,), True),
    ("reshape transpose", lambda jnp: lambda x: jnp.reshape(x, (3, 2)).T * 2.0, (M23,), True),
    ("slices", lambda jnp: lambda x: x[1:] * x[:-1], (V3,), True),
    ("concatenate", lambda jnp: lambda x: jnp.concatenate([x, jnp.sin(x)]), (V3,), True),
    ("scalar polynomial", lambda jnp: lambda x: 3.0 * x**2 + x, (f32(0.7),), True),
    ("arctan2", lambda jnp: lambda x: jnp.arctan2(x, 1.0 + x * x), (V3,), True),
    ("matrix in scalar out", lambda jnp: lambda x: jnp.sum(jnp.cos(x) * x), (M23,), True),
    ("pytree output", lambda jnp: lambda x: {"a": jnp.sin(x), "b": (x.sum(), x * 2.0)}, (V3,), True),
]  # fmt: skip


# jacrev of every function with the slow tests; by default jacfwd (jacrev runs in the tests below).
@pytest.mark.parametrize(("name", "fun", "args", "text"), FUNS, ids=[c[0] for c in FUNS])
@pytest.mark.parametrize("kind", ["jacfwd", pytest.param("jacrev", marks=pytest.mark.slow)])
def test_jacobians_as_jax(
    oracle: Oracle, kind: str, name: str, fun: Any, args: Any, text: bool
) -> None:
    check(oracle, lambda api, jnp: getattr(api, kind)(fun(jnp)), *args, printed=text)


HESS: list[tuple[str, Any, tuple[Any, ...], bool]] = [
    ("cube sum", lambda jnp: lambda x: (x**3).sum(), (V3,), True),
    ("logsumexp", lambda jnp: lambda x: jnp.log(jnp.sum(jnp.exp(x))), (V3,), True),
    ("quadratic form", lambda jnp: lambda x: jnp.dot(x, jnp.dot(M23.T @ M23, x)), (V3,), True),
    ("cos matrix", lambda jnp: lambda x: jnp.sum(jnp.cos(x) * x), (M23,), True),
    ("scalar", lambda jnp: lambda x: x**3, (f32(0.5),), True),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fun", "args", "text"), HESS, ids=[c[0] for c in HESS])
def test_hessian_as_jax(oracle: Oracle, name: str, fun: Any, args: Any, text: bool) -> None:
    check(oracle, lambda api, jnp: api.hessian(fun(jnp)), *args, printed=text)


def test_hessian_of_weak_python_scalar(oracle: Oracle) -> None:
    # Values only: JAX keeps the weak type through integer_pow's jvp constant, Lamina not
    # (see the report), so one conversion more prints.
    check(oracle, lambda api, jnp: api.hessian(lambda x: x**3), 1.0, printed=False)


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_argnums_tuple(oracle: Oracle, kind: str) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return getattr(api, kind)(lambda x, y, z: jnp.sin(x) * y + z, argnums=(0, 1))

    check(oracle, make, V3, arr(3, lo=1.0, hi=2.0), f32(0.5))


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_argnums_int_pytree_input(oracle: Oracle, kind: str) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return getattr(api, kind)(lambda s, d: d["a"] * s + jnp.sum(d["b"]), argnums=1)

    check(oracle, make, f32(2.0), {"a": V3, "b": M23})


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_has_aux(oracle: Oracle, kind: str) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return getattr(api, kind)(lambda x: (jnp.sin(x) * 2.0, {"n": jnp.sum(x)}), has_aux=True)

    check(oracle, make, V3)


def test_hessian_argnums_and_aux(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.hessian(lambda x, y: (jnp.sum(x * x * y), x), argnums=(0, 1), has_aux=True)

    check(oracle, make, V3, arr(3, lo=1.0, hi=2.0))


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
def test_jacobian_holomorphic(oracle: Oracle, kind: str) -> None:
    z = (np.array([0.5, -1.0], np.complex64) + 1j * np.array([0.3, 0.2], np.complex64)).astype(
        np.complex64
    )

    def make(api: Any, jnp: ModuleType) -> Any:
        return getattr(api, kind)(lambda x: x * x + jnp.sin(x), holomorphic=True)

    check(oracle, make, z)


def test_jacobian_is_jacrev(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.jacobian(lambda x: jnp.exp(x) * x), V3)


def test_jacobian_under_jit(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.jit(api.jacfwd(lambda x: jnp.sin(x) * x)), V3)


def _error(fn: Callable[[], Any]) -> str:
    with pytest.raises((TypeError, ValueError)) as info:
        fn()
    return str(info.value)


@pytest.mark.parametrize(
    ("kind", "kwargs", "arg"),
    [
        ("jacfwd", {}, np.arange(3, dtype=np.int32)),
        ("jacrev", {}, np.arange(3, dtype=np.int32)),
        ("jacfwd", {"holomorphic": True}, V3),
        ("jacrev", {"holomorphic": True}, V3),
        ("jacfwd", {}, np.ones(2, np.complex64)),
    ],
    ids=["jacfwd int", "jacrev int", "jacfwd holo real", "jacrev holo real", "jacfwd complex"],
)
def test_jacobian_input_errors_as_jax(oracle: Oracle, kind: str, kwargs: Any, arg: Any) -> None:
    ours = _error(lambda: getattr(lamina_core, kind)(lambda x: x * 2, **kwargs)(arg))
    theirs = _error(lambda: getattr(oracle.jax, kind)(lambda x: x * 2, **kwargs)(arg))
    assert ours == theirs


def test_jacrev_complex_output_error_as_jax(oracle: Oracle) -> None:
    def f(jnp: ModuleType) -> Any:
        return lambda x: x * (1.0 + 1j)

    ours = _error(lambda: lamina_core.jacrev(f(lamina_core.numpy))(V3))
    theirs = _error(lambda: oracle.jax.jacrev(f(oracle.jnp))(V3))
    assert ours == theirs


@pytest.mark.parametrize("kind", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("argnums", [2, -2, (0, 3)])
def test_jacobian_argnums_error_as_jax(oracle: Oracle, kind: str, argnums: Any) -> None:
    ours = _error(lambda: getattr(lamina_core, kind)(lambda x: x, argnums=argnums)(V3))
    theirs = _error(lambda: getattr(oracle.jax, kind)(lambda x: x, argnums=argnums)(V3))
    assert ours == theirs


# --- eval_shape -------------------------------------------------------------------------------


def _shapes(tree: Any, jax: Any) -> Any:
    return [
        (tuple(s.shape), np.dtype(s.dtype), bool(getattr(s, "weak_type", False)))
        for s in jax.tree_util.tree_leaves(tree)
    ]


@pytest.mark.parametrize(
    ("make", "args"),
    [
        (lambda jnp: lambda x: (x * 2, x.sum()), (1.0,)),
        (lambda jnp: lambda x: {"a": x * 2, "b": [jnp.sin(x), x.astype(jnp.int32)]}, (V3,)),
        (lambda jnp: lambda x, y: jnp.dot(x, y) + 1, (M23, V3)),
        (lambda jnp: lambda d: d["x"] * 3, ({"x": 2},)),
    ],
    ids=["weak scalar", "pytree", "dot", "weak int"],
)
def test_eval_shape_as_jax(oracle: Oracle, make: Any, args: Any) -> None:
    ours = lamina_core.eval_shape(make(lamina_core.numpy), *args)
    theirs = oracle.jax.eval_shape(make(oracle.jnp), *args)
    assert _shapes(ours, lamina_core) == _shapes(theirs, oracle.jax)
    assert repr(ours) == repr(theirs)


def test_eval_shape_takes_shape_dtype_structs_and_kwargs(oracle: Oracle) -> None:
    ours = lamina_core.eval_shape(
        lambda x, *, y: x @ y,
        lamina_core.ShapeDtypeStruct((2, 3), f32),
        y=lamina_core.ShapeDtypeStruct((3, 4), f32),
    )
    theirs = oracle.jax.eval_shape(
        lambda x, *, y: x @ y,
        oracle.jax.ShapeDtypeStruct((2, 3), f32),
        y=oracle.jax.ShapeDtypeStruct((3, 4), f32),
    )
    assert repr(ours) == repr(theirs)


# --- custom_vmap / sequential_vmap ------------------------------------------------------------


def make_cvm(api: Any, jnp: ModuleType) -> Any:
    custom_vmap = (
        lamina_core.custom_derivatives._custom_batching.custom_vmap
        if api is lamina_core
        else api.custom_batching.custom_vmap
    )

    @custom_vmap  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cvm(x: Any, y: Any) -> Any:
        return jnp.sin(x) + y

    @cvm.def_vmap  # type: ignore[untyped-decorator]  # JAX's is untyped
    def cvm_rule(axis_size: int, in_batched: Any, xs: Any, ys: Any) -> Any:
        return jnp.cos(xs) * ys, True

    return cvm


def test_custom_vmap_unbatched_prints_call(oracle: Oracle) -> None:
    check(oracle, make_cvm, f32(1.0), f32(2.0))


def test_custom_vmap_uses_rule(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(make_cvm(api, jnp)), V3, V3)


def test_custom_vmap_unbatched_argument_axis_1(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(make_cvm(api, jnp), in_axes=(1, None)), M23, f32(2.0))


def test_jvp_of_vmap_custom_vmap(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return lambda x, y: api.jvp(api.vmap(make_cvm(api, jnp)), (x, y), (x, y))

    check(oracle, make, V3, V3)


def test_custom_vmap_rule_tree_error_as_jax(oracle: Oracle) -> None:
    def run(api: Any, jnp: ModuleType, cv: Any) -> str:
        @cv  # type: ignore[untyped-decorator]  # JAX's is untyped
        def f(x: Any) -> Any:
            return x

        @f.def_vmap  # type: ignore[untyped-decorator]  # JAX's is untyped
        def rule(axis_size: int, in_batched: Any, xs: Any) -> Any:
            return (xs, xs), True

        with pytest.raises(ValueError) as info:
            api.vmap(f)(V3)
        return str(info.value)

    ours = run(
        lamina_core, lamina_core.numpy, lamina_core.custom_derivatives._custom_batching.custom_vmap
    )
    theirs = run(oracle.jax, oracle.jnp, oracle.jax.custom_batching.custom_vmap)
    assert ours == theirs


def test_sequential_vmap_values(oracle: Oracle) -> None:
    # JAX loops with lax.map (a scan); Lamina unrolls the loop, so only the values compare.
    def make(api: Any, jnp: ModuleType) -> Any:
        sv = (
            lamina_core.custom_derivatives._custom_batching.sequential_vmap
            if api is lamina_core
            else api.custom_batching.sequential_vmap
        )
        g = sv(lambda x, y: jnp.sum(x) * y)
        return api.vmap(g, in_axes=(0, None))

    check(oracle, make, M23, f32(3.0), printed=False)


def test_sequential_vmap_unbatched_call(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        sv = (
            lamina_core.custom_derivatives._custom_batching.sequential_vmap
            if api is lamina_core
            else api.custom_batching.sequential_vmap
        )
        return sv(lambda x: jnp.sum(x) * 2.0)

    ours = lamina_core.make_jaxpr(make(lamina_core, lamina_core.numpy))(V3)
    theirs = oracle.jax.make_jaxpr(make(oracle.jax, oracle.jnp))(V3)
    assert str(ours) == str(theirs)


# --- 3. compositions --------------------------------------------------------------------------


def loss(jnp: ModuleType) -> Any:
    return lambda w, x: jnp.sum(jnp.tanh(jnp.dot(x, w)) ** 2)


W = arr(2, 3, lo=-0.5, hi=0.6)
XS = arr(4, 2, lo=-1.0, hi=1.0)


def test_vmap_of_grad_per_example(oracle: Oracle) -> None:
    check(
        oracle,
        lambda api, jnp: api.vmap(api.grad(loss(jnp)), in_axes=(None, 0)),
        W,
        XS,
        loop=(lambda api, jnp: api.grad(loss(jnp)), (None, 0)),
    )


def test_grad_of_vmap_loss(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.grad(lambda w, xs: jnp.mean(api.vmap(loss(jnp), in_axes=(None, 0))(w, xs)))

    check(oracle, make, W, XS)


def test_jvp_of_vmap(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = api.vmap(lambda x: jnp.sin(x) * jnp.sum(x))
        return lambda x, t: api.jvp(f, (x,), (t,))

    check(oracle, make, X3, arr(3, 2, lo=0.5, hi=1.0))


def test_vmap_of_jvp(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        f = lambda x: jnp.sin(x) * jnp.sum(x)  # noqa: E731
        return api.vmap(lambda x, t: api.jvp(f, (x,), (t,)), in_axes=(0, 1))

    check(oracle, make, X3, arr(2, 3, lo=0.5, hi=1.0))


def test_jit_of_vmap_of_grad(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.jit(api.vmap(api.grad(loss(jnp)), in_axes=(None, 0))), W, XS)


def test_vmap_of_jit_of_grad(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(api.jit(api.grad(loss(jnp))), in_axes=(None, 0)), W, XS)


def test_vmap_of_linearized_function(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        def f(x: Any, ts: Any) -> Any:
            _, f_jvp = api.linearize(lambda v: jnp.sin(v) * jnp.sum(v), x)
            return api.vmap(f_jvp)(ts)

        return f

    check(oracle, make, V3, arr(4, 3))


def test_vmap_of_vjp_pullback(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        def f(x: Any, cts: Any) -> Any:
            _, pb = api.vjp(lambda v: jnp.sin(v) * jnp.sum(v), x)
            return api.vmap(pb)(cts)

        return f

    check(oracle, make, V3, arr(4, 3))


def test_vmap_of_value_and_grad_has_aux(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        def l2(w: Any, x: Any) -> Any:
            y = jnp.dot(x, w)
            return jnp.sum(y * y), y

        return api.vmap(api.value_and_grad(l2, has_aux=True), in_axes=(None, 0))

    check(oracle, make, W, XS)


def test_nested_vmap_of_grad(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        g = api.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))
        return api.vmap(api.vmap(g), in_axes=1)

    check(oracle, make, arr(3, 4, 2))


def test_hessian_of_vmapped_loss(oracle: Oracle) -> None:
    def make(api: Any, jnp: ModuleType) -> Any:
        return api.hessian(lambda w: jnp.sum(api.vmap(lambda x: jnp.tanh(jnp.dot(w, x)))(XS)))

    check(oracle, make, arr(2, lo=0.1, hi=0.4))


def test_vmap_of_jacfwd(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(api.jacfwd(lambda x: jnp.sin(x) * x.sum())), X3)


def test_vmap_of_jacrev(oracle: Oracle) -> None:
    check(oracle, lambda api, jnp: api.vmap(api.jacrev(lambda x: jnp.sin(x) * x.sum())), X3)
