"""`ffi.ffi_call`, `ffi_lowering` and `build_ffi_lowering_function` against JAX 0.10.2: printed
jaxprs, lowered StableHLO, values of jaxlib's LAPACK Cholesky target (`lapack_spotrf_ffi`)
under jit and vmap, and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.interpreters.mlir
import numpy as np
import pytest
from jax.experimental import layout as jax_layout
from jaxlib.cpu import _lapack
from jaxlib.mlir import ir

import lamina
import lamina.extend
import lamina.interpreters.mlir
from lamina.experimental import layout as lamina_layout

pytestmark = pytest.mark.oracle

LIBS: list[Any] = [jax, lamina]

# Calling a LAPACK target directly needs its routines loaded (JAX's own linalg lowerings do it;
# Lamina's runtime does it when a module names a `lapack_` target).
_lapack.initialize()

X = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
XB = np.stack([X, 2 * X, 3 * X])
UPLO = np.uint8(ord("L"))


def _potrf(lib: Any, vmap_method: str | None = "broadcast_all") -> Callable[[Any], Any]:
    """The Cholesky kernel on a column-major matrix, in place, as JAX's own lowering calls it."""

    def f(x: Any) -> Any:
        call = lib.ffi.ffi_call(
            "lapack_spotrf_ffi",
            (lib.ShapeDtypeStruct(x.shape, x.dtype), lib.ShapeDtypeStruct(x.shape[:-2], np.int32)),
            input_layouts=[(*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)],
            output_layouts=[(*range(x.ndim - 2), x.ndim - 1, x.ndim - 2), None],
            input_output_aliases={0: 0},
            vmap_method=vmap_method,
        )
        return call(x, uplo=UPLO)

    return f


def _error(call: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def _same_error(make: Callable[[Any], Callable[[], Any]]) -> None:
    expected = _error(make(jax))
    assert _error(make(lamina)) == expected


def test_printed_jaxpr_matches_jax() -> None:
    jf, lf = _potrf(jax), _potrf(lamina)
    assert str(lamina.make_jaxpr(lf)(X)) == str(jax.make_jaxpr(jf)(X))


def test_lowered_text_matches_jax() -> None:
    jf, lf = _potrf(jax), _potrf(lamina)
    assert lamina.jit(lf).lower(X).as_text() == jax.jit(jf).lower(X).as_text()


def test_cholesky_target_values_match_jax_under_jit_and_eagerly() -> None:
    want = jax.jit(_potrf(jax))(X)
    got = lamina.jit(_potrf(lamina))(X)
    np.testing.assert_allclose(np.tril(np.asarray(got[0])), np.tril(np.asarray(want[0])))
    np.testing.assert_allclose(np.tril(np.asarray(got[0])), np.linalg.cholesky(X), rtol=1e-6)
    assert int(got[1]) == int(want[1]) == 0
    eager = _potrf(lamina)(X)
    np.testing.assert_array_equal(np.asarray(eager[0]), np.asarray(got[0]))


@pytest.mark.parametrize("method", ["broadcast_all", "expand_dims", "sequential"])
def test_vmap_jaxpr_and_values_match_jax(method: str) -> None:
    jf, lf = jax.vmap(_potrf(jax, method)), lamina.vmap(_potrf(lamina, method))
    assert str(lamina.make_jaxpr(lf)(XB)) == str(jax.make_jaxpr(jf)(XB))
    want, got = jax.jit(jf)(XB), lamina.jit(lf)(XB)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    np.testing.assert_allclose(np.tril(np.asarray(got[0])), np.linalg.cholesky(XB), rtol=1e-6)


def test_sequential_unrolled_vmap_prints_as_jax() -> None:
    jf = jax.vmap(_potrf(jax, "sequential_unrolled"))
    lf = lamina.vmap(_potrf(lamina, "sequential_unrolled"))
    assert str(lamina.make_jaxpr(lf)(XB)) == str(jax.make_jaxpr(jf)(XB))


def test_vmap_without_a_method_raises_jax_error() -> None:
    _same_error(lambda lib: lambda: lib.vmap(_potrf(lib, None))(XB))


def test_grad_raises_jax_error() -> None:
    def make(lib: Any) -> Callable[[], Any]:
        return lambda: lib.grad(lambda x: _potrf(lib)(x)[0].sum())(X)

    _same_error(make)


def _attributes_call(lib: Any, side_effect: bool = True) -> Callable[[Any], Any]:
    def g(x: Any) -> Any:
        call = lib.ffi.ffi_call(
            "lamina_test_target",
            lib.ShapeDtypeStruct(x.shape, x.dtype),
            has_side_effect=side_effect,
        )
        return call(
            x,
            a=1,
            b=2.0,
            c=True,
            d="s",
            e=np.arange(3, dtype=np.int32),
            f=np.dtype(np.float32),
            g=np.float32(1.5),
            h=np.array(2.0),
            i=(1, 2),
            j={"k": 1, "l": np.int8(-3)},
            k=np.array([True, False]),
        )

    return g


def test_attribute_conversion_prints_and_lowers_as_jax() -> None:
    jg, lg = _attributes_call(jax), _attributes_call(lamina)
    assert str(lamina.make_jaxpr(lg)(X)) == str(jax.make_jaxpr(jg)(X))
    assert lamina.jit(lg).lower(X).as_text() == jax.jit(jg).lower(X).as_text()


@pytest.mark.parametrize("side_effect", [True, False])
def test_unused_call_is_kept_only_with_a_side_effect(side_effect: bool) -> None:
    def make(lib: Any) -> Callable[[Any], Any]:
        def h(x: Any) -> Any:
            _attributes_call(lib, side_effect)(x)
            return x + 1

        return h

    want = jax.jit(make(jax)).lower(X).as_text()
    assert lamina.jit(make(lamina)).lower(X).as_text() == want
    assert ("lamina_test_target" in want) == side_effect


def test_ir_attribute_matches_jax() -> None:
    values = [1, 2.5, True, "s", np.int16(3), np.float64(0.5), np.arange(4.0).reshape(2, 2)]
    for value in values:
        with jax.interpreters.mlir.make_ir_context(), ir.Location.unknown():
            want = str(jax.interpreters.mlir.ir_attribute(value))
        with lamina.interpreters.mlir.make_ir_context(), ir.Location.unknown():
            got = str(lamina.interpreters.mlir.ir_attribute(value))
        assert got == want


def _layout_call(lib: Any, layout_module: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        call = lib.ffi.ffi_call(
            "lamina_test_target",
            lib.ShapeDtypeStruct(x.shape, x.dtype),
            input_layouts=[layout_module.Layout((1, 0))],
            output_layouts=layout_module.Layout((0, 1)),
        )
        return call(x)

    return f


def test_layout_objects_lower_as_jax() -> None:
    jf, lf = _layout_call(jax, jax_layout), _layout_call(lamina, lamina_layout)
    assert str(lamina.make_jaxpr(lf)(X)) == str(jax.make_jaxpr(jf)(X))
    assert lamina.jit(lf).lower(X).as_text() == jax.jit(jf).lower(X).as_text()


def _call_with(lib: Any, **options: Any) -> Callable[[], Any]:
    def run() -> Any:
        result = lib.ShapeDtypeStruct(X.shape, X.dtype)
        call = lib.ffi.ffi_call("lamina_test_target", [result], **options)
        return lib.make_jaxpr(lambda x: call(x))(X)

    return run


@pytest.mark.parametrize(
    "options",
    [
        {"vmap_method": "unknown"},
        {"legacy_backend_config": "cfg"},
        {"input_layouts": [None, None]},
        {"output_layouts": [None, None]},
        {"input_output_aliases": {1: 0}},
        {"input_output_aliases": {0: 1}},
        {"input_output_aliases": {0: 0}, "input_layouts": [(1, 0)], "output_layouts": [(0, 1)]},
    ],
    ids=[
        "vmap_method",
        "legacy",
        "in_layouts",
        "out_layouts",
        "alias_in",
        "alias_out",
        "alias_layout",
    ],
)
def test_argument_errors_match_jax(options: dict[str, Any]) -> None:
    _same_error(lambda lib: _call_with(lib, **options))


def test_alias_of_a_different_type_raises_jax_error() -> None:
    def make(lib: Any) -> Callable[[], Any]:
        def run() -> Any:
            call = lib.ffi.ffi_call(
                "t", lib.ShapeDtypeStruct((3,), np.float32), input_output_aliases={0: 0}
            )
            return lib.make_jaxpr(call)(X)

        return run

    _same_error(make)


def test_other_call_errors_match_jax() -> None:
    # The old form, arguments after the result types, is gone in 0.10.2.
    _same_error(
        lambda lib: lambda: lib.ffi.ffi_call("t", lib.ShapeDtypeStruct((2,), np.float32), X)
    )
    # Result types without shape and dtype; an unhashable attribute.
    _same_error(lambda lib: lambda: lib.ffi.ffi_call("t", ["f32[2]"]))
    _same_error(
        lambda lib: (
            lambda: lib.make_jaxpr(
                lambda x: lib.ffi.ffi_call("t", lib.ShapeDtypeStruct((2,), np.float32))(x, a=[1])
            )(X)
        )
    )


@pytest.mark.parametrize("attr", [1j, object(), "legacy"], ids=["complex", "object", "legacy"])
def test_lowering_errors_match_jax(attr: Any) -> None:
    def make(lib: Any) -> Callable[[], Any]:
        def f(x: Any) -> Any:
            if attr == "legacy":
                return lib.ffi.ffi_call(
                    "t", lib.ShapeDtypeStruct(x.shape, x.dtype), custom_call_api_version=2
                )(x, a=1)
            return lib.ffi.ffi_call("t", lib.ShapeDtypeStruct(x.shape, x.dtype))(x, a=attr)

        return lambda: lib.jit(f).lower(X)

    _same_error(make)


def test_legacy_api_version_lowers_as_jax() -> None:
    def make(lib: Any) -> Callable[[Any], Any]:
        return lambda x: lib.ffi.ffi_call(
            "t",
            lib.ShapeDtypeStruct(x.shape, x.dtype),
            custom_call_api_version=2,
            legacy_backend_config="opaque",
        )(x)

    jf, lf = make(jax), make(lamina)
    assert str(lamina.make_jaxpr(lf)(X)) == str(jax.make_jaxpr(jf)(X))
    assert lamina.jit(lf).lower(X).as_text() == jax.jit(jf).lower(X).as_text()


def _user_primitive(lib: Any, name: str) -> Any:
    """A library's own primitive lowered with `ffi_lowering` to the Cholesky target."""
    prim = lib.extend.core.Primitive(name)
    prim.multiple_results = True

    def abstract_eval(x: Any, **params: Any) -> Any:
        return [x, lib.core.ShapedArray(x.shape[:-2], np.dtype(np.int32))]

    prim.def_abstract_eval(abstract_eval)
    rule = lib.ffi.ffi_lowering(
        "lapack_spotrf_ffi",
        operand_layouts=[(0, 1)],
        result_layouts=[(0, 1), ()],
        operand_output_aliases={0: 0},
    )
    lib.interpreters.mlir.register_lowering(prim, rule)
    return prim


def test_ffi_lowering_rule_of_a_user_primitive_matches_jax() -> None:
    jp, lp = _user_primitive(jax, "my_potrf"), _user_primitive(lamina, "my_potrf")
    jf = lambda x: jp.bind(x, uplo=UPLO)  # noqa: E731
    lf = lambda x: lp.bind(x, uplo=UPLO)  # noqa: E731
    assert lamina.jit(lf).lower(X).as_text() == jax.jit(jf).lower(X).as_text()
    want, got = jax.jit(jf)(X), lamina.jit(lf)(X)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)


def test_build_ffi_lowering_function_returns_the_op() -> None:
    def make(lib: Any, name: str) -> Any:
        prim = lib.extend.core.Primitive(name)
        prim.def_abstract_eval(lambda x: x)
        build = lib.ffi.build_ffi_lowering_function("lamina_test_target", has_side_effect=True)

        def rule(ctx: Any, x: Any) -> Any:
            op = build(ctx, x, scale=0.5)
            return [op.result]

        lib.interpreters.mlir.register_lowering(prim, rule)
        return prim

    jp, lp = make(jax, "my_op"), make(lamina, "my_op")
    want = jax.jit(lambda x: jp.bind(x)).lower(X).as_text()
    assert lamina.jit(lambda x: lp.bind(x)).lower(X).as_text() == want
