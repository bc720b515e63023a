"""Hi types (seed 003, issue 19): the cost of the abstraction and of the to-lojax pass.

Issue 19 asks for: `jit(dequantize . quantize)` on the seed's quantized array runs as fast as
the hand-written array program (1.0 +- 5%: compare `hijax.jit_roundtrip_hi` with
`hijax.jit_roundtrip_arrays`, Lamina's column of each), and the to-lojax pass on a
1,000-equation jaxpr at most 20 ms (`hijax.to_lojax_1000`; JAX's side is its own
`lower_jaxpr` on the same program).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tools.bench.registry import Side, Timed, benchmark

ROWS, COLS = 256, 256
CHAIN = 250  # (quantize, dequantize, mul, add) per link: 1,000 equations


def _hijax(side: Side) -> Any:
    import importlib

    return importlib.import_module(f"{side.api().__name__}.experimental.hijax")


def _qarray(side: Side) -> tuple[Any, Any]:
    """The seed's quantize and dequantize, defined on `side`'s hijax API."""
    api, hijax = side.api(), _hijax(side)
    jnp = api.numpy

    @dataclass(frozen=True)
    class QArray:
        qvalue: Any
        scale: Any

    @dataclass(frozen=True)
    class QArrayTy(hijax.HiType):  # type: ignore[misc, name-defined]  # one of two APIs
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

    hijax.register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape))

    class Quantize(hijax.VJPHiPrimitive):  # type: ignore[misc, name-defined]
        def __init__(self, x_aval: Any) -> None:
            self.in_avals = (x_aval,)
            self.out_aval = QArrayTy(x_aval.shape)
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, x: Any) -> Any:
            return QArray(*_quantized(jnp, x))

    class Dequantize(hijax.VJPHiPrimitive):  # type: ignore[misc, name-defined]
        def __init__(self, q_aval: Any) -> None:
            self.in_avals = (q_aval,)
            self.out_aval = hijax.ShapedArray(q_aval.shape, jnp.dtype("float32"))
            self.params: dict[str, Any] = {}
            super().__init__()

        def expand(self, qx: Any) -> Any:
            return qx.qvalue.astype("float32") * qx.scale[..., None]

    return (lambda x: Quantize(api.typeof(x))(x)), (lambda q: Dequantize(api.typeof(q))(q))


def _quantized(jnp: Any, x: Any) -> tuple[Any, Any]:
    scale = jnp.max(jnp.abs(x), axis=-1) / 127.0
    return jnp.round(x / scale[..., None]).astype(jnp.int8), scale


def _x(side: Side) -> Any:
    import numpy as np

    rng = np.random.default_rng(0)
    return side.api().numpy.asarray(rng.standard_normal((ROWS, COLS), dtype=np.float32))


@benchmark("hijax.jit_roundtrip_hi")
def jit_roundtrip_hi(side: Side) -> Timed:
    """A compiled call of `jit(dequantize . quantize)` on f32[256,256], hi types inside."""
    api = side.api()
    quantize, dequantize = _qarray(side)
    f = api.jit(lambda x: dequantize(quantize(x)))
    x = _x(side)
    f(x).block_until_ready()
    return lambda: f(x).block_until_ready()


@benchmark("hijax.jit_roundtrip_arrays")
def jit_roundtrip_arrays(side: Side) -> Timed:
    """The same program written by hand on arrays: `jit`ted quantize-dequantize."""
    api = side.api()
    jnp = api.numpy

    def by_hand(x: Any) -> Any:
        q, scale = _quantized(jnp, x)
        return q.astype("float32") * scale[..., None]

    f = api.jit(by_hand)
    x = _x(side)
    f(x).block_until_ready()
    return lambda: f(x).block_until_ready()


@benchmark("hijax.to_lojax_1000")
def to_lojax_1000(side: Side) -> Timed:
    """The to-lojax pass on a 1,000-equation jaxpr (250 quantize/dequantize/mul/add links on
    f32[8,8]); a fresh copy of the jaxpr each time, so no memo answers."""
    api = side.api()
    quantize, dequantize = _qarray(side)

    def chain(x: Any) -> Any:
        for _ in range(CHAIN):
            x = dequantize(quantize(x)) * 0.5 + x
        return x

    closed = api.make_jaxpr(chain)(api.numpy.ones((8, 8)))
    if side is Side.LAMINA:
        from lamina_hijax import to_lojax

        jaxpr = closed.jaxpr
        return lambda: to_lojax(jaxpr.replace(eqns=list(jaxpr.eqns)))
    from jax._src import core as jax_core
    from jax._src.interpreters import partial_eval as pe

    def lower() -> Any:
        fresh = jax_core.ClosedJaxpr(closed.jaxpr.replace(), closed.consts)
        return pe.lower_jaxpr2(fresh)

    return lower
