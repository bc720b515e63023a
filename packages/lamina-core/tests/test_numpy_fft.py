"""`lamina.numpy.fft` against `jax.numpy.fft` 0.10.2: every public function, with `n`/`s`,
`axes` and every `norm`, on float32 and complex64 operands: values, printed jaxprs, JAX's errors;
grad and vmap through the transforms (JAX's jaxprs and numbers, finite differences, a loop).

Two differences in printing that are not the transforms' are normalised where `n` or `s` is
given: Lamina's `jnp.pad` prints its widths as `0` where JAX prints `np.int64(0)`, and the
printer breaks long lines by their width, so whitespace is compared collapsed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_core.numpy as lnp
import lamina_core.numpy.fft as lfft

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_rng = np.random.default_rng(3)

REAL = _rng.standard_normal((3, 4, 6)).astype(np.float32)
CPLX = (_rng.standard_normal((3, 4, 6)) + 1j * _rng.standard_normal((3, 4, 6))).astype(np.complex64)
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}
ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
MULTI_D = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")
NORMS = (None, "backward", "ortho", "forward")


def _printed(closed: Any) -> str:
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", str(closed))
    text = " ".join(text.split())
    return re.sub(r" \]", "]", re.sub(r"\[ ", "[", text))


def _close(got: Any, want: Any, tol: float = 2e-5) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _check(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    """The same jaxpr (exactly, or up to `_printed`'s normalisation) and the same numbers."""
    mine, want = lc.make_jaxpr(ours)(*args), jax.make_jaxpr(theirs)(*args)
    if "pad" not in str(want):
        assert str(mine) == str(want), f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"
    assert _printed(mine) == _printed(want), f"\n--- lamina ---\n{mine}\n--- jax ---\n{want}"
    _close(ours(*args), jax.jit(theirs)(*args))


def _call(name: str, kwargs: dict[str, Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (
        lambda a: getattr(lfft, name)(a, **kwargs),
        lambda a: getattr(jnp.fft, name)(a, **kwargs),
    )


ONE_D_KWARGS: list[dict[str, Any]] = [
    {},
    {"n": 5},
    {"n": 8, "axis": 0},
    {"axis": 1, "norm": "ortho"},
    {"n": 3, "axis": -2, "norm": "forward"},
    {"norm": "backward"},
]
MULTI_D_KWARGS: list[dict[str, Any]] = [
    {},
    {"s": (3, 5)},
    {"axes": (0, 2), "norm": "ortho"},
    {"s": (2, 4), "axes": (2, 0), "norm": "forward"},
    {"s": (5, 2), "axes": [-1, 1], "norm": "backward"},
]


def _operands(name: str) -> list[np.ndarray]:
    return [REAL] if name in REAL_ONLY else [REAL, CPLX]


def _rotating_kwargs() -> list[tuple[str, dict[str, Any], str]]:
    """Each function plain and with every argument given (the norms taking turns), on each
    operand dtype it takes."""
    cases: list[tuple[str, dict[str, Any], str]] = []
    full_1d = [{"n": 5, "axis": 0}, {"n": 8, "axis": -2}, {"n": 3, "axis": -1}]
    full_nd: list[dict[str, Any]] = [
        {"s": (3, 5), "axes": (2, 0)},
        {"s": (5, 2), "axes": [-1, 1]},
        {"s": (2, 4), "axes": (0, 1)},
    ]
    for i, name in enumerate(ONE_D + MULTI_D):
        full = (full_1d if name in ONE_D else full_nd)[i % 3]
        for x in _operands(name):
            cases.append((name, {}, x.dtype.name))
            cases.append((name, {**full, "norm": NORMS[1 + i % 3]}, x.dtype.name))
    return cases


def _default() -> list[Any]:
    """Each function with every argument given on its first operand dtype and plain on its
    other by default (a real-only function: with every argument); the rest with the slow
    tests."""
    params = []
    for name, kwargs, dtype in _rotating_kwargs():
        full = bool(kwargs)
        keep = (full and dtype == "float32") or (not full and dtype == "complex64")
        params.append(pytest.param(name, kwargs, dtype, marks=() if keep else pytest.mark.slow))
    return params


DEFAULT = _default()


_SLOW = pytest.mark.slow


def _operand(dtype: str) -> np.ndarray:
    return REAL if dtype == "float32" else CPLX


@pytest.mark.parametrize(("name", "kwargs", "dtype"), DEFAULT)
def test_transform_prints_and_computes_as_jax(
    name: str, kwargs: dict[str, Any], dtype: str
) -> None:
    _check(*_call(name, kwargs), _operand(dtype))


SWEEP = [
    pytest.param(name, {"n": n, "axis": axis, "norm": norm}, x.dtype.name, marks=pytest.mark.slow)
    for name in ONE_D
    for n, axis, norm in itertools.product((None, 1, 4, 7), (0, -1), NORMS)
    for x in _operands(name)
] + [
    pytest.param(name, {"s": s, "axes": axes, "norm": norm}, x.dtype.name, marks=pytest.mark.slow)
    for name in MULTI_D
    for s, axes, norm in itertools.product(
        (None, (2, 3), (4, 7)), ((-2, -1), (1, 0), (2, 0)), NORMS
    )
    for x in _operands(name)
]


@pytest.mark.parametrize(("name", "kwargs", "dtype"), SWEEP)
def test_transform_sweep(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    _check(*_call(name, kwargs), _operand(dtype))


# Every function with its default lengths; given lengths for `irfftn` only by default.
@pytest.mark.parametrize(
    ("name", "s"),
    [
        pytest.param(n, s, marks=() if s is None or (n == "irfftn" and len(s) == 4) else _SLOW)
        for s in [None, (2, 3, 2, 4), (2, 2, 3, 2, 4)]
        for n in ["fftn", "ifftn", "rfftn", "irfftn"]
    ],
)
def test_more_than_three_axes_split_as_jax(name: str, s: tuple[int, ...] | None) -> None:
    x = _rng.standard_normal((2, 3, 2, 4, 2)).astype(np.float32)
    _check(*_call(name, {"s": s, "axes": None if s is None else tuple(range(-len(s), 0))}), x)


def test_other_operand_types_are_jaxs() -> None:
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    for name in ("fft", "rfft", "ifft2", "irfftn", "hfft"):
        _check(*_call(name, {}), ints)
    for module in (jnp, lnp):  # a scalar has no axis -1 (the messages are each moveaxis's)
        with pytest.raises(ValueError, match="axis -1 is out of bounds"):
            module.fft.fft(np.float32(2.0))
    _check(*_call("fftn", {"axes": ()}), REAL)
    _check(*_call("fftn", {"s": ()}), REAL)


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("nonpositive_s", lambda m: m.fft.fftn(REAL, s=(2, 0))),
    ("s_axes_lengths", lambda m: m.fft.fftn(REAL, s=(2, 3), axes=(0,))),
    ("repeated_axes", lambda m: m.fft.fftn(REAL, axes=(0, 0))),
    ("one_d_many_axes", lambda m: m.fft.fft(REAL, axis=(0, 1))),
    ("hfft_many_axes", lambda m: m.fft.hfft(REAL, axis=[0, 1])),
    ("ihfft_many_axes", lambda m: m.fft.ihfft(REAL, axis=(0,))),
    ("two_d_three_axes", lambda m: m.fft.fft2(REAL, axes=(0, 1, 2))),
    ("bad_norm", lambda m: m.fft.fft(REAL, norm="sideways")),
    ("list_operand", lambda m: m.fft.fft([1.0, 2.0])),
    ("complex_rfft", lambda m: m.fft.rfft(CPLX)),
    ("fftfreq_n_list", lambda m: m.fft.fftfreq([4])),
    ("fftfreq_d_list", lambda m: m.fft.fftfreq(4, (1.0, 2.0))),
    ("rfftfreq_n_tuple", lambda m: m.fft.rfftfreq((4, 2))),
    ("rfftfreq_d_list", lambda m: m.fft.rfftfreq(4, [1.0])),
    ("fftshift_list", lambda m: m.fft.fftshift([1.0, 2.0])),
    ("float_n", lambda m: m.fft.fft(REAL, n=2.5)),
]


@pytest.mark.parametrize(("case", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jaxs(case: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises((ValueError, TypeError)) as theirs:
        call(jnp)
    with pytest.raises(type(theirs.value)) as mine:
        call(lnp)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_are_jaxs(name: str) -> None:
    dtypes: list[Any] = [None, np.float32, np.float16, np.complex64, np.int32, np.dtype(np.int32)]
    for n, d, dtype in zip(
        (1, 6, 7, 6, 7, 6), (1.0, 0.25, np.float32(3.0)) * 2, dtypes, strict=True
    ):
        got = getattr(lfft, name)(n, d, dtype=dtype)
        want = getattr(jnp.fft, name)(n, d, dtype=dtype)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, equal_nan=True)
    ours, theirs = getattr(lfft, name), getattr(jnp.fft, name)
    mine, want = lc.make_jaxpr(lambda: ours(8, 0.5))(), jax.make_jaxpr(lambda: theirs(8, 0.5))()
    assert str(mine) == str(want)
    # A traced spacing: the same numbers (JAX's `jnp.array` also stages a `copy`).
    _close(lc.jit(lambda d: ours(8, d))(2.0), jax.jit(lambda d: theirs(8, d))(2.0))


@pytest.mark.parametrize(
    "axes", [None, pytest.param(0, marks=_SLOW), pytest.param(-1, marks=_SLOW), (0, 2), [1]]
)
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_are_jaxs(name: str, axes: Any) -> None:
    x = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    _check(lambda a: getattr(lfft, name)(a, axes), lambda a: getattr(jnp.fft, name)(a, axes), x)


def test_module_is_jax_numpy_fft() -> None:
    public = sorted(n for n in dir(jnp.fft) if not n.startswith("_"))
    assert sorted(lfft.__all__) == public
    assert lnp.fft is lfft
    for name in public:
        assert callable(getattr(lnp.fft, name))


# --- transformations through the transforms ---------------------------------------------------

AD: list[Any] = [
    ("fft", {"n": 5}, "complex64"),
    ("rfft", {"norm": "forward"}, "float32"),
    ("irfft", {"n": 7}, "complex64"),
    ("irfftn", {"axes": (0, -1), "norm": "ortho"}, "complex64"),
    pytest.param("ifft", {"axis": 0, "norm": "ortho"}, "float32", marks=pytest.mark.slow),
    pytest.param("hfft", {"axis": 1}, "complex64", marks=pytest.mark.slow),
    pytest.param("ihfft", {"n": 4}, "float32", marks=pytest.mark.slow),
    pytest.param("rfft2", {"s": (3, 5)}, "float32", marks=pytest.mark.slow),
]


def _loss(f: Callable[..., Any], m: ModuleType) -> Callable[..., Any]:
    def loss(x: Any) -> Any:
        y = f(x)
        w = m.cos(m.arange(y.size, dtype=np.float32).reshape(y.shape))
        return m.sum(m.real(y) * w + m.imag(y) * (1 - w) + m.abs(y) ** 2 * 0.1)

    return loss


def _central_differences(f: Callable[[np.ndarray], Any], x: np.ndarray) -> np.ndarray:
    """`df/dre - i df/dim` (JAX's grad of a real function of complex `x`), in float64."""
    eps = 1e-3
    x64 = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    out = np.zeros(x.shape, x64.dtype)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x64)
        step[index] = eps
        out[index] = (float(f(x64 + step)) - float(f(x64 - step))) / (2 * eps)
        if np.iscomplexobj(x):
            im = (float(f(x64 + 1j * step)) - float(f(x64 - 1j * step))) / (2 * eps)
            out[index] -= 1j * im  # type: ignore[call-overload]  # a complex array
    return out


@pytest.mark.parametrize(("name", "kwargs", "dtype"), AD)
def test_grad_is_jaxs_and_finite_differences(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    x = _operand(dtype)[:2, :3, :4]
    ours, theirs = _call(name, kwargs)
    mine, want = lc.grad(_loss(ours, lnp)), jax.grad(_loss(theirs, jnp))
    assert _printed(lc.make_jaxpr(mine)(x)) == _printed(jax.make_jaxpr(want)(x))
    got = mine(x)
    _close(got, jax.jit(want)(x), 1e-4)
    # The same loss in float64 NumPy, differenced.
    by_numpy = getattr(np.fft, name)
    fd = _central_differences(_loss(lambda a: by_numpy(a, **kwargs), np), x)
    np.testing.assert_allclose(np.asarray(got), fd, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("name", "kwargs", "dtype"), AD)
def test_vmap_is_jaxs_and_a_loop(name: str, kwargs: dict[str, Any], dtype: str) -> None:
    x = _operand(dtype)
    ours, theirs = _call(name, kwargs)
    for axis in (0, 2):
        mine, want = lc.vmap(ours, in_axes=axis), jax.vmap(theirs, in_axes=axis)
        assert _printed(lc.make_jaxpr(mine)(x)) == _printed(jax.make_jaxpr(want)(x))
        got = mine(x)
        _close(got, jax.jit(want)(x))
        rows = [np.asarray(ours(np.take(x, i, axis))) for i in range(x.shape[axis])]
        _close(got, np.stack(rows))


@pytest.mark.parametrize(
    "name",
    [
        "rfft",
        "irfftn",
        pytest.param("fft", marks=pytest.mark.slow),
        pytest.param("ihfft", marks=pytest.mark.slow),
    ],
)
def test_double_precision_with_x64_is_jaxs(name: str) -> None:
    from jax._src import config as jax_config

    from lamina_core.config._config import config

    x = _rng.standard_normal((3, 6))
    ours, theirs = _call(name, {"norm": "ortho"})
    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        assert str(lc.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
        got, want = np.asarray(ours(x)), np.asarray(jax.jit(theirs)(x))
        assert got.dtype == want.dtype and got.dtype.itemsize >= 8
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        grad = lc.grad(lambda a: lnp.sum(lnp.abs(ours(a))))(x)
        assert np.asarray(grad).dtype == np.float64
