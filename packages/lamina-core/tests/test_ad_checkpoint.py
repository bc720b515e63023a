"""`checkpoint` (remat2), its policies and `checkpoint_name` against JAX 0.10.2: printed jaxprs
before and after differentiation (E1, E2, E5 of the reference, every policy, nesting, jit on
either side, higher order), values, finite differences, lowering and error messages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import dtypes, tree_util
from lamina_core.testing import Oracle, check_grads
from lamina_core.trace._typecheck import check_jaxpr
from lamina_core.trace._values import to_numpy

pytestmark = pytest.mark.oracle

f32 = np.float32
X = f32(0.5)
Y = f32(-1.25)
XV = np.linspace(0, 1, 6).reshape(2, 3).astype(f32)
W = np.linspace(-1, 1, 12).reshape(3, 4).astype(f32)


@dataclass(frozen=True)
class Api:
    """One library's entry points, so each program is written once for both."""

    lib: Any
    jnp: ModuleType
    name: Callable[[Any, str], Any]

    @property
    def policies(self) -> Any:
        return self.lib.checkpoint_policies


def _apis(oracle: Oracle) -> tuple[Api, Api]:
    import jax.ad_checkpoint

    ours = Api(lamina_core, lamina_core.numpy, lamina_core.checkpoint_name)
    return ours, Api(oracle.jax, oracle.jnp, jax.ad_checkpoint.checkpoint_name)


Make = Callable[[Api], Callable[..., Any]]


def sin_sin(a: Api, **kw: Any) -> Callable[..., Any]:
    return a.lib.checkpoint(lambda x: a.jnp.sin(a.jnp.sin(x)), **kw)  # type: ignore[no-any-return]


def tanh_dot(a: Api, policy: Any) -> Callable[..., Any]:
    """`sum(tanh(name(sin x, 'a') @ name(cos w, 'b')))`: dots and names for every policy."""
    jnp = a.jnp

    def f(x: Any, w: Any) -> Any:
        return jnp.sum(jnp.tanh(a.name(jnp.sin(x), "a") @ a.name(jnp.cos(w), "b")))

    return a.lib.checkpoint(f, policy=policy)  # type: ignore[no-any-return]


def e5(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    return a.lib.checkpoint(  # type: ignore[no-any-return]
        lambda x: jnp.sin(a.name(jnp.sin(x), "a")),
        policy=a.policies.save_only_these_names("a"),
    )


def _both(a: Api) -> Any:
    return a.policies.save_from_both_policies(
        a.policies.save_only_these_names("a"), a.policies.dots_saveable
    )


POLICIES: dict[str, Callable[[Api], Any]] = {
    "everything_saveable": lambda a: a.policies.everything_saveable,
    "nothing_saveable": lambda a: a.policies.nothing_saveable,
    "dots_saveable": lambda a: a.policies.dots_saveable,
    "checkpoint_dots": lambda a: a.policies.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": lambda a: a.policies.dots_with_no_batch_dims_saveable,
    "checkpoint_dots_with_no_batch_dims": lambda a: a.policies.checkpoint_dots_with_no_batch_dims,
    "save_anything_except_these_names": lambda a: a.policies.save_anything_except_these_names("a"),
    "save_any_names_but_these": lambda a: a.policies.save_any_names_but_these("a"),
    "save_only_these_names": lambda a: a.policies.save_only_these_names("b"),
    "save_from_both_policies": _both,
    "offload_dot_with_no_batch_dims": lambda a: a.policies.offload_dot_with_no_batch_dims(
        "device", "pinned_host"
    ),
    "save_and_offload_only_these_names": lambda a: a.policies.save_and_offload_only_these_names(
        names_which_can_be_saved=["a"],
        names_which_can_be_offloaded=["b"],
        offload_src="device",
        offload_dst="pinned_host",
    ),
}

# JAX moves offloaded residuals to host memory with `device_put` (types print as
# `f32<host>[2,4]`); Lamina has one memory per device and no `device_put` primitive, so an
# offloaded value is saved like any other: same numbers, different text.
OFFLOADING = {"offload_dot_with_no_batch_dims", "save_and_offload_only_these_names"}


def _shared(a: Api, cache: dict[int, Callable[..., Any]] = {}) -> Callable[..., Any]:  # noqa: B006
    """One checkpointed function per library, so that using it twice shares its jaxpr."""
    return cache.setdefault(id(a.lib), sin_sin(a))


def _nested(a: Api) -> Callable[..., Any]:
    inner = sin_sin(a)
    return a.lib.grad(a.lib.checkpoint(lambda x: a.jnp.cos(inner(x)) * 2.0))  # type: ignore[no-any-return]


def _nested_policies(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    inner = a.lib.checkpoint(
        lambda x, w: a.name(jnp.tanh(x @ w), "h"), policy=a.policies.nothing_saveable
    )
    outer = a.lib.checkpoint(
        lambda x, w: jnp.sum(jnp.cos(inner(x, w))),
        policy=a.policies.save_only_these_names("h"),
    )
    return a.lib.grad(outer, argnums=(0, 1))  # type: ignore[no-any-return]


def _jit_inside(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    j = a.lib.jit(lambda y: jnp.sin(y) * 2.0)
    return a.lib.grad(a.lib.checkpoint(lambda x: jnp.sin(j(j(x)))))  # type: ignore[no-any-return]


def _jit_forwarded_residuals(a: Api, policy: str) -> Callable[..., Any]:
    jnp = a.jnp
    j = a.lib.jit(lambda y: (jnp.sin(y), y * 3.0))

    def f(x: Any) -> Any:
        s, t = j(x)
        return s * t

    return a.lib.grad(a.lib.checkpoint(f, policy=getattr(a.policies, policy)))  # type: ignore[no-any-return]


def _jit_inside_dots(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    j = a.lib.jit(lambda u, v: jnp.sin(u @ v))
    f = a.lib.checkpoint(lambda x, w: jnp.sum(jnp.tanh(j(x, w))), policy=a.policies.dots_saveable)
    return a.lib.grad(f, argnums=(0, 1))  # type: ignore[no-any-return]


def _static(a: Api) -> Callable[..., Any]:
    def g(x: Any, n: int) -> Any:
        for _ in range(n):
            x = a.jnp.sin(x)
        return x

    return a.lib.grad(lambda x: a.lib.checkpoint(g, static_argnums=(1,))(x, 3))  # type: ignore[no-any-return]


def _multi(a: Api) -> Callable[..., Any]:
    jnp = a.jnp

    def g(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y, jnp.cos(y), x

    def h(x: Any, y: Any) -> Any:
        p, q, r = a.lib.checkpoint(g)(x, y)
        return p + q * r

    return a.lib.grad(h, argnums=(0, 1))  # type: ignore[no-any-return]


def _unused_output(a: Api) -> Callable[..., Any]:
    jnp = a.jnp

    def g(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y, jnp.cos(x * y)

    return a.lib.grad(lambda x, y: a.lib.checkpoint(g)(x, y)[0], argnums=(0, 1))  # type: ignore[no-any-return]


def _closure(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    return a.lib.grad(  # type: ignore[no-any-return]
        lambda x, y: a.lib.checkpoint(lambda z: jnp.sin(z * y))(x), argnums=(0, 1)
    )


def _closure_array(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    c = np.arange(3, dtype=f32)
    return a.lib.grad(a.lib.checkpoint(lambda x: jnp.sum(jnp.sin(x * c))))  # type: ignore[no-any-return]


def _second_order_dots(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    inner = a.lib.grad(
        a.lib.checkpoint(lambda x, w: jnp.sum(jnp.tanh(x @ w)), policy=a.policies.dots_saveable)
    )
    return a.lib.grad(lambda x, w: jnp.sum(inner(x, w)))  # type: ignore[no-any-return]


def _int_operand(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    f = a.lib.checkpoint(lambda x, i: jnp.sum(jnp.sin(x) * i))
    return a.lib.grad(lambda x: f(x, jnp.arange(3)))  # type: ignore[no-any-return]


def _pytree(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    f = a.lib.checkpoint(lambda d: jnp.sin(d["a"]) * d["b"])
    return a.lib.grad(lambda x: f({"a": x, "b": x * 2.0}))  # type: ignore[no-any-return]


def _vjp_two_outputs(a: Api) -> Callable[..., Any]:
    jnp = a.jnp
    f = a.lib.checkpoint(lambda x, y: (jnp.sin(x * y), jnp.cos(x)))
    return lambda x, y: a.lib.vjp(f, x, y)[1]((f32(1.0), f32(2.0)))


def _linearized(a: Api) -> Callable[..., Any]:
    f = sin_sin(a, policy=a.policies.everything_saveable)
    return lambda x: a.lib.linearize(f, x)[1](f32(2.0))


CASES: dict[str, tuple[Make, tuple[Any, ...]]] = {
    "E1 checkpoint": (lambda a: sin_sin(a), (X,)),
    "E2 grad checkpoint": (lambda a: a.lib.grad(sin_sin(a)), (X,)),
    "E5 save_only_these_names": (lambda a: a.lib.grad(e5(a)), (X,)),
    "dots_saveable on sum(tanh(x@w))": (
        lambda a: a.lib.grad(
            a.lib.checkpoint(
                lambda x, w: a.jnp.sum(a.jnp.tanh(x @ w)), policy=a.policies.dots_saveable
            )
        ),
        (XV, W),
    ),
    **{
        f"policy {name}": (
            (lambda p: lambda a: a.lib.grad(tanh_dot(a, p(a)), argnums=(0, 1)))(make),
            (XV, W),
        )
        for name, make in POLICIES.items()
    },
    "jvp": (lambda a: lambda x, t: a.lib.jvp(sin_sin(a), (x,), (t,)), (X, Y)),
    "jit of grad": (lambda a: a.lib.jit(a.lib.grad(sin_sin(a))), (X,)),
    "grad of jit": (lambda a: a.lib.grad(a.lib.jit(sin_sin(a))), (X,)),
    "jit inside": (_jit_inside, (X,)),
    "jit inside, dots_saveable": (_jit_inside_dots, (XV, W)),
    "jit forwarding residuals, everything_saveable": (
        lambda a: _jit_forwarded_residuals(a, "everything_saveable"),
        (X,),
    ),
    "jit forwarding residuals, nothing_saveable": (
        lambda a: _jit_forwarded_residuals(a, "nothing_saveable"),
        (X,),
    ),
    "grad of grad": (lambda a: a.lib.grad(a.lib.grad(sin_sin(a))), (X,)),
    "grad of grad E5": (lambda a: a.lib.grad(a.lib.grad(e5(a))), (X,)),
    "grad of grad dots": (_second_order_dots, (XV, W)),
    "jvp of grad": (
        lambda a: lambda x, t: a.lib.jvp(a.lib.grad(sin_sin(a)), (x,), (t,)),
        (X, Y),
    ),
    "grad of jvp": (
        lambda a: a.lib.grad(lambda x: a.lib.jvp(sin_sin(a), (x,), (x,))[1]),
        (X,),
    ),
    "nested": (_nested, (X,)),
    "nested with policies": (_nested_policies, (XV, W)),
    "used twice": (lambda a: lambda x: _shared(a)(_shared(a)(x)), (X,)),
    "used twice under grad": (lambda a: a.lib.grad(lambda x: _shared(a)(_shared(a)(x))), (X,)),
    "static_argnums": (_static, (X,)),
    "several outputs": (_multi, (X, Y)),
    "unused output": (_unused_output, (X, Y)),
    "closure over a tracer": (_closure, (X, Y)),
    "closure over an array": (_closure_array, (X,)),
    "integer operand": (_int_operand, (XV,)),
    "pytree operand": (_pytree, (X,)),
    "prevent_cse=False": (lambda a: a.lib.grad(sin_sin(a, prevent_cse=False)), (X,)),
    "prevent_cse per argument": (
        lambda a: a.lib.grad(
            a.lib.checkpoint(lambda x, y: a.jnp.sin(a.jnp.sin(x) * y), prevent_cse=(True, False)),
            argnums=(0, 1),
        ),
        (X, Y),
    ),
    "vjp of two outputs": (_vjp_two_outputs, (X, Y)),
    "linearize": (_linearized, (X,)),
    "value_and_grad": (lambda a: a.lib.value_and_grad(sin_sin(a)), (X,)),
    "checkpoint of grad": (lambda a: a.lib.checkpoint(a.lib.grad(sin_sin(a))), (X,)),
    "remat alias": (lambda a: a.lib.grad(a.lib.remat(lambda x: a.jnp.exp(a.jnp.sin(x)))), (X,)),
    "float16 residuals": (
        lambda a: a.lib.grad(sin_sin(a, policy=a.policies.everything_saveable)),
        (np.float16(0.5),),
    ),
    "E5 in float16": (lambda a: a.lib.grad(e5(a)), (np.float16(0.5),)),
    "name outside checkpoint": (
        lambda a: a.lib.grad(lambda x: a.jnp.sin(a.name(a.jnp.sin(x), "z"))),
        (X,),
    ),
}

NOT_PRINTED = {f"policy {name}" for name in OFFLOADING}


def _tolerance(dtype: np.dtype) -> float:
    return 2e-2 if dtype.itemsize <= 2 else 1e-5


@pytest.mark.parametrize("case", list(CASES))
def test_prints_and_computes_as_jax(oracle: Oracle, case: str) -> None:
    make, args = CASES[case]
    ours_api, theirs_api = _apis(oracle)
    ours_f, theirs_f = make(ours_api), make(theirs_api)
    ours = lamina_core.make_jaxpr(ours_f)(*args)
    theirs = oracle.jax.make_jaxpr(theirs_f)(*args)
    if case not in NOT_PRINTED:
        assert str(ours) == str(theirs), f"\n--- lamina ---\n{ours}\n--- jax ---\n{theirs}"
    check_jaxpr(ours)
    got = oracle.evaluate(ours, tree_util.tree_leaves(args))
    want = oracle.jax.tree_util.tree_leaves(oracle.jit(theirs_f)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        g = np.asarray(to_numpy(g))
        assert g.shape == w.shape and g.dtype == w.dtype
        t = _tolerance(w.dtype)
        np.testing.assert_allclose(g, w, rtol=t, atol=t)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_derivatives_agree_with_finite_differences(oracle: Oracle, policy: str) -> None:
    ours_api, _ = _apis(oracle)
    check_grads(tanh_dot(ours_api, POLICIES[policy](ours_api)), (XV, W), order=2)


def test_nested_checkpoint_derivatives_agree_with_finite_differences(oracle: Oracle) -> None:
    ours_api, _ = _apis(oracle)
    jnp = ours_api.jnp
    inner = lamina_core.checkpoint(lambda x, w: jnp.tanh(x @ w))
    outer = lamina_core.checkpoint(
        lambda x, w: jnp.cos(inner(x, w)) * 2.0,
        policy=lamina_core.checkpoint_policies.dots_saveable,
    )
    check_grads(outer, (XV, W), order=2)


def test_lowers_as_jax_with_an_optimization_barrier(oracle: Oracle) -> None:
    lamina = pytest.importorskip("lamina")
    jax, jnp = oracle.jax, oracle.jnp
    ours = lamina.jit(
        lamina.grad(lamina.checkpoint(lambda x: lamina.numpy.sin(lamina.numpy.sin(x))))
    )
    theirs = jax.jit(jax.grad(jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))))
    text = ours.lower(X).as_text()
    assert "stablehlo.optimization_barrier" in text
    assert text == theirs.lower(X).as_text()
    np.testing.assert_allclose(np.asarray(ours(X)), np.asarray(theirs(X)), rtol=1e-6)


def test_public_names_match_jax(oracle: Oracle) -> None:
    lamina = pytest.importorskip("lamina")
    import jax.ad_checkpoint

    assert sorted(vars(lamina.checkpoint_policies)) == sorted(vars(oracle.jax.checkpoint_policies))
    assert lamina.checkpoint is lamina_core.checkpoint and lamina.remat is lamina_core.remat
    assert lamina.ad_checkpoint.checkpoint_name is lamina_core.checkpoint_name
    for name in ("checkpoint_name", "checkpoint_policies", "Recompute", "Saveable", "Offloadable"):
        assert hasattr(jax.ad_checkpoint, name) and hasattr(lamina.ad_checkpoint, name)
    assert repr(lamina_core.checkpoint_policies.dots_saveable) == repr(
        oracle.jax.checkpoint_policies.dots_saveable
    )


def _error(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        f()
    return info.type, str(info.value).splitlines()[0]


ERRORS: dict[str, Callable[[Api], Callable[[], Any]]] = {
    "static_argnums out of range": lambda a: (
        lambda: a.lib.checkpoint(lambda x: x, static_argnums=(3,))(X)
    ),
    "static_argnums not ints": lambda a: (
        lambda: a.lib.checkpoint(
            lambda x: x,
            static_argnums=[0],
        )(X)
    ),
    "concrete": lambda a: lambda: a.lib.checkpoint(lambda x: x, concrete=True),
    "policy answering a string": lambda a: (
        lambda: a.lib.grad(a.lib.checkpoint(lambda x: a.jnp.sin(x), policy=lambda *_, **__: "yes"))(
            X
        )
    ),
    "names saved and offloaded": lambda a: (
        lambda: a.policies.save_and_offload_only_these_names(
            names_which_can_be_saved=["a"],
            names_which_can_be_offloaded=["a"],
            offload_src="device",
            offload_dst="pinned_host",
        )
    ),
    "both policies not bools": lambda a: (
        lambda: a.lib.grad(
            a.lib.checkpoint(
                lambda x, w: a.jnp.sum(a.jnp.tanh(x @ w)),
                policy=a.policies.save_from_both_policies(
                    a.policies.dots_saveable,
                    a.policies.offload_dot_with_no_batch_dims("device", "pinned_host"),
                ),
            )
        )(XV, W)
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_jax(oracle: Oracle, case: str) -> None:
    ours_api, theirs_api = _apis(oracle)
    assert _error(ERRORS[case](ours_api)) == _error(ERRORS[case](theirs_api))


def test_float_residuals_are_rounded_to_their_dtype(oracle: Oracle) -> None:
    ours_api, _ = _apis(oracle)
    text = str(lamina_core.make_jaxpr(lamina_core.grad(e5(ours_api)))(np.float16(0.5)))
    finfo = dtypes.finfo(np.float16)
    assert f"reduce_precision[exponent_bits={finfo.nexp} mantissa_bits={finfo.nmant}]" in text
