"""`lax` convolutions on XLA against JAX 0.10.2: the lowered module text of `jit` equals
`jax.jit(f).lower(...).as_text()` (`stablehlo.convolution` with its dimension numbers, window,
group counts and precision config; complex operands as JAX lowers them for CPU), and the
compiled results equal JAX's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def _c(*shape: int) -> np.ndarray:
    return (_r(*shape) + 1j * _r(*shape)).astype(np.complex64)


Program = Callable[[Any, Any], Callable[..., Any]]
"""A program written once against `(lax, top-level API)`: Lamina's or JAX's."""

_X, _W = _r(2, 3, 6, 7), _r(4, 3, 3, 2)
_XT, _WT = _r(2, 6, 7, 3), _r(3, 2, 3, 4)

CASES: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "strided_dilated": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(x, w, (1, 2), "SAME", (1, 1), (2, 1))
        ),
        (_X, _W),
    ),
    "explicit_lhs_dilation": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 2), (-1, 1)), (2, 1), (1, 2))
        ),
        (_X, _W),
    ),
    "no_spatial": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(
                x, w, (), [], dimension_numbers=("NC", "IO", "CN")
            )
        ),
        (_r(2, 3), _r(3, 4)),
    ),
    "1d": (
        lambda lax, api: lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME_LOWER"),
        (_r(2, 3, 9), _r(4, 3, 4)),
    ),
    "3d_nhwc_groups": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(
                x,
                w,
                (1, 2, 1),
                "SAME",
                rhs_dilation=(1, 1, 2),
                dimension_numbers=("NDHWC", "DHWIO", "NDHWC"),
                feature_group_count=2,
            )
        ),
        (_r(2, 4, 5, 6, 4), _r(2, 3, 2, 2, 6)),
    ),
    "batch_groups": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2)
        ),
        (_r(4, 3, 6, 7), _r(6, 3, 3, 2)),
    ),
    "precision_preferred": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(
                x, w, (1, 1), "VALID", precision="highest", preferred_element_type=np.float32
            )
        ),
        (_X.astype(np.float16), _W.astype(np.float16)),
    ),
    "int32_nhwc": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
        ),
        ((_XT * 5).astype(np.int32), (_WT * 5).astype(np.int32)),
    ),
    "complex": (
        lambda lax, api: lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"),
        (_c(2, 3, 6, 7), _c(4, 3, 3, 2)),
    ),
    "complex_preferred": (
        lambda lax, api: (
            lambda x, w: lax.conv_general_dilated(
                x, w, (2, 1), "SAME", preferred_element_type=np.complex64
            )
        ),
        (_c(2, 3, 6, 7), _c(4, 3, 3, 2)),
    ),
    "grad_feature_groups": (
        lambda lax, api: api.grad(
            lambda x, w: (
                lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 2)), feature_group_count=3) ** 2
            ).sum(),
            (0, 1),
        ),
        (_r(2, 6, 6, 7), _r(6, 2, 3, 2)),
    ),
    "grad_batch_groups": (
        lambda lax, api: api.grad(
            lambda x, w: (
                lax.conv_general_dilated(
                    x,
                    w,
                    (2, 1),
                    "SAME",
                    batch_group_count=2,
                    dimension_numbers=("NHWC", "OIHW", "CNHW"),
                )
                ** 2
            ).sum(),
            (0, 1),
        ),
        (_r(4, 6, 7, 3), _r(6, 3, 3, 2)),
    ),
    "vmap_both": (
        lambda lax, api: api.vmap(
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=3),
            (0, 0),
        ),
        (_r(3, 2, 6, 6, 7), _r(3, 6, 2, 3, 2)),
    ),
    "vmap_rhs_batch_groups": (
        lambda lax, api: api.vmap(
            lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2),
            (None, 1),
        ),
        (_r(4, 3, 6, 7), _r(6, 3, 3, 3, 2)),
    ),
    "conv_transpose": (
        lambda lax, api: (
            lambda x, w: lax.conv_transpose(x, w, (2, 1), "SAME", transpose_kernel=True)
        ),
        (_XT, _r(3, 2, 4, 3)),
    ),
    "patches": (
        lambda lax, api: lambda x: lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID"),
        (_X,),
    ),
    "local": (
        lambda lax, api: lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 3)),
        (_X, _r(7, 18, 5, 5)),
    ),
}


SLOW = {"1d", "int32_nhwc", "complex_preferred", "vmap_rhs_batch_groups", "patches"}


@pytest.mark.parametrize(
    "name", [pytest.param(k, marks=pytest.mark.slow) if k in SLOW else k for k in CASES]
)
def test_lowering_and_results_are_jaxs(name: str) -> None:
    program, args = CASES[name]
    mine, theirs = program(lamina.lax, lamina), program(jax.lax, jax)
    assert lamina.jit(mine).lower(*args).as_text() == jax.jit(theirs).lower(*args).as_text()
    got = jax.tree_util.tree_leaves(lamina.jit(mine)(*args))
    want = jax.tree_util.tree_leaves(jax.jit(theirs)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
