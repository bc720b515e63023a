"""A second hi type, written only against the public `lamina.experimental.hijax` API: a
low-rank matrix `u @ v.T` kept as its factors. Its tangent type is the dense matrix (factors
are not unique, so perturbing them is not a perturbation of the matrix); `vmap` maps both
factors along their leading axes; `scan` slices and stacks them. Its primitives carry residuals
that are themselves hi values (`Matvec` keeps the low-rank operand for its backward pass,
which takes it apart only through primitives: outside `expand`, a hi value may be a tracer).

Checked under `jit`, `grad`, `jvp`, `linearize`, `vmap` and `scan` against the same
computations on dense matrices, in JAX, a Python loop, or finite differences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lamina
import lamina.numpy as jnp
from lamina.experimental.hijax import (
    HiType,
    MappingSpec,
    ShapedArray,
    VJPHiPrimitive,
    register_hitype,
)

F32 = np.dtype("float32")


@dataclass(frozen=True)
class LowRank:
    """The matrix `u @ v.T` (batched over leading axes): u is [..., m, r], v is [..., n, r]."""

    u: Any
    v: Any


@dataclass(frozen=True)
class LowRankSpec(MappingSpec):
    """Low-rank matrices are mapped along the leading axis of both factors."""


@dataclass(frozen=True)
class LowRankTy(HiType):
    batch: tuple[int, ...]
    m: int
    n: int
    rank: int

    def lo_ty(self) -> list[Any]:
        return [
            ShapedArray((*self.batch, self.m, self.rank), F32),
            ShapedArray((*self.batch, self.n, self.rank), F32),
        ]

    def lower_val(self, lr: Any) -> list[Any]:
        return [lr.u, lr.v]

    def raise_val(self, u: Any, v: Any) -> LowRank:
        return LowRank(u, v)

    def to_tangent_aval(self) -> Any:
        return ShapedArray((*self.batch, self.m, self.n), F32)

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return f"lr{self.rank}[{','.join(map(str, (*self.batch, self.m, self.n)))}]"

    def __repr__(self) -> str:
        return self.str_short()

    def dec_rank(self, size: int, spec: Any) -> LowRankTy:
        if not isinstance(spec, LowRankSpec) or not self.batch or self.batch[0] != size:
            raise ValueError(f"cannot map {self.str_short()} by {spec} over an axis of {size}")
        return LowRankTy(self.batch[1:], self.m, self.n, self.rank)

    def inc_rank(self, size: int, spec: Any) -> LowRankTy:
        return LowRankTy((size, *self.batch), self.m, self.n, self.rank)

    def leading_axis_spec(self) -> LowRankSpec:
        return LowRankSpec()


def _type_of(lr: LowRank) -> LowRankTy:
    *batch, m, r = lr.u.shape
    return LowRankTy(tuple(batch), m, lr.v.shape[-2], r)


register_hitype(LowRank, _type_of)


def _t(x: Any) -> Any:
    return jnp.swapaxes(x, -1, -2)


def _broadcast(x: Any, d: Any, size: int) -> Any:
    """An array argument of a batch rule with its mapped axis first (added if unmapped)."""
    if d is None:
        return jnp.broadcast_to(x, (size, *x.shape))
    return jnp.moveaxis(x, d, 0)


class FromFactors(VJPHiPrimitive):
    def __init__(self, u_aval: Any, v_aval: Any) -> None:
        if (
            u_aval.ndim < 2
            or u_aval.shape[:-2] != v_aval.shape[:-2]
            or u_aval.shape[-1] != v_aval.shape[-1]
        ):
            raise TypeError(
                f"from_factors: u and v must be [..., m, r] and [..., n, r] with the same "
                f"leading axes and rank, got {u_aval.str_short()} and {v_aval.str_short()}"
            )
        self.in_avals = (u_aval, v_aval)
        *batch, m, r = u_aval.shape
        self.out_aval = LowRankTy(tuple(batch), m, v_aval.shape[-2], r)
        self.params = {}
        super().__init__()

    def expand(self, u: Any, v: Any) -> LowRank:
        return LowRank(u, v)

    def vjp_fwd(self, nzs_in: Any, u: Any, v: Any) -> Any:
        return self(u, v), (u, v)

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        u, v = res
        return jnp.matmul(g, v), jnp.matmul(_t(g), u)

    def jvp(self, primals: Any, tangents: Any) -> Any:
        (u, v), (du, dv) = primals, tangents
        return self(u, v), jnp.matmul(du, _t(v)) + jnp.matmul(u, _t(dv))

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        u, v = (_broadcast(x, d, axis_data.size) for x, d in zip(args, dims, strict=True))
        return from_factors(u, v), LowRankSpec()


class ToDense(VJPHiPrimitive):
    def __init__(self, lr_aval: Any) -> None:
        self.in_avals = (lr_aval,)
        self.out_aval = lr_aval.to_tangent_aval()
        self.params = {}
        super().__init__()

    def expand(self, lr: Any) -> Any:
        return jnp.matmul(lr.u, _t(lr.v))

    def vjp_fwd(self, nzs_in: Any, lr: Any) -> Any:
        return self(lr), None

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        return (g,)  # linear, and the tangent type is the dense matrix

    def jvp(self, primals: Any, tangents: Any) -> Any:
        return self(*primals), tangents[0]

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        return to_dense(args[0]), (None if dims[0] is None else 0)


class Transpose(VJPHiPrimitive):
    def __init__(self, lr_aval: Any) -> None:
        self.in_avals = (lr_aval,)
        self.out_aval = LowRankTy(lr_aval.batch, lr_aval.n, lr_aval.m, lr_aval.rank)
        self.params = {}
        super().__init__()

    def expand(self, lr: Any) -> LowRank:
        return LowRank(lr.v, lr.u)

    def vjp_fwd(self, nzs_in: Any, lr: Any) -> Any:
        return self(lr), None

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        return (_t(g),)

    def jvp(self, primals: Any, tangents: Any) -> Any:
        return self(*primals), _t(tangents[0])

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        return transpose(args[0]), dims[0]


class Matvec(VJPHiPrimitive):
    def __init__(self, lr_aval: Any, x_aval: Any) -> None:
        if x_aval.shape != (*lr_aval.batch, lr_aval.n):
            raise TypeError(f"matvec: {lr_aval.str_short()} times {x_aval.str_short()}")
        self.in_avals = (lr_aval, x_aval)
        self.out_aval = ShapedArray((*lr_aval.batch, lr_aval.m), F32)
        self.params = {}
        super().__init__()

    def expand(self, lr: Any, x: Any) -> Any:
        return jnp.einsum("...mr,...r->...m", lr.u, jnp.einsum("...nr,...n->...r", lr.v, x))

    def vjp_fwd(self, nzs_in: Any, lr: Any, x: Any) -> Any:
        return self(lr, x), (lr, x)  # a hi value among the residuals

    def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
        lr, x = res
        return g[..., :, None] * x[..., None, :], matvec(transpose(lr), g)

    def lin(self, nzs_in: Any, lr: Any, x: Any) -> Any:
        return self(lr, x), (lr, x)

    def linearized(self, res: Any, t_lr: Any, t_x: Any) -> Any:
        lr, x = res
        return jnp.einsum("...mn,...n->...m", t_lr, x) + matvec(lr, t_x)

    def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
        (lr, x), (d_lr, d_x) = args, dims
        if d_lr is None:  # every element multiplies the same matrix: broadcast its factors
            size = axis_data.size
            lr = from_factors(_broadcast(lr.u, None, size), _broadcast(lr.v, None, size))
        return matvec(lr, _broadcast(x, d_x, axis_data.size)), 0


def from_factors(u: Any, v: Any) -> Any:
    return FromFactors(lamina.typeof(u), lamina.typeof(v))(u, v)


def transpose(lr: Any) -> Any:
    return Transpose(lamina.typeof(lr))(lr)


def to_dense(lr: Any) -> Any:
    return ToDense(lamina.typeof(lr))(lr)


def matvec(lr: Any, x: Any) -> Any:
    return Matvec(lamina.typeof(lr), lamina.typeof(x))(lr, x)


RNG = np.random.default_rng(0)
U = RNG.standard_normal((4, 2)).astype(F32)
V = RNG.standard_normal((5, 2)).astype(F32)
X = RNG.standard_normal(5).astype(F32)
US = RNG.standard_normal((3, 4, 2)).astype(F32)
VS = RNG.standard_normal((3, 5, 2)).astype(F32)
XS = RNG.standard_normal((3, 5)).astype(F32)


def _loss(u: Any, v: Any, x: Any) -> Any:
    return jnp.sum(matvec(from_factors(u, v), x) ** 2)


def _dense_loss(u: Any, v: Any, x: Any) -> Any:
    return jjnp.sum(((u @ v.T) @ x) ** 2)


def _close(a: Any, b: Any, rtol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-5)


def test_type_and_eager_values() -> None:
    lr = from_factors(U, V)
    assert isinstance(lr, LowRank) and str(lamina.typeof(lr)) == "lr2[4,5]"
    _close(to_dense(lr), U @ V.T)
    _close(matvec(lr, X), (U @ V.T) @ X)
    with pytest.raises(TypeError, match="same leading axes and rank"):
        from_factors(U, V[:, :1])


def test_printed_jaxpr() -> None:
    text = str(lamina.make_jaxpr(lambda u, v, x: matvec(from_factors(u, v), x))(U, V, X))
    assert text == (
        "{ lambda ; a:f32[4,2] b:f32[5,2] c:f32[5]. let\n"
        "    d:lr2[4,5] = call_hi_primitive[_prim=FromFactors[{}]] a b\n"
        "    e:f32[4] = call_hi_primitive[_prim=Matvec[{}]] d c\n"
        "  in (e,) }"
    )


def test_jit_with_hi_arguments_results_and_intermediates() -> None:
    lr = lamina.jit(from_factors)(U, V)
    assert isinstance(lr, LowRank) and str(lamina.typeof(lr)) == "lr2[4,5]"
    _close(lamina.jit(matvec)(lr, X), (U @ V.T) @ X)
    _close(lamina.jit(lambda u, v: to_dense(from_factors(u, v)))(U, V), U @ V.T)
    text = lamina.jit(matvec).lower(lr, X).as_text()
    assert "tensor<4x2xf32>, %arg1: tensor<5x2xf32>, %arg2: tensor<5xf32>" in text


def test_grad_matches_the_dense_computation_in_jax() -> None:
    got = lamina.grad(_loss, argnums=(0, 1, 2))(U, V, X)
    want = jax.grad(_dense_loss, argnums=(0, 1, 2))(U, V, X)
    for g, w in zip(got, want, strict=True):
        _close(g, w, rtol=1e-4)
    jitted = lamina.jit(lamina.grad(_loss))(U, V, X)
    _close(jitted, want[0], rtol=1e-4)


def test_grad_wrt_a_low_rank_input_is_the_dense_gradient() -> None:
    lr = from_factors(U, V)
    got = lamina.grad(lambda lr, x: jnp.sum(matvec(lr, x) ** 2))(lr, X)
    assert str(lamina.typeof(got)) == "float32[4,5]"
    want = jax.grad(lambda m, x: jjnp.sum((m @ x) ** 2))(U @ V.T, X)
    _close(got, want, rtol=1e-4)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_grad_against_finite_differences(seed: int) -> None:
    rng = np.random.default_rng(seed)
    u, v, x = (rng.standard_normal(s).astype(np.float64) for s in [(4, 2), (5, 2), (5,)])
    g = np.asarray(lamina.grad(_loss)(u.astype(F32), v.astype(F32), x.astype(F32)))
    d = rng.standard_normal(u.shape)
    eps = 1e-3

    def f(a: np.ndarray) -> float:
        return float(np.sum(((a @ v.T) @ x) ** 2))

    fd = (f(u + eps * d) - f(u - eps * d)) / (2 * eps)
    assert np.isclose(np.sum(g * d), fd, rtol=2e-2, atol=1e-2)


def test_jvp_and_linearize() -> None:
    du, dv = np.ones_like(U), np.zeros_like(V)
    out, tangent = lamina.jvp(lambda u, v: to_dense(from_factors(u, v)), (U, V), (du, dv))
    _, want = jax.jvp(lambda u, v: u @ v.T, (U, V), (du, dv))
    _close(out, U @ V.T)
    _close(tangent, want)
    lr = from_factors(U, V)
    y, f_jvp = lamina.linearize(matvec, lr, X)
    _close(y, (U @ V.T) @ X)
    t_lr = np.ones((4, 5), F32)
    _close(f_jvp(t_lr, X), t_lr @ X + (U @ V.T) @ X)


def test_vmap_by_spec_matches_a_loop() -> None:
    lrs = lamina.vmap(from_factors, out_axes=LowRankSpec())(US, VS)
    assert str(lamina.typeof(lrs)) == "lr2[3,4,5]"
    ys = lamina.vmap(matvec, in_axes=(LowRankSpec(), 0))(lrs, XS)
    dense = lamina.vmap(to_dense, in_axes=LowRankSpec(), axis_size=3)(lrs)
    for i in range(3):
        _close(ys[i], (US[i] @ VS[i].T) @ XS[i])
        _close(dense[i], US[i] @ VS[i].T)
    # one matrix, many vectors: the rule broadcasts the unmapped operand
    shared = lamina.vmap(matvec, in_axes=(None, 0))(from_factors(U, V), XS)
    _close(shared, XS @ (U @ V.T).T)
    via_jit = lamina.vmap(lamina.jit(to_dense), in_axes=LowRankSpec(), axis_size=3)(lrs)
    _close(via_jit, dense)


def test_vmap_of_grad_matches_a_loop() -> None:
    got = lamina.vmap(lamina.grad(_loss), in_axes=(0, 0, 0))(US, VS, XS)
    for i in range(3):
        _close(got[i], jax.grad(_dense_loss)(US[i], VS[i], XS[i]), rtol=1e-4)


def test_scan_over_stacked_low_rank_matrices() -> None:
    lrs = from_factors(US, VS)

    def step(y: Any, lr: Any) -> Any:
        return matvec(lr, y[:5]) @ np.ones((4, 5), F32) + y, to_dense(lr)

    y, dense = lamina.lax.scan(step, X, lrs, length=3)
    want = X
    for i in range(3):
        want = ((US[i] @ VS[i].T) @ want) @ np.ones((4, 5), F32) + want
        _close(dense[i], US[i] @ VS[i].T)
    _close(y, want, rtol=1e-4)
    _, stacked = lamina.lax.scan(lambda c, uv: (c, from_factors(*uv)), 0.0, (US, VS))
    assert str(lamina.typeof(stacked)) == "lr2[3,4,5]"
    _close(stacked.u, US)
    jitted, _ = lamina.jit(lambda lrs: lamina.lax.scan(step, X, lrs, length=3))(lrs)
    _close(jitted, want, rtol=1e-4)
