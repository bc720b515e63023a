"""`lax` convolutions against JAX 0.10.2: `conv_general_dilated` (values, printed jaxprs,
errors), its jvp/transpose and batching rules three ways (JAX's values, JAX's printed jaxpr,
finite differences / a Python loop), the wrappers (`conv`, `conv_with_general_padding`,
`conv_transpose`, `conv_general_dilated_patches`, `conv_general_dilated_local`) and the shape
helpers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax as ll
from lamina_core import numpy as lnp

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jl, jnp = jax.lax, jax.numpy

_rng = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def _both(f: Any, g: Any, *args: Any) -> None:
    assert str(lc.make_jaxpr(f)(*args)) == str(jax.make_jaxpr(g)(*args))


def _close(got: Any, want: Any, tol: float = 1e-4) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# name -> (conv_general_dilated keyword arguments, lhs shape, rhs shape)
Case = tuple[dict[str, Any], tuple[int, ...], tuple[int, ...]]
CASES: dict[str, Case] = {
    "1d_same_lower": ({"window_strides": (2,), "padding": "SAME_LOWER"}, (2, 3, 9), (4, 3, 4)),
    "2d_valid": ({"window_strides": (1, 1), "padding": "VALID"}, (2, 3, 6, 7), (4, 3, 3, 2)),
    "2d_same_strided": ({"window_strides": (2, 3), "padding": "SAME"}, (2, 3, 7, 8), (4, 3, 3, 2)),
    "2d_explicit_dilated": (
        {
            "window_strides": (2, 1),
            "padding": ((1, 2), (0, 1)),
            "lhs_dilation": (2, 1),
            "rhs_dilation": (1, 2),
        },
        (2, 3, 6, 7),
        (4, 3, 3, 2),
    ),
    "2d_negative_padding": (
        {"window_strides": (1, 1), "padding": ((-1, 2), (1, -2))},
        (1, 2, 6, 7),
        (3, 2, 2, 2),
    ),
    "2d_nhwc": (
        {
            "window_strides": (1, 2),
            "padding": "SAME",
            "dimension_numbers": ("NHWC", "HWIO", "NHWC"),
        },
        (2, 6, 7, 3),
        (3, 2, 3, 4),
    ),
    "2d_feature_groups": (
        {"window_strides": (1, 1), "padding": "VALID", "feature_group_count": 3},
        (2, 6, 6, 7),
        (6, 2, 3, 2),
    ),
    "2d_batch_groups": (
        {"window_strides": (1, 1), "padding": "VALID", "batch_group_count": 2},
        (4, 3, 6, 7),
        (6, 3, 3, 2),
    ),
    "2d_batch_groups_layout": (
        {
            "window_strides": (2, 1),
            "padding": ((1, 0), (2, 1)),
            "batch_group_count": 2,
            "dimension_numbers": ("NHWC", "OIHW", "CNHW"),
        },
        (4, 6, 7, 3),
        (6, 3, 3, 2),
    ),
    "3d_groups_dilated": (
        {
            "window_strides": (1, 2, 1),
            "padding": "SAME",
            "rhs_dilation": (1, 1, 2),
            "feature_group_count": 2,
            "dimension_numbers": ("NDHWC", "DHWIO", "NDHWC"),
        },
        (2, 4, 5, 6, 4),
        (2, 3, 2, 2, 6),
    ),
}
QUICK = ["1d_same_lower", "2d_explicit_dilated", "2d_feature_groups", "2d_batch_groups_layout"]
SLOW_REST = [pytest.param(k, marks=pytest.mark.slow) for k in CASES if k not in QUICK]


def _conv(lax: Any, kw: dict[str, Any]) -> Callable[[Any, Any], Any]:
    return lambda x, w: lax.conv_general_dilated(x, w, **kw)


@pytest.mark.parametrize("name", list(CASES))
def test_values_are_jaxs(name: str) -> None:
    kw, ls, rs = CASES[name]
    x, w = _r(*ls), _r(*rs)
    _close(ll.conv_general_dilated(x, w, **kw), jax.jit(_conv(jl, kw))(x, w))


@pytest.mark.parametrize("name", [*QUICK, *SLOW_REST])
def test_jaxprs_are_jaxs(name: str) -> None:
    kw, ls, rs = CASES[name]
    x, w = _r(*ls), _r(*rs)
    _both(_conv(ll, kw), _conv(jl, kw), x, w)
    _both(
        lambda x, w: lc.jvp(_conv(ll, kw), (x, w), (x, w)),
        lambda x, w: jax.jvp(_conv(jl, kw), (x, w), (x, w)),
        x,
        w,
    )
    for argnums in (0, 1):
        _both(
            lc.grad(lambda x, w: lnp.sum(_conv(ll, kw)(x, w) ** 2), argnums),
            jax.grad(lambda x, w: jnp.sum(_conv(jl, kw)(x, w) ** 2), argnums),
            x,
            w,
        )
    xb, wb = _r(3, *ls), _r(3, *rs)
    xm, wm = np.moveaxis(xb, 0, 2).copy(), np.moveaxis(wb, 0, -1).copy()
    for axes, args in (
        ((0, None), (xb, w)),
        ((None, 0), (x, wb)),
        ((0, 0), (xb, wb)),
        ((2, None), (xm, w)),
        ((None, -1), (x, wm)),
        ((2, -1), (xm, wm)),
    ):
        _both(lc.vmap(_conv(ll, kw), axes), jax.vmap(_conv(jl, kw), axes), *args)


@pytest.mark.parametrize("name", [*QUICK, *SLOW_REST])
def test_grad_is_jaxs_and_finite_differences(name: str) -> None:
    kw, ls, rs = CASES[name]
    x, w = _r(*ls), _r(*rs)
    ct = _r(*jax.eval_shape(_conv(jl, kw), x, w).shape)

    # Bilinear in (x, w): a central difference along any direction is exact up to rounding.
    def f_l(x: Any, w: Any) -> Any:
        return lnp.sum(ct * _conv(ll, kw)(x, w))

    def f_j(x: Any, w: Any) -> Any:
        return jnp.sum(ct * _conv(jl, kw)(x, w))

    gx, gw = lc.grad(f_l, (0, 1))(x, w)
    jx, jw = jax.jit(jax.grad(f_j, (0, 1)))(x, w)
    _close(gx, jx)
    _close(gw, jw)
    dx, dw = _r(*ls), _r(*rs)
    eps = 0.5
    up = float(f_l(x + eps * dx, w + eps * dw))
    down = float(f_l(x - eps * dx, w - eps * dw))
    fd = (up - down) / (2 * eps)
    analytic = float(np.sum(np.asarray(gx) * dx) + np.sum(np.asarray(gw) * dw))
    np.testing.assert_allclose(analytic, fd, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", [*QUICK, *SLOW_REST])
def test_vmap_is_jaxs_and_a_loop(name: str) -> None:
    kw, ls, rs = CASES[name]
    x, w = _r(*ls), _r(*rs)
    xb, wb = _r(3, *ls), _r(3, *rs)
    for axes, args in (((0, None), (xb, w)), ((None, 0), (x, wb)), ((0, 0), (xb, wb))):
        got = lc.vmap(_conv(ll, kw), axes)(*args)
        _close(got, jax.jit(jax.vmap(_conv(jl, kw), axes))(*args))
        for i in range(3):
            a = args[0][i] if axes[0] is not None else args[0]
            b = args[1][i] if axes[1] is not None else args[1]
            _close(np.asarray(got)[i], ll.conv_general_dilated(a, b, **kw))


def test_vmap_of_grad_and_empty_batches_are_jaxs() -> None:
    kw, ls, rs = CASES["2d_feature_groups"]
    xb, w = _r(2, *ls), _r(*rs)

    def per_example(lax: Any, lib: Any) -> Any:
        return lambda x, w: lib.sum(_conv(lax, kw)(x, w))

    _both(
        lc.vmap(lc.grad(per_example(ll, lnp), 1), (0, None)),
        jax.vmap(jax.grad(per_example(jl, jnp), 1), (0, None)),
        xb,
        w,
    )
    _close(
        lc.vmap(lc.grad(per_example(ll, lnp), 1), (0, None))(xb, w),
        jax.jit(jax.vmap(jax.grad(per_example(jl, jnp), 1), (0, None)))(xb, w),
    )
    empty = np.zeros((0, *ls), np.float32)
    _both(lc.vmap(_conv(ll, kw), (0, None)), jax.vmap(_conv(jl, kw), (0, None)), empty, w)
    assert lc.vmap(_conv(ll, kw), (0, None))(empty, w).shape == (0, 2, 6, 4, 6)


def test_dtypes_precision_and_preferred_element_type() -> None:
    x, w = _r(2, 3, 6, 7), _r(4, 3, 3, 2)
    for kw, args in (
        ({"preferred_element_type": np.float32}, (x.astype(np.float16), w.astype(np.float16))),
        ({"preferred_element_type": np.int32}, ((x * 4).astype(np.int8), (w * 4).astype(np.int8))),
        ({"precision": "highest"}, (x, w)),
        ({"precision": ("highest", "default")}, (x, w)),
        ({}, ((x * 4).astype(np.int32), (w * 4).astype(np.int32))),
        ({}, ((x + 1j * x).astype(np.complex64), (w - 2j * w).astype(np.complex64))),
    ):
        _both(
            lambda a, b, kw=kw: ll.conv_general_dilated(a, b, (1, 1), "SAME", **kw),
            lambda a, b, kw=kw: jl.conv_general_dilated(a, b, (1, 1), "SAME", **kw),
            *args,
        )
        got = ll.conv_general_dilated(args[0], args[1], (1, 1), "SAME", **kw)
        want = jax.jit(lambda a, b, kw=kw: jl.conv_general_dilated(a, b, (1, 1), "SAME", **kw))(
            *args
        )
        assert got.dtype == want.dtype
        _close(np.asarray(got).astype(np.complex128), np.asarray(want).astype(np.complex128), 1e-2)
    h = (x.astype(np.float16), w.astype(np.float16))
    _both(
        lc.grad(
            lambda a, b: lnp.sum(ll.conv(a, b, (1, 1), "SAME", preferred_element_type=np.float32)),
            (0, 1),
        ),
        jax.grad(
            lambda a, b: jnp.sum(jl.conv(a, b, (1, 1), "SAME", preferred_element_type=np.float32)),
            (0, 1),
        ),
        *h,
    )


def test_wrappers_are_jaxs() -> None:
    x, w = _r(2, 3, 6, 7), _r(4, 3, 3, 2)
    xt, wt = _r(2, 6, 7, 3), _r(3, 2, 3, 4)
    programs: list[tuple[Callable[[Any], Any], tuple[Any, ...]]] = [
        (lambda lax: lambda a, b: lax.conv(a, b, (1, 2), "SAME"), (x, w)),
        (
            lambda lax: (
                lambda a, b: lax.conv_with_general_padding(
                    a, b, (1, 2), ((1, 1), (0, 2)), (2, 1), None
                )
            ),
            (x, w),
        ),
        (lambda lax: lambda a, b: lax.conv_transpose(a, b, (2, 1), "SAME"), (xt, wt)),
        (
            lambda lax: (
                lambda a, b: lax.conv_transpose(
                    a, b, (2, 1), ((1, 2), (0, 1)), transpose_kernel=True
                )
            ),
            (xt, _r(3, 2, 4, 3)),
        ),
        (
            lambda lax: (
                lambda a, b: lax.conv_transpose(
                    a, b, (2, 1), ((1, 2), (0, 1)), use_consistent_padding=True
                )
            ),
            (xt, wt),
        ),
        (
            lambda lax: (
                lambda a, b: lax.conv_transpose(
                    a, b, (2, 3), "VALID", (2, 1), ("NCHW", "OIHW", "NCHW")
                )
            ),
            (x, w),
        ),
        (
            lambda lax: lambda a, b: lax.conv_transpose(a, b, (2,), "VALID"),
            (_r(2, 5, 3), _r(3, 3, 4)),
        ),
        (lambda lax: lambda a: lax.conv_general_dilated_patches(a, (2, 3), (1, 1), "VALID"), (x,)),
        (
            lambda lax: (
                lambda a: lax.conv_general_dilated_patches(
                    a,
                    (2, 3),
                    (2, 1),
                    "SAME",
                    dimension_numbers=("NHWC", "HWIO", "NHWC"),
                    precision=lax.Precision.HIGH,
                )
            ),
            (xt,),
        ),
        (
            lambda lax: lambda a, b: lax.conv_general_dilated_local(a, b, (1, 1), "VALID", (2, 3)),
            (x, _r(7, 18, 5, 5)),
        ),
        (
            lambda lax: (
                lambda a, b: lax.conv_general_dilated_local(
                    a,
                    b,
                    (1, 1),
                    "SAME",
                    (2, 3),
                    dimension_numbers=("NHWC", "WHIO", "CNWH"),
                    precision=("highest", "high"),
                )
            ),
            (xt, _r(7, 6, 18, 7)),
        ),
    ]
    for program, args in programs:
        _both(program(ll), program(jl), *args)
        _close(program(ll)(*args), jax.jit(program(jl))(*args))


def test_shape_helpers_are_jaxs() -> None:
    for name in ("SAME", "VALID", "SAME_LOWER", "same"):
        got = ll.padtype_to_pads((5, 8), (3, 2), (2, 3), name)
        assert got == jl.padtype_to_pads((5, 8), (3, 2), (2, 3), name)
    nhwc = ("NHWC", "HWIO", "NHWC")
    paddings: list[Any] = ["SAME", "VALID", ((1, 2), (0, 1))]
    for padding in paddings:
        assert ll.conv_general_shape_tuple(
            (2, 7, 8, 3), (3, 2, 3, 4), (2, 1), padding, nhwc
        ) == jl.conv_general_shape_tuple((2, 7, 8, 3), (3, 2, 3, 4), (2, 1), padding, nhwc)
        assert ll.conv_transpose_shape_tuple(
            (2, 7, 8, 3), (3, 2, 3, 4), (2, 1), padding, nhwc
        ) == jl.conv_transpose_shape_tuple((2, 7, 8, 3), (3, 2, 3, 4), (2, 1), padding, nhwc)
    assert ll.conv_shape_tuple(
        (4, 3, 7, 8), (6, 3, 3, 2), (1, 2), "SAME", 2
    ) == jl.conv_shape_tuple((4, 3, 7, 8), (6, 3, 3, 2), (1, 2), "SAME", 2)
    odd = ("NHWC", "HWIO", "CWNH")
    assert ll.conv_general_permutations(odd) == jl.conv_general_permutations(odd)
    got_dn = ll.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), odd)
    assert isinstance(got_dn, ll.ConvDimensionNumbers)
    assert tuple(got_dn) == tuple(jl.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), odd))
    assert ll.conv_dimension_numbers((1, 2, 3), (1, 2, 3), got_dn) is got_dn
    assert str(ll.conv_dimension_numbers((1, 2, 3), (4, 5, 6), None)) == str(
        jl.conv_dimension_numbers((1, 2, 3), (4, 5, 6), None)
    )


def _ones(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


_X, _W = _ones(2, 4, 6, 7), _ones(6, 2, 3, 2)
_FG = {"feature_group_count": 2}
ERRORS: dict[str, Callable[[Any], Any]] = {
    "ndim": lambda lax: lax.conv_general_dilated(_ones(2, 3, 4), _W, (1, 1), "VALID"),
    "dn_length": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHW")
    ),
    "dn_type": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers="NCHW"
    ),
    "dn_element": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NCHW", 1, "NCHW")
    ),
    "dn_rank": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NCH", "OIHW", "NCHW")
    ),
    "dn_letters": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NXHW", "OIHW", "NCHW")
    ),
    "dn_duplicate": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NCHH", "OIHW", "NCHW")
    ),
    "dn_spatial": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", dimension_numbers=("NCHW", "OIHX", "NCHW")
    ),
    "fg_positive": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", feature_group_count=0
    ),
    "fg_divides": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", feature_group_count=3
    ),
    "fg_in_features": lambda lax: lax.conv_general_dilated(_X, _W, (1, 1), "VALID"),
    "fg_out_features": lambda lax: lax.conv_general_dilated(
        _X, _ones(5, 1, 3, 2), (1, 1), "VALID", feature_group_count=4
    ),
    "bg_positive": lambda lax: lax.conv_general_dilated(
        _X, _ones(6, 4, 3, 2), (1, 1), "VALID", batch_group_count=0
    ),
    "bg_divides": lambda lax: lax.conv_general_dilated(
        _X, _ones(6, 4, 3, 2), (1, 1), "VALID", batch_group_count=3
    ),
    "bg_out_features": lambda lax: lax.conv_general_dilated(
        _ones(4, 4, 6, 7), _ones(5, 4, 3, 2), (1, 1), "VALID", batch_group_count=2
    ),
    "both_groups": lambda lax: lax.conv_general_dilated(
        _ones(4, 4, 6, 7), _ones(4, 2, 3, 2), (1, 1), "VALID", batch_group_count=2, **_FG
    ),
    "strides_rank": lambda lax: lax.conv_general_dilated(_X, _W, (1,), ((0, 0), (0, 0)), **_FG),
    "dtypes": lambda lax: lax.conv_general_dilated(_X, _W.astype(np.int32), (1, 1), "VALID", **_FG),
    "string_padding_lhs_dilation": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "SAME", lhs_dilation=(2, 1), **_FG
    ),
    "bad_padding": lambda lax: lax.conv_general_dilated(_X, _W, (1, 1), [1, 2], **_FG),
    "unknown_padding": lambda lax: lax.conv_general_dilated(_X, _W, (1, 1), "FULL", **_FG),
    "over_cropping": lambda lax: lax.conv_general_dilated(_X, _W, (1, 1), ((-7, 0), (0, 0)), **_FG),
    "padding_count": lambda lax: lax.conv_general_dilated(_X, _W, (1, 1), ((0, 0),), **_FG),
    "dilation": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", rhs_dilation=(0, 1), **_FG
    ),
    "preferred_kind": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", preferred_element_type=np.int32, **_FG
    ),
    "preferred_narrow": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", preferred_element_type=np.float16, **_FG
    ),
    "preferred_sign": lambda lax: lax.conv_general_dilated(
        _X.astype(np.int8),
        _W.astype(np.int8),
        (1, 1),
        "VALID",
        preferred_element_type=np.uint8,
        **_FG,
    ),
    "precision": lambda lax: lax.conv_general_dilated(
        _X, _W, (1, 1), "VALID", precision="bogus", **_FG
    ),
    "transpose_rank": lambda lax: lax.conv_transpose(
        _ones(1, 1, 1, 1, 1, 1), _ones(1, 1, 1, 1, 1, 1), (1,) * 4, "VALID"
    ),
    "transpose_padding": lambda lax: lax.conv_transpose(
        _ones(2, 6, 7, 3), _ones(3, 2, 3, 4), (1, 1), "FULL", use_consistent_padding=True
    ),
    "local_shapes": lambda lax: lax.conv_general_dilated_local(
        _X, _ones(7, 32, 5, 5), (1, 1), "VALID", (2, 2), precision=lax.Precision.HIGH
    ),
    "padtype": lambda lax: lax.padtype_to_pads((4,), (2,), (1,), 3),
    "shape_tuple_pads": lambda lax: lax.conv_general_shape_tuple(
        (2, 3, 4, 5), (4, 3, 2, 2), (1, 1), ((0, 0),), ("NCHW", "OIHW", "NCHW")
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_are_jaxs(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        ERRORS[name](jl)
    with pytest.raises(type(theirs.value)) as mine:
        ERRORS[name](ll)
    assert str(mine.value) == str(theirs.value)
