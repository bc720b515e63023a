"""Scalar constants a jvp rule builds (the zero of `select_n`'s jvp, `full_like(t, 0)`) are
residuals under reverse mode, as in JAX 0.10.2.

JAX's `full_like` lifts its fill value into the current trace (`stage`); under the partial
evaluator that runs a jvp rule that is the primal trace, so the zero the tangent `select_n`
reads is a residual even when scalar. Inside a jit it is a literal output of the known jit
(`in (p, 0.0:bf16[])`) and an input of the transposed one. Issue 37's `var` of bf16 shows it
through `jnp.where`'s `_where` jit. A constant written in a rule stays a literal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

Program = Callable[[Any], Callable[[Any], Any]]


def _programs() -> dict[str, Program]:
    return {
        "where_zero": lambda L: lambda x: L.numpy.where(x > 0, x, 0.0),
        "where_one_first": lambda L: lambda x: L.numpy.where(x > 0, 1.0, x),
        "jit_where": lambda L: L.jit(lambda x: L.numpy.where(x > 0, x, 0.0)),
        "select_n_zeros_like": lambda L: lambda x: L.lax.select_n(x > 0, L.numpy.zeros_like(x), x),
        "select_n_full_like": lambda L: lambda x: L.lax.select_n(x > 0, x, L.lax.full_like(x, 2.0)),
        "jit_select": lambda L: L.jit(lambda x: L.lax.select(x > 0, x, L.lax.full_like(x, 0.0))),
        "jit_relu": lambda L: L.jit(lambda x: L.numpy.where(x > 0, x, L.numpy.zeros_like(x))),
        "jit_maximum": lambda L: L.jit(lambda x: L.numpy.maximum(x, 0.0)),
        "clip": lambda L: lambda x: L.numpy.clip(x, 0.0, 1.0),
        "jit_clip": lambda L: L.jit(lambda x: L.numpy.clip(x, -1.0, 0.5)),
        "clamp": lambda L: lambda x: L.lax.clamp(x.dtype.type(0), x, x.dtype.type(1)),
        "mean": lambda L: lambda x: L.numpy.mean(x),
        "var": lambda L: lambda x: L.numpy.var(x),
        "std": lambda L: lambda x: L.numpy.std(x),
        "var_ddof": lambda L: lambda x: L.numpy.var(x, ddof=1),
        "jit_var": lambda L: L.jit(lambda x: L.numpy.var(x)),
        "jit_std": lambda L: L.jit(lambda x: L.numpy.std(x)),
        "nanvar": lambda L: lambda x: L.numpy.nanvar(x),
        "select_default": lambda L: lambda x: L.numpy.select([x > 0.5, x < 0.2], [x, 2 * x], 3.0),
    }


PROGRAMS = _programs()
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]
SHAPES = [(), (2, 3)]


def _arg(dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32).reshape(shape) * 0.7 - 0.9).astype(dtype)


def _grad(L: Any, name: str, outer_jit: bool) -> Callable[[Any], Any]:
    f = PROGRAMS[name](L)
    g: Callable[[Any], Any] = L.grad(lambda a: L.numpy.sum(f(a)).astype(L.numpy.float32))
    return L.jit(g) if outer_jit else g


def _marks(dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    # The default run keeps bfloat16 (the issue's case) and rank-0 float32; the rest is slow.
    keep = dtype == ml_dtypes.bfloat16 or (dtype == np.float32 and not shape)
    return () if keep else pytest.mark.slow


CASES = [
    pytest.param(
        name,
        dtype,
        shape,
        outer,
        id=f"{name}-{dtype.name}-{len(shape)}d-{outer}",
        marks=_marks(dtype, shape),
    )
    for name in PROGRAMS
    for dtype in DTYPES
    for shape in SHAPES
    for outer in (False, True)
]


@pytest.mark.parametrize(("name", "dtype", "shape", "outer_jit"), CASES)
def test_grad_jaxpr_and_value_equal_jax(
    name: str, dtype: np.dtype, shape: tuple[int, ...], outer_jit: bool
) -> None:
    x = _arg(dtype, shape)
    ours, theirs = _grad(lamina, name, outer_jit), _grad(jax, name, outer_jit)
    assert str(lamina.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
    got, want = np.asarray(ours(x)), np.asarray(theirs(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))


ISSUE_37_VAR_BF16 = """\
    p:bf16[] q:bf16[] = jit[
      name=_where
      jaxpr={ lambda ; o:bool[] n:bf16[] r:f32[]. let
          s:bf16[] = convert_element_type[new_dtype=bfloat16 weak_type=False] r
          p:bf16[] = select_n o s n
        in (p, 0.0:bf16[]) }
    ] o n nan:f32[]
  in (p, i, k, o, q) } in
let _var1 = { lambda ; t:f32[2,3] u:f32[] v:bool[] w:bf16[] x:bf16[]. let
    y:bf16[] = jit[
      name=_where
      jaxpr={ lambda ; v:bool[] w:bf16[] x:bf16[]. let
          y:bf16[] = select_n v 0.0:bf16[] x
        in (y,) }
    ] v w x
"""


def test_issue_37_var_bf16_where_returns_zero_residual() -> None:
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3).astype(ml_dtypes.bfloat16)
    f = lamina.grad(lambda a: lamina.numpy.var(a).astype(lamina.numpy.float32))
    text = str(lamina.make_jaxpr(f)(x))
    g = jax.grad(lambda a: jax.numpy.var(a).astype(jax.numpy.float32))
    assert text == str(jax.make_jaxpr(g)(x))
    assert ISSUE_37_VAR_BF16 in text


def test_constant_written_in_a_rule_stays_a_literal() -> None:
    # mul's jvp reads the weak 2.0 the user wrote: a literal in both jits, not a residual.
    def text(L: Any) -> str:
        f = L.jit(lambda x: L.numpy.multiply(x, 2.0) + L.lax.mul(x, 3.0))
        return str(L.make_jaxpr(L.grad(f))(np.float32(1.5)))

    ours = text(lamina)
    assert ours == text(jax)
    assert "in (_,) }" in ours and "g:f32[] = mul e 2.0:f32[]" in ours


@pytest.mark.parametrize("for_vjp", [True, False])
def test_linearize_and_vjp_jaxprs_equal_jax(for_vjp: bool) -> None:
    x = np.float32(0.75)

    def text(L: Any) -> str:
        f = L.jit(lambda a: L.numpy.where(a > 0, a, 0.0) * L.numpy.var(L.numpy.stack([a, 1.0])))
        if for_vjp:
            return str(L.make_jaxpr(lambda a: L.vjp(f, a)[1](np.float32(1.0)))(x))
        return str(L.make_jaxpr(lambda a: L.linearize(f, a)[1](np.float32(1.0)))(x))

    assert text(lamina) == text(jax)


@pytest.mark.parametrize("name", ["where_zero", "jit_where", "clip", "var", "jit_std"])
@pytest.mark.parametrize("outer_jit", [False, True])
def test_grad_matches_finite_differences(name: str, outer_jit: bool) -> None:
    x = np.array([[0.3, -0.4, 1.7], [2.2, -1.1, 0.45]], np.float32)
    grad = np.asarray(_grad(lamina, name, outer_jit)(x))
    f = PROGRAMS[name](lamina)
    eps = 1e-3
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        hi = float(np.asarray(lamina.numpy.sum(f(x + step))))
        lo = float(np.asarray(lamina.numpy.sum(f(x - step))))
        np.testing.assert_allclose(grad[idx], (hi - lo) / (2 * eps), rtol=2e-2, atol=2e-3)
