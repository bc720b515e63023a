"""`lamina.ops` (segment reductions), `lamina.image` (resize, scale_and_translate) and
`lamina.scipy.fft` (DCTs) against JAX 0.10.2: jitted values over shapes, dtypes and options,
printed jaxprs, gradients, `vmap` against a Python loop, and the errors JAX raises for bad
input.

Compiling dominates the time, so values are checked on a few programs that each hold several
variants, and printed jaxprs (cheap) on the whole matrix of options.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.testing import load_test_module

oracle = load_test_module(Path(__file__).parent, "library_oracle")

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX prints them so with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _data(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind in "iu":
        return _rng.integers(-5, 6, shape).astype(dtype)
    x = _rng.standard_normal(shape)
    if kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("name", ["ops", "image", "scipy.fft", "scipy.signal"])
def test_umbrella_module_imports_as_jax_and_lists_jaxs_public_names(name: str) -> None:
    ours = importlib.import_module(f"lamina.{name}")
    theirs = importlib.import_module(f"jax.{name}")
    public = {n for n in dir(theirs) if not n.startswith("_")}
    assert public <= set(dir(ours))
    assert set(ours.__all__) == public


def test_ops_and_image_are_attributes_of_the_umbrella() -> None:
    assert lamina.ops.segment_sum is importlib.import_module("lamina.ops").segment_sum
    assert lamina.image.resize is importlib.import_module("lamina.image").resize


# --- segment reductions -------------------------------------------------------------------

SEGMENT_OPS = ["segment_sum", "segment_max", "segment_min", "segment_prod"]
IDS = np.array([0, 2, 2, 1, 0, 3, 5, 1], np.int32)
"""Repeats, an unsorted order, and 5 (dropped when `num_segments` is 4)."""
SORTED_IDS = np.sort(IDS)


def _segment_variants(m: ModuleType, op: str, data: Any) -> tuple[Any, ...]:
    f = getattr(m.ops, op)
    return (
        f(data, IDS, num_segments=4),  # id 5 dropped
        f(data, IDS, 8),  # empty segments hold the identity
        f(data, SORTED_IDS, 6, indices_are_sorted=True),
        f(data[:4], np.arange(4, dtype=np.int32), 4, unique_indices=True),
        f(data, IDS, 6, bucket_size=3),
        f(data, IDS, 4, mode="clip"),
    )


@pytest.mark.parametrize("op", SEGMENT_OPS)
def test_segment_reduction_values(op: str) -> None:
    # One program per reduction (compiling dominates): every variant, three dtypes.
    data = [_data((8, 3), dtype) for dtype in (np.float32, np.int32, np.float16)]
    oracle.assert_same_values(
        lambda m: lambda *ds: [_segment_variants(m, op, d) for d in ds], *data
    )


def test_segment_sum_of_a_vector_with_bool_data_and_traced_ids() -> None:
    ids = np.array([1, 0, 1, 1], np.int32)
    oracle.assert_same_values(
        lambda m: lambda d, s: (m.ops.segment_sum(d, s, 2), m.ops.segment_max(d > 0, s, 2)),
        _data((4,), np.float32),
        ids,
    )


@pytest.mark.parametrize("op", SEGMENT_OPS)
@pytest.mark.parametrize("bucket_size", [None, 3])
def test_segment_reduction_jaxpr(op: str, bucket_size: int | None) -> None:
    def program(m: ModuleType) -> Any:
        return lambda d: getattr(m.ops, op)(d, IDS, 6, bucket_size=bucket_size)

    oracle.assert_same_jaxpr(program, _data((8, 3), np.float32))


def test_segment_sum_jaxpr_with_traced_sorted_ids() -> None:
    oracle.assert_same_jaxpr(
        lambda m: lambda d, s: m.ops.segment_sum(d, s, 6, indices_are_sorted=True, bucket_size=2),
        _data((8,), np.float32),
        SORTED_IDS,
    )


@pytest.mark.parametrize("op", ["segment_sum", "segment_max", "segment_min"])
def test_segment_reduction_gradient(op: str) -> None:
    weights = _data((5, 3), np.float32)

    def program(m: ModuleType) -> Any:
        def loss(d: Any) -> Any:
            return m.numpy.sum(getattr(m.ops, op)(d, IDS, 5) * weights)

        return m.grad(loss)

    data = _data((8, 3), np.float32)
    oracle.assert_same_jaxpr(program, data)
    oracle.assert_same_values(program, data)


@pytest.mark.parametrize("op", SEGMENT_OPS)
def test_segment_reduction_vmap_equals_a_loop(op: str) -> None:
    batch = _data((3, 8, 2), np.float32)
    ids = np.stack([IDS, SORTED_IDS, IDS[::-1]])
    f = getattr(lamina.ops, op)
    got = lamina.vmap(lambda d, s: f(d, s, 6))(batch, ids)
    looped = np.stack([np.asarray(f(d, s, 6)) for d, s in zip(batch, ids, strict=True)])
    np.testing.assert_array_equal(np.asarray(got), looped)
    oracle.assert_same_jaxpr(lambda m: m.vmap(lambda d, s: getattr(m.ops, op)(d, s, 6)), batch, ids)


def test_segment_prod_gradient_with_repeated_ids_is_jaxs_error() -> None:
    def program(m: ModuleType) -> Any:
        return m.grad(lambda d: m.numpy.sum(m.ops.segment_prod(d, IDS, 6)))

    oracle.assert_same_error(program, _data((8,), np.float32))


def test_segment_sum_with_traced_num_segments_under_jit_is_jaxs_error() -> None:
    oracle.assert_same_error(
        lambda m: lambda d, n: m.ops.segment_sum(d, IDS, n),
        _data((8,), np.float32),
        4,
        jit=True,
    )


def test_segment_sum_without_num_segments_of_traced_ids_is_jaxs_error() -> None:
    oracle.assert_same_error(
        lambda m: lambda d, s: m.ops.segment_max(d, s), _data((8,), np.float32), IDS, jit=True
    )


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param((np.ones(8, np.float32), IDS, -1), id="negative num_segments"),
        pytest.param((list(range(8)), IDS, 4), id="list data"),
    ],
)
def test_segment_sum_bad_input_is_jaxs_error(bad: tuple[Any, ...]) -> None:
    oracle.assert_same_error(lambda m: lambda: m.ops.segment_sum(*bad))


@pytest.mark.parametrize("op", ["segment_sum", "segment_min"])
def test_segment_reduction_runs_eagerly_and_counts_segments_from_the_ids(op: str) -> None:
    # Without `num_segments` (max id + 1): JAX computes it only outside `jit`.
    data = _data((8, 3), np.float32)
    oracle.assert_close(getattr(lamina.ops, op)(data, IDS), getattr(jax.ops, op)(data, IDS))


# --- image --------------------------------------------------------------------------------

METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
IMAGE = _data((6, 9, 2), np.float32)
SHAPES = [(3, 4, 2), (11, 13, 2), (4, 14, 2), (6, 9, 2)]
"""Down, up, one of each, and unchanged (a copy)."""


@pytest.mark.parametrize("method", METHODS)
def test_resize_values(method: str) -> None:
    oracle.assert_same_values(
        lambda m: (
            lambda x: (
                *(m.image.resize(x, shape, method) for shape in SHAPES[:2]),
                m.image.resize(x, SHAPES[2], method, antialias=False),
            )
        ),
        IMAGE,
    )


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint8])
def test_resize_of_other_dtypes(dtype: Any) -> None:
    image = np.abs(_data((5, 4, 3), dtype))
    oracle.assert_same_values(
        lambda m: (
            lambda x: (
                m.image.resize(x, (9, 2, 3), "nearest"),
                m.image.resize(x, (3, 7, 3), "bicubic"),
            )
        ),
        image,
    )


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", METHODS)
def test_resize_jaxpr(method: str, antialias: bool, shape: tuple[int, ...]) -> None:
    oracle.assert_same_jaxpr(
        lambda m: lambda x: m.image.resize(x, shape, method, antialias=antialias), IMAGE
    )


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.uint8])
@pytest.mark.parametrize("method", ["nearest", "trilinear", "tricubic", "lanczos5"])
def test_resize_jaxpr_of_other_dtypes(method: str, dtype: Any) -> None:
    image = np.abs(_data((5, 4, 3), dtype))
    oracle.assert_same_jaxpr(lambda m: lambda x: m.image.resize(x, (9, 2, 3), method), image)


def test_resize_jaxpr_with_an_enum_method_and_precision() -> None:
    def program(m: ModuleType) -> Any:
        return lambda x: m.image.resize(
            x, [3, 9, 1], m.image.ResizeMethod.LANCZOS5, False, m.lax.Precision.DEFAULT
        )

    oracle.assert_same_jaxpr(program, IMAGE[..., :1])


SCALES = [
    ("linear", [0.6, 1.3], [0.1, -0.2], True),
    ("lanczos3", [0.5, 2.0], [0.0, 0.5], False),
    ("cubic", [1.5, 0.7], [-0.3, 0.0], True),
    ("cubic-pytorch", [0.4, 1.6], [0.2, 0.1], False),
    ("cubic-pytorch", [0.4, 1.6], [0.2, 0.1], True),
    ("area", [0.5, 1.25], [0.0, 0.25], True),
]


@pytest.mark.parametrize(("method", "scale", "translation", "antialias"), SCALES)
def test_scale_and_translate_values_and_jaxpr(
    method: str, scale: list[float], translation: list[float], antialias: bool
) -> None:
    s, t = np.array(scale, np.float32), np.array(translation, np.float32)

    def program(m: ModuleType) -> Any:
        def f(x: Any, s: Any, t: Any) -> Any:
            return m.image.scale_and_translate(x, (5, 11, 2), (0, 1), s, t, method, antialias)

        return f

    oracle.assert_same_jaxpr(program, IMAGE, s, t)
    if method in ("lanczos3", "cubic-pytorch", "area"):  # compiling dominates: a few suffice
        oracle.assert_same_values(program, IMAGE, s, t)


def test_scale_and_translate_jaxpr_with_constant_scales() -> None:
    # NumPy scales: JAX's device arrays stage their indexing; Lamina must stage it too.
    scale = np.array([0.6, 1.3], np.float32)
    translation = np.array([0.1, -0.2], np.float16)

    def program(m: ModuleType) -> Any:
        def f(x: Any) -> Any:
            return m.image.scale_and_translate(
                x, (3, 9, 2), (-3, 1), scale, translation, "lanczos3"
            )

        return f

    oracle.assert_same_jaxpr(program, IMAGE)
    oracle.assert_same_values(program, IMAGE)


@pytest.mark.parametrize("traced", [False, True])
def test_scale_and_translate_jaxpr_with_a_one_element_scale(traced: bool) -> None:
    # Indexing an array of one element is a `squeeze` alone in JAX (no `slice`), whether the
    # scales are constants or traced.
    scale, translation = np.array([1.3], np.float32), np.array([0.25], np.float32)

    def program(m: ModuleType) -> Any:
        def f(x: Any, *st: Any) -> Any:
            s, t = st if traced else (scale, translation)
            return m.image.scale_and_translate(x, (6, 12, 2), (1,), s, t, "linear")

        return f

    args = (scale, translation) if traced else ()
    oracle.assert_same_jaxpr(program, IMAGE, *args)
    oracle.assert_same_values(program, IMAGE, *args)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"])
def test_resize_gradient(method: str) -> None:
    weights = _data((4, 12, 2), np.float32)

    def program(m: ModuleType) -> Any:
        return m.grad(lambda x: m.numpy.sum(m.image.resize(x, (4, 12, 2), method, False) * weights))

    oracle.assert_same_jaxpr(program, IMAGE)
    if method in ("linear", "cubic-pytorch"):
        oracle.assert_same_values(program, IMAGE)


def test_scale_and_translate_gradient_in_the_scale() -> None:
    def program(m: ModuleType) -> Any:
        def loss(s: Any) -> Any:
            t = np.zeros(2, np.float32)
            out = m.image.scale_and_translate(IMAGE, (4, 12, 2), (0, 1), s, t, "linear")
            return m.numpy.sum(out**2)

        return m.grad(loss)

    scale = np.array([0.7, 1.4], np.float32)
    oracle.assert_same_jaxpr(program, scale)
    oracle.assert_same_values(program, scale)


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic"])
def test_resize_vmap_equals_a_loop(method: str) -> None:
    batch = _data((3, 6, 9), np.float32)
    got = lamina.vmap(lambda x: lamina.image.resize(x, (4, 12), method))(batch)
    looped = np.stack([np.asarray(lamina.image.resize(x, (4, 12), method)) for x in batch])
    np.testing.assert_allclose(np.asarray(got), looped, rtol=2e-5, atol=2e-5)
    oracle.assert_same_jaxpr(lambda m: m.vmap(lambda x: m.image.resize(x, (4, 12), method)), batch)


ONES = np.ones(2, np.float32)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda m: m.image.resize(IMAGE, (3, 4, 2), "bogus"), id="unknown method"),
        pytest.param(lambda m: m.image.resize(IMAGE, (3, 4), "linear"), id="rank of shape"),
        pytest.param(
            lambda m: m.image.scale_and_translate(IMAGE, (3, 4, 2), (0, 1), ONES, ONES, "nearest"),
            id="nearest scale_and_translate",
        ),
        pytest.param(
            lambda m: m.image.scale_and_translate(IMAGE, (3, 4), (0,), ONES, ONES, "linear"),
            id="scale_and_translate rank",
        ),
        pytest.param(lambda m: m.image.ResizeMethod.from_string("Linear"), id="from_string"),
    ],
)
def test_image_bad_input_is_jaxs_error(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m))


def test_resize_method_names() -> None:
    names = {"nearest", "linear", "bilinear", "trilinear", "triangle", "lanczos3", "lanczos5"}
    names |= {"cubic", "bicubic", "tricubic", "cubic-pytorch", "bicubic-pytorch", "area"}
    for name in sorted(names):
        ours = lamina.image.ResizeMethod.from_string(name)
        theirs = jax.image.ResizeMethod.from_string(name)
        assert (ours.name, ours.value) == (theirs.name, theirs.value)
    assert [(m.name, m.value) for m in lamina.image.ResizeMethod] == [
        (m.name, m.value) for m in jax.image.ResizeMethod
    ]


def test_resize_runs_eagerly() -> None:
    oracle.assert_close(
        lamina.image.resize(IMAGE, (3, 12, 2), "lanczos3"),
        jax.image.resize(IMAGE, (3, 12, 2), "lanczos3"),
    )


# --- scipy.fft: dct, dctn, idct, idctn ------------------------------------------------------

X3 = _data((4, 5, 6))
NORMS = [None, "backward", "ortho"]
DCT_OPTIONS: list[dict[str, Any]] = [
    {},
    {"n": 3},
    {"n": 8, "axis": 0},
    {"axis": -2},
    {"n": 5, "axis": 1},
]
DCTN_OPTIONS: list[dict[str, Any]] = [
    {},
    {"axes": (0, 1)},
    {"axes": [-1]},
    {"s": (3, 7)},
    {"s": [5, 2, 8]},
]
DCTN_OPTIONS += [{"s": 4, "axes": 2}, {"axes": (2, 0, 1)}]


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_dct_values(name: str) -> None:
    # A few options, complex and integer input, in one program (compiling dominates; the
    # jaxpr tests cover every option).
    options = DCT_OPTIONS if name in ("dct", "idct") else DCTN_OPTIONS

    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.fft, name)
        return lambda x, c, i: [
            f(x, **options[0]),
            f(x, norm="ortho", **options[2]),
            f(c, norm="backward", **options[1]),
            f(i, **options[-1]),
        ]

    args = (_data((4, 5, 6)), _data((4, 5, 6), np.complex64), _data((4, 5, 6), np.int32))
    oracle.assert_same_values(program, *args)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("options", range(len(DCT_OPTIONS)))
@pytest.mark.parametrize("name", ["dct", "idct"])
def test_dct_jaxpr(name: str, options: int, norm: str | None) -> None:
    o = DCT_OPTIONS[options]
    oracle.assert_same_jaxpr(lambda m: lambda x: getattr(m.scipy.fft, name)(x, norm=norm, **o), X3)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("options", range(len(DCTN_OPTIONS)))
@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_dctn_jaxpr(name: str, options: int, norm: str | None) -> None:
    o = DCTN_OPTIONS[options]
    oracle.assert_same_jaxpr(lambda m: lambda x: getattr(m.scipy.fft, name)(x, norm=norm, **o), X3)


@pytest.mark.parametrize("name", ["dct", "idctn"])
def test_dct_jaxpr_of_complex_and_integer_input(name: str) -> None:
    for x in (_data((3, 4), np.complex64), _data((3, 4), np.int32)):
        oracle.assert_same_jaxpr(lambda m: getattr(m.scipy.fft, name), x)


@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_gradient(name: str, norm: str | None) -> None:
    weights = _data((4, 5, 6))

    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.fft, name)
        return m.grad(lambda x: m.numpy.sum(f(x, norm=norm) * weights))

    oracle.assert_same_jaxpr(program, X3)
    if (name, norm) in (("dct", "ortho"), ("idctn", None)):
        oracle.assert_same_values(program, X3)


@pytest.mark.parametrize("name", ["dct", "idctn"])
def test_dct_vmap_equals_a_loop(name: str) -> None:
    f = lamina.jit(partial(getattr(lamina.scipy.fft, name), norm="ortho"))
    got = lamina.vmap(f, in_axes=1)(X3)
    looped = np.stack([np.asarray(f(X3[:, i])) for i in range(5)])
    np.testing.assert_allclose(np.asarray(got), looped, rtol=2e-5, atol=2e-5)
    oracle.assert_same_jaxpr(
        lambda m: m.vmap(lambda x: getattr(m.scipy.fft, name)(x, norm="ortho"), in_axes=1), X3
    )


@pytest.mark.parametrize("name", ["dct", "dctn", "idct", "idctn"])
@pytest.mark.parametrize(
    "options",
    [{"type": 1}, {"type": 3}, {"type": 4}, {"norm": "forward"}, {"norm": "bogus"}],
    ids=str,
)
def test_dct_unsupported_type_or_norm_is_jaxs_error(name: str, options: dict[str, Any]) -> None:
    oracle.assert_same_error(lambda m: lambda x: getattr(m.scipy.fft, name)(x, **options), X3)


@pytest.mark.parametrize(
    "options", [{"s": (2, 3, 4, 5)}, {"axes": (0, 0)}, {"axes": (3,)}], ids=str
)
def test_dctn_bad_shape_or_axes_is_jaxs_error(options: dict[str, Any]) -> None:
    oracle.assert_same_error(lambda m: lambda x: m.scipy.fft.dctn(x, **options), X3)
