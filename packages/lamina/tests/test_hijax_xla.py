"""Hi types (seed 003) on XLA against JAX 0.10.2's own hijax: the seed's quantized array built
from the same definitions in both, printed jaxprs, lojax jaxprs and StableHLO byte for byte,
values eagerly, under `jit`, `grad`, `vmap` and through loops, and the AOT stages."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import jax
import jax.experimental.hijax as jax_hijax
import numpy as np
import pytest

import lamina
import lamina.experimental.hijax as lamina_hijax


def _mapping_spec(hijax: Any) -> Any:
    found = getattr(hijax, "MappingSpec", None)
    if found is None:  # JAX 0.10.2 exports it only from jax._src (seed 003 says so)
        found = sys.modules["jax._src.hijax"].MappingSpec
    return found


def make_qarray(api: Any, hijax: Any) -> dict[str, Any]:
    """Seed 003's quantized array, its spec and primitives, for one implementation."""
    jnp = api.numpy

    @dataclass(frozen=True)
    class QArray:
        qvalue: Any
        scale: Any

    @dataclass(frozen=True)
    class QArraySpec(_mapping_spec(hijax)):  # type: ignore[misc]  # a class from a module
        pass

    @dataclass(frozen=True)
    class QArrayTy(hijax.HiType):  # type: ignore[misc]  # likewise
        shape: tuple[int, ...]

        def lo_ty(self) -> list[Any]:
            return [
                hijax.ShapedArray(self.shape, jnp.dtype("int8")),
                hijax.ShapedArray(self.shape[:-1], jnp.dtype("float32")),
            ]

        def lower_val(self, q: Any) -> list[Any]:
            return [q.qvalue, q.scale]

        def raise_val(self, qvalue: Any, scale: Any) -> Any:
            return QArray(qvalue, scale)

        def to_tangent_aval(self) -> Any:
            return hijax.ShapedArray(self.shape, jnp.dtype("float32"))

        def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
            return f"q8[{','.join(map(str, self.shape))}]"

        def __repr__(self) -> str:
            return self.str_short()

        def dec_rank(self, size: int, spec: Any) -> Any:
            return QArrayTy(self.shape[1:])

        def inc_rank(self, size: int, spec: Any) -> Any:
            return QArrayTy((size, *self.shape))

        def leading_axis_spec(self) -> Any:
            return QArraySpec()

    hijax.register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape))

    class Quantize(hijax.VJPHiPrimitive):  # type: ignore[misc]  # likewise
        def __init__(self, x_aval: Any) -> None:
            if x_aval.dtype != jnp.dtype("float32"):
                raise TypeError(x_aval.dtype)
            self.in_avals = (x_aval,)
            self.out_aval = QArrayTy(x_aval.shape)
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, x: Any) -> Any:
            scale = jnp.max(jnp.abs(x), axis=-1) / 127.0
            return QArray(jnp.round(x / scale[..., None]).astype(jnp.int8), scale)

        def vjp_fwd(self, nzs_in: Any, x: Any) -> Any:
            return self(x), None

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            return (g,)

        def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
            (x,), (d,) = args, dims
            if d is None:
                return quantize(x), None
            return quantize(jnp.moveaxis(x, d, 0)), QArraySpec()

    class Dequantize(hijax.VJPHiPrimitive):  # type: ignore[misc]  # likewise
        def __init__(self, q_aval: Any) -> None:
            self.in_avals = (q_aval,)
            self.out_aval = hijax.ShapedArray(q_aval.shape, jnp.dtype("float32"))
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, qx: Any) -> Any:
            return qx.qvalue.astype("float32") * qx.scale[..., None]

        def vjp_fwd(self, nzs_in: Any, qx: Any) -> Any:
            return self(qx), None

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            return (g,)

        def batch(self, axis_data: Any, args: Any, dims: Any) -> Any:
            (qx,), (d,) = args, dims
            if d is None:
                return dequantize(qx), None
            return dequantize(qx), 0

    def quantize(x: Any) -> Any:
        return Quantize(api.typeof(x))(x)

    def dequantize(qx: Any) -> Any:
        return Dequantize(api.typeof(qx))(qx)

    return {"QArray": QArray, "spec": QArraySpec, "q": quantize, "dq": dequantize}


@pytest.fixture(scope="module")
def both() -> list[tuple[Any, dict[str, Any]]]:
    return [(jax, make_qarray(jax, jax_hijax)), (lamina, make_qarray(lamina, lamina_hijax))]


X = np.array([[1.0, 2.0, 3.0], [4.0, -5.0, 6.0]], np.float32)
XS = np.arange(24.0, dtype=np.float32).reshape(4, 2, 3)


def _programs(api: Any, d: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """name -> (function, argument): the programs compared between the implementations."""
    q, dq, spec = d["q"], d["dq"], d["spec"]
    jnp, lax = api.numpy, api.lax
    x = jnp.asarray(X)
    qx, qxs = q(x), q(jnp.asarray(XS))

    def scan_sum(qxs: Any) -> Any:
        return lax.scan(lambda c, e: (c + dq(e), None), jnp.zeros((2, 3)), qxs, length=4)[0]

    def loop(qx: Any) -> Any:
        def body(c: Any) -> Any:
            return c[0] + 1, q(dq(c[1]) * 2.0)

        return lax.while_loop(lambda c: c[0] < 3, body, (0, qx))[1]

    def branch(qx: Any) -> Any:
        return lax.cond(True, lambda a: dq(a), lambda a: dq(a) * 2.0, qx)

    return {
        "roundtrip": (lambda x: dq(q(x)), x),
        "quantize": (q, x),
        "dequantize": (dq, qx),
        "grad_straight_through": (api.grad(lambda x: jnp.sum(dq(q(x)))), x),
        "grad_wrt_qarray": (api.grad(lambda q_: jnp.sum(dq(q_) ** 2)), qx),
        "nested_jit": (api.jit(lambda x: dq(api.jit(q)(x))), x),
        "vmap_out_spec": (api.vmap(q, out_axes=spec()), jnp.asarray(XS)),
        "vmap_in_spec": (api.vmap(dq, in_axes=spec(), axis_size=4), qxs),
        "vmap_grad": (api.vmap(api.grad(lambda x: jnp.sum(dq(q(x)) ** 2))), jnp.asarray(XS)),
        "scan": (scan_sum, qxs),
        "while": (loop, qx),
        "cond": (branch, qx),
        "closed_over_qarray": (lambda y: dq(qx) + y, x),  # a constvar in both modes
    }


JAX_CRASHES = {"vmap_in_spec_jit"}  # JAX 0.10.2's vmap(jit(f)) of a hi argument (seed 003)


def _flat(tree: Any) -> list[np.ndarray]:
    leaves = []
    for leaf in jax.tree_util.tree_leaves(tree):
        if hasattr(leaf, "qvalue"):
            leaves += [np.asarray(leaf.qvalue), np.asarray(leaf.scale)]
        else:
            leaves.append(np.asarray(leaf))
    return leaves


@pytest.mark.parametrize(
    "name",
    ["roundtrip", "quantize", "dequantize", "grad_straight_through", "grad_wrt_qarray",
     "nested_jit", "vmap_out_spec", "vmap_in_spec", "vmap_grad", "scan", "while", "cond",
     "closed_over_qarray"],
)  # fmt: skip
def test_jaxprs_and_values_match_jax(both: Any, name: str) -> None:
    (J, jd), (L, ld) = both
    jf, jx = _programs(J, jd)[name]
    lf, lx = _programs(L, ld)[name]
    assert str(L.make_jaxpr(lf)(lx)) == str(J.make_jaxpr(jf)(jx))
    for eager in (True, False):
        got = lf(lx) if eager else L.jit(lf)(lx)
        want = jf(jx)
        assert hasattr(got, "qvalue") == hasattr(want, "qvalue")  # a QArray or an array
        for a, b in zip(_flat(got), _flat(want), strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_vmap_of_jit_works_where_jax_crashes(both: Any) -> None:
    _, (L, d) = both
    qxs = d["q"](L.numpy.asarray(XS))
    out = L.vmap(L.jit(d["dq"]), in_axes=d["spec"](), axis_size=4)(qxs)
    assert str(L.typeof(out)) == "float32[4,2,3]"
    np.testing.assert_allclose(np.asarray(out), np.asarray(d["dq"](qxs)), rtol=1e-6)


@pytest.mark.parametrize("name", ["roundtrip", "quantize", "dequantize"])
def test_lowered_text_and_lojax_match_jax(both: Any, name: str) -> None:
    (J, jd), (L, ld) = both
    jf, jx = _programs(J, jd)[name]
    lf, lx = _programs(L, ld)[name]
    assert L.jit(lf).lower(lx).as_text() == J.jit(jf).lower(jx).as_text()
    assert str(L.jit(lf).trace(lx).lojax.jaxpr) == str(J.jit(jf).trace(jx).lojax.jaxpr)


def test_aot_stages_with_hi_arguments_and_results(both: Any) -> None:
    _, (L, d) = both
    x = L.numpy.asarray(X)
    qx = d["q"](x)
    compiled = L.jit(d["dq"]).lower(qx).compile()  # JAX 0.10.2 cannot call this one
    np.testing.assert_allclose(np.asarray(compiled(qx)), np.asarray(d["dq"](qx)), rtol=1e-6)
    produced = L.jit(d["q"]).lower(x).compile()(x)
    assert isinstance(produced, d["QArray"])
    np.testing.assert_array_equal(np.asarray(produced.qvalue), np.asarray(qx.qvalue))
    with pytest.raises(
        TypeError, match=r"Argument 'qx' compiled with q8\[2,3\] and called with q8"
    ):
        compiled(d["q"](L.numpy.ones((3, 3))))
    with pytest.raises(ValueError, match="hi-typed values"):
        compiled.serialize()
    identity = L.jit(lambda q: q)
    assert isinstance(identity(qx), d["QArray"]) and isinstance(identity(qx), d["QArray"])


def test_eval_shape_gives_hi_types_as_jax(both: Any) -> None:
    for api, d in both:
        x = api.numpy.asarray(X)
        assert repr(api.eval_shape(d["q"], x)) == "q8[2,3]"
        assert repr(api.jit(d["q"]).eval_shape(x)) == "q8[2,3]"
        assert api.eval_shape(d["dq"], d["q"](x)).shape == (2, 3)


def test_roundtrip_runs_as_the_array_program(both: Any) -> None:
    """After to-lojax, `jit(dequantize . quantize)` is the hand-written array program: the same
    StableHLO, so the same executable."""
    _, (L, d) = both
    jnp = L.numpy

    def by_hand(x: Any) -> Any:
        scale = jnp.max(jnp.abs(x), axis=-1) / 127.0
        return jnp.round(x / scale[..., None]).astype(jnp.int8).astype("float32") * scale[..., None]

    x = jnp.asarray(X)
    hi_text = L.jit(lambda x: d["dq"](d["q"](x))).lower(x).as_text()
    lo_text = L.jit(by_hand).lower(x).as_text()
    assert hi_text.replace("jit__lambda", "M") == lo_text.replace("jit_by_hand", "M")
