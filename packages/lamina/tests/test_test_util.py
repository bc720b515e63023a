"""`lamina.test_util` as `jax.test_util`: the same signatures, the same random directions and
tolerances, so a check passes or fails in Lamina exactly where it does in JAX."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.test_util
import numpy as np
import pytest

import lamina
import lamina.test_util

pytestmark = pytest.mark.oracle

X = np.linspace(0.1, 0.9, 6, dtype=np.float32).reshape(2, 3)


def test_signatures_are_jaxs() -> None:
    for name in ("check_grads", "check_jvp", "check_vjp"):
        ours = inspect.signature(getattr(lamina.test_util, name))
        theirs = inspect.signature(getattr(jax.test_util, name))
        assert list(ours.parameters) == list(theirs.parameters)
        assert [p.default for p in ours.parameters.values()] == [
            p.default for p in theirs.parameters.values()
        ]


def _programs(api: Any) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    jnp = api.numpy

    def unrolled(lr: Any, x: Any) -> Any:
        # chex's `test_hard_with_stop_gradient`: large, ill-conditioned values, where only
        # JAX's direction and step give a passing check.
        def loss_grad(y: Any) -> Any:
            return api.grad(lambda z: jnp.sum((z - 1.0) ** 2))(y)

        for _ in range(10):
            x1 = x - lr * loss_grad(x) + 100 * api.lax.stop_gradient(lr) ** 2
            x2 = x - lr * loss_grad(x) - 100 * lr**2
            x = api.lax.select((x > 3.0).any(), x1, x2 + api.lax.stop_gradient(lr))
        return jnp.sum((x - 1.0) ** 2)

    key = api.random.PRNGKey(6)
    k1, k2 = api.random.split(key)
    return {
        "sin": (jnp.sin, (X,)),
        "pytree": (lambda d: {"a": jnp.tanh(d["x"]) * d["y"]}, ({"x": X, "y": X[0]},)),
        "python_scalar": (lambda s: s**3.0, (0.7,)),
        "complex": (lambda z: jnp.sin(z) * z, (X.astype(np.complex64),)),
        "unrolled": (
            unrolled,
            (api.random.uniform(k1, (1,)), api.random.uniform(k2, (5,))),
        ),
    }


def _outcome(check: Callable[[], None]) -> str:
    try:
        check()
    except AssertionError as err:
        return f"failed: {err}"
    return "passed"


def _grads_outcome(api: Any, util: Any, name: str, order: int, modes: tuple[str, ...]) -> str:
    f, args = _programs(api)[name]
    return _outcome(lambda: util.check_grads(f, args, order, modes=modes))


@pytest.mark.parametrize("name", ["sin", "pytree", "python_scalar", "complex", "unrolled"])
@pytest.mark.parametrize(("order", "modes"), [(1, ("fwd", "rev")), (2, ("fwd", "rev", "lin"))])
def test_check_grads_decides_as_jaxs(name: str, order: int, modes: tuple[str, ...]) -> None:
    """The same verdict, and for a failure the same message, numbers included (the unrolled
    loop fails in both: its finite differences are too coarse at JAX's step)."""
    if name == "unrolled" and order == 2:
        pytest.skip("second derivatives of the unrolled loop take long and add nothing")
    theirs = _grads_outcome(jax, jax.test_util, name, order, modes)
    ours = _grads_outcome(lamina, lamina.test_util, name, order, modes)
    assert ours == theirs
    assert (ours == "passed") == (name != "unrolled")


def _wrong_derivative(api: Any) -> Callable[[Any], Any]:
    @functools.partial(api.custom_jvp)
    def f(x: Any) -> Any:
        return api.numpy.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 1.1 * api.numpy.cos(p[0]) * t[0]))
    return f  # type: ignore[no-any-return]


@pytest.mark.parametrize("check", ["check_jvp", "check_vjp"])
def test_a_wrong_derivative_fails_as_in_jax(check: str) -> None:
    def outcome(api: Any, util: Any) -> str:
        f = _wrong_derivative(api)
        derivative = functools.partial(api.jvp if check == "check_jvp" else api.vjp, f)
        return _outcome(lambda: getattr(util, check)(f, derivative, (X,), err_msg="m"))

    theirs, ours = outcome(jax, jax.test_util), outcome(lamina, lamina.test_util)
    assert theirs.startswith("failed")
    assert ours == theirs


def test_tolerances_and_step_are_taken_as_in_jax() -> None:
    f = _wrong_derivative  # a 10% error passes with a loose tolerance, in both
    for api, util in ((jax, jax.test_util), (lamina, lamina.test_util)):
        util.check_grads(f(api), (X,), 1, modes=("fwd",), atol=0.5, rtol=0.5)
        util.check_grads(f(api), (X,), 1, modes=("rev",), atol={np.float32: 0.5}, eps=1e-3)
