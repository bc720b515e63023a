"""`lamina.scipy.signal` (convolutions, detrend, stft, istft, welch, csd) against JAX 0.10.2:
jitted values over shapes, dtypes and options, printed jaxprs, gradients, `vmap` against a
Python loop, and the errors JAX raises for bad input.

Compiling dominates the time, so values are checked on a few programs that each hold several
variants, and printed jaxprs (cheap) on the whole matrix of options.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.testing import load_test_module

oracle = load_test_module(Path(__file__).parent, "library_oracle")

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(9)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX prints them so with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _data(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    kind = np.dtype(dtype).kind
    if kind in "iu":
        return _rng.integers(-4, 5, shape).astype(dtype)
    x = _rng.standard_normal(shape)
    if kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


# --- scipy.signal: convolutions -------------------------------------------------------------

MODES = ["full", "same", "valid"]
PAIRS = {
    "1d": (_data((9,)), _data((4,))),
    "1d swapped": (_data((3,)), _data((8,))),
    "2d": (_data((6, 7)), _data((3, 2))),
    "2d swapped": (_data((2, 3)), _data((5, 6))),
    "3d": (_data((4, 5, 3)), _data((2, 3, 3))),
    "complex": (_data((7,), np.complex64), _data((3,), np.complex64)),
    "int": (_data((5, 6), np.int32), _data((2, 2), np.int32)),
}


@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_values(name: str, method: str) -> None:
    pairs = [PAIRS[k] for k in ("1d", "1d swapped", "2d swapped", "complex", "int")]

    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.signal, name)
        return lambda *xs: [
            f(xs[i], xs[i + 1], mode, method) for i in range(0, len(xs), 2) for mode in MODES
        ]

    oracle.assert_same_values(program, *(x for pair in pairs for x in pair))


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_jaxpr(name: str, method: str, mode: str, pair: str) -> None:
    oracle.assert_same_jaxpr(
        lambda m: lambda a, b: getattr(m.scipy.signal, name)(a, b, mode, method), *PAIRS[pair]
    )


SHAPES_2D = [((6, 7), (3, 2)), ((2, 3), (5, 6)), ((4, 4), (4, 4)), ((3, 5), (3, 2))]


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_convolve2d_values(name: str) -> None:
    operands = [_data(s) for pair in SHAPES_2D for s in pair]
    operands += [_data((4, 5), np.complex64), _data((2, 3), np.complex64)]

    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.signal, name)
        return lambda *xs: [
            f(xs[i], xs[i + 1], mode) for i in range(0, len(xs), 2) for mode in MODES
        ]

    oracle.assert_same_values(program, *operands)


@pytest.mark.parametrize("shapes", SHAPES_2D, ids=str)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_convolve2d_jaxpr(name: str, mode: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    a, b = (_data(s, np.complex64) for s in shapes)
    oracle.assert_same_jaxpr(lambda m: lambda a, b: getattr(m.scipy.signal, name)(a, b, mode), a, b)


FFT_AXES: list[tuple[Any, tuple[int, ...]]] = [
    (None, (2, 4, 3)),
    (1, (3, 4, 5)),
    ((0, 2), (2, 8, 3)),
    ([-1], (3, 8, 2)),
]
"""`axes`, and the second operand's shape (the first's is (3, 8, 5)): equal on mapped axes."""


@pytest.mark.parametrize(("axes", "shape"), FFT_AXES, ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_fftconvolve_values_and_jaxpr(mode: str, axes: Any, shape: tuple[int, ...]) -> None:
    a, b = _data((3, 8, 5)), _data(shape)

    def program(m: ModuleType) -> Any:
        return lambda a, b: m.scipy.signal.fftconvolve(a, b, mode, axes)

    oracle.assert_same_jaxpr(program, a, b)
    if axes == 1:
        oracle.assert_same_values(program, a, b)


@pytest.mark.parametrize("name", ["convolve", "correlate", "fftconvolve"])
def test_convolve_gradient(name: str) -> None:
    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.signal, name)
        return m.grad(lambda a, b: m.numpy.sum(f(a, b, "same") ** 2), argnums=(0, 1))

    a, b = PAIRS["2d"]
    oracle.assert_same_jaxpr(program, a, b)
    oracle.assert_same_values(program, a, b)


def test_convolve_vmap_equals_a_loop() -> None:
    a, b = _data((3, 9)), _data((3, 4))
    f = lamina.jit(partial(lamina.scipy.signal.convolve, mode="same"))
    got = lamina.vmap(f)(a, b)
    looped = np.stack([np.asarray(f(x, y)) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(np.asarray(got), looped, rtol=2e-5, atol=2e-5)
    oracle.assert_same_jaxpr(lambda m: m.vmap(lambda a, b: m.scipy.signal.convolve(a, b)), a, b)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.convolve(_data((3,)), _data((2,)), method="bogus"), id="method"),
        pytest.param(lambda s: s.convolve(_data((3,)), _data((2,)), "bogus"), id="mode"),
        pytest.param(lambda s: s.convolve(_data((3,)), _data((2,)), "bogus", "fft"), id="fft mode"),
        pytest.param(lambda s: s.convolve(_data((3, 2)), _data((2,))), id="ranks"),
        pytest.param(lambda s: s.convolve(_data((3, 1)), _data((2, 2))), id="neither fits"),
        pytest.param(
            lambda s: s.convolve(_data((3, 1)), _data((2, 2)), "valid", "fft"), id="fft valid"
        ),
        pytest.param(lambda s: s.convolve(_data((0,)), _data((2,))), id="empty"),
        pytest.param(lambda s: s.convolve2d(_data((3,)), _data((2,))), id="2d rank"),
        pytest.param(
            lambda s: s.correlate2d(_data((3, 3)), _data((2, 2)), boundary="wrap"), id="boundary"
        ),
        pytest.param(
            lambda s: s.fftconvolve(_data((3, 4)), _data((2, 4)), axes=1), id="mapped axes"
        ),
    ],
)
def test_convolve_bad_input_is_jaxs_error(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.signal), jit=True)


# --- scipy.signal: detrend and the windowed FFTs ----------------------------------------------

SIGNAL = _data((2, 64))
DETRENDS: list[dict[str, Any]] = [
    {},
    {"type": "constant"},
    {"bp": [10, 40]},
    {"axis": 0, "type": "linear"},
    {"bp": 32, "axis": -1},
]


def test_detrend_values_and_jaxpr() -> None:
    def program(m: ModuleType) -> Any:
        return lambda x, i: [m.scipy.signal.detrend(v, **o) for v in (x, i) for o in DETRENDS]

    ints = _data((3, 40), np.int32)
    oracle.assert_same_jaxpr(program, SIGNAL, ints)
    oracle.assert_same_values(
        lambda m: (
            lambda x, i: [
                m.scipy.signal.detrend(x, bp=[10, 40]),
                m.scipy.signal.detrend(i, axis=0),
                m.scipy.signal.detrend(x, 0, "constant"),
            ]
        ),
        SIGNAL,
        ints,
    )


HOST_SPECTRA: dict[str, Any] = {
    "detrend": lambda sig, y: [sig.detrend(SIGNAL, **o) for o in DETRENDS],
    "welch": lambda sig, y: sig.welch(SIGNAL[0], nperseg=16, detrend="linear"),
    "csd of host data": lambda sig, y: sig.csd(SIGNAL, SIGNAL[::-1], nperseg=16),
    "csd of host and traced data": lambda sig, y: sig.csd(SIGNAL[0], y, nperseg=16),
    "stft along axis 0": lambda sig, y: sig.stft(SIGNAL.T, nperseg=8, axis=0),
}


@pytest.mark.parametrize("case", sorted(HOST_SPECTRA))
def test_host_data_under_a_trace_stages_as_jaxs(case: str) -> None:
    # NumPy data is an array under a trace, as in JAX: moving its axes and reshaping it stage.
    def program(m: ModuleType) -> Any:
        return lambda y: HOST_SPECTRA[case](m.scipy.signal, y)

    oracle.assert_same_jaxpr(program, SIGNAL[1])
    if case == "welch":
        oracle.assert_same_values(program, SIGNAL[1])


@pytest.mark.parametrize(
    "options",
    [{"type": "quadratic"}, {"bp": [70]}, {"overwrite_data": True}],
    ids=str,
)
def test_detrend_bad_input_is_jaxs_error(options: dict[str, Any]) -> None:
    oracle.assert_same_error(lambda m: lambda: m.scipy.signal.detrend(SIGNAL, **options), jit=True)


HANN16 = np.hanning(18)[1:-1].astype(np.float32)
STFT_OPTIONS: list[dict[str, Any]] = [
    {"nperseg": 16},
    {"nperseg": 16, "noverlap": 4, "nfft": 20},
    {"nperseg": 15, "window": ("tukey", 0.25), "detrend": "linear"},
    {"nperseg": 16, "window": HANN16, "detrend": "constant", "boundary": None, "padded": False},
    {"nperseg": 12, "window": "hamming", "return_onesided": False, "boundary": "even"},
    {"nperseg": 8, "boundary": "odd", "fs": 100.0},
    {"nperseg": 10, "boundary": "constant", "axis": 0},
]


@pytest.mark.parametrize("options", range(len(STFT_OPTIONS)))
def test_stft_jaxpr(options: int) -> None:
    o = STFT_OPTIONS[options]
    x = SIGNAL.T if o.get("axis") == 0 else SIGNAL
    oracle.assert_same_jaxpr(lambda m: lambda x: m.scipy.signal.stft(x, **o), x)


def test_stft_values() -> None:
    def program(m: ModuleType) -> Any:
        return lambda x: [
            m.scipy.signal.stft(x.T if o.get("axis") == 0 else x, **o) for o in STFT_OPTIONS
        ]

    oracle.assert_same_values(program, SIGNAL)


def test_stft_of_complex_input_is_two_sided_with_jaxs_warning() -> None:
    x = _data((40,), np.complex64)

    def program(m: ModuleType) -> Any:
        return lambda x: m.scipy.signal.stft(x, nperseg=8)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oracle.assert_same_jaxpr(program, x)
    # One warning from each library, the same words.
    jax_warning, lamina_warning = (str(w.message) for w in caught)
    assert (
        lamina_warning == jax_warning == "Input data is complex, switching to return_onesided=False"
    )


ISTFT_OPTIONS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"nperseg": 16}, {}),
    ({"nperseg": 16, "noverlap": 12, "nfft": 20}, {"nperseg": 16, "noverlap": 12, "nfft": 20}),
    ({"nperseg": 15, "window": "hamming"}, {"window": "hamming", "nperseg": 15, "nfft": 15}),
    ({"nperseg": 16, "window": HANN16}, {"window": HANN16}),
    ({"nperseg": 12, "return_onesided": False}, {"input_onesided": False}),
    ({"nperseg": 8, "boundary": None, "padded": False}, {"boundary": False, "fs": 2.0}),
]
"""(stft's options, the matching istft's)."""


def _spectrum(options: dict[str, Any]) -> np.ndarray:
    return np.asarray(lamina.jit(lambda x: lamina.scipy.signal.stft(x, **options)[2])(SIGNAL))


@pytest.mark.parametrize("options", range(len(ISTFT_OPTIONS)))
def test_istft_jaxpr(options: int) -> None:
    forward, inverse = ISTFT_OPTIONS[options]
    spectrum = _spectrum(forward)
    oracle.assert_same_jaxpr(lambda m: lambda z: m.scipy.signal.istft(z, **inverse), spectrum)


def test_istft_values_and_round_trip() -> None:
    spectra = [_spectrum(forward) for forward, _ in ISTFT_OPTIONS[:3]]
    inverses = [inverse for _, inverse in ISTFT_OPTIONS[:3]]

    def program(m: ModuleType) -> Any:
        return lambda *zs: [m.scipy.signal.istft(z, **o) for z, o in zip(zs, inverses, strict=True)]

    oracle.assert_same_values(program, *spectra)
    for _, x in lamina.jit(program(lamina))(*spectra):
        np.testing.assert_allclose(np.asarray(x)[:, :64], SIGNAL, atol=1e-4)


def test_istft_values_with_other_axes() -> None:
    spectrum = np.moveaxis(_spectrum({"nperseg": 16}), 0, -1)

    def program(m: ModuleType) -> Any:
        return lambda z: [
            m.scipy.signal.istft(z, time_axis=1, freq_axis=0),
            m.scipy.signal.istft(np.swapaxes(z, 0, 1), time_axis=0, freq_axis=1),
        ]

    oracle.assert_same_values(program, spectrum)
    oracle.assert_same_jaxpr(program, spectrum)


WELCH_OPTIONS: list[dict[str, Any]] = [
    {},
    {"nperseg": 16, "scaling": "spectrum"},
    {"nperseg": 16, "noverlap": 10, "nfft": 32, "average": "median"},
    {"nperseg": 20, "window": "hamming", "detrend": "linear", "return_onesided": False},
    {"nperseg": 8, "detrend": False, "fs": 10.0},
    {"nperseg": 16, "window": HANN16, "axis": 0},
]


@pytest.mark.parametrize("name", ["welch", "csd"])
def test_spectral_density_values(name: str) -> None:
    y = _data((2, 64))

    def program(m: ModuleType) -> Any:
        f = getattr(m.scipy.signal, name)
        args = (lambda x, y: (x,)) if name == "welch" else (lambda x, y: (x, y))
        return lambda x, y: [
            f(*args(x.T if o.get("axis") == 0 else x, y.T if o.get("axis") == 0 else y), **o)
            for o in WELCH_OPTIONS[1:4]
        ]

    oracle.assert_same_values(program, SIGNAL, y)


@pytest.mark.parametrize("options", range(len(WELCH_OPTIONS)))
@pytest.mark.parametrize("name", ["welch", "csd", "csd with itself"])
def test_spectral_density_jaxpr(name: str, options: int) -> None:
    o = WELCH_OPTIONS[options]
    x = SIGNAL.T if o.get("axis") == 0 else SIGNAL
    y = _data(x.shape)[:, :1] if o.get("axis") == 0 else _data(x.shape)[:1]

    def program(m: ModuleType) -> Any:
        s = m.scipy.signal
        if name == "welch":
            return lambda x, y: s.welch(x, **o)
        if name == "csd":
            return lambda x, y: s.csd(x, y, **o)
        return lambda x, y: s.csd(x, None, **o)

    oracle.assert_same_jaxpr(program, x, y)


EDGE_CASES = {
    "stft one-point segments": lambda s, x: s.stft(x, nperseg=1, noverlap=0, boundary=None),
    "stft segment longer than the signal": lambda s, x: s.stft(x, nperseg=80),
    "welch of nothing": lambda s, x: s.welch(x[:, :0]),
    "csd of nothing": lambda s, x: s.csd(x[:, :0], x),
    "welch of one segment": lambda s, x: s.welch(x, nperseg=64),
    "detrend of a list": lambda s, x: s.detrend([1.0, 2.0, 4.0, 3.0]),
    "detrend of nested lists along 0": lambda s, x: s.detrend([[1.0, 2.0], [4.0, 3.0]], 0),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_spectral_edge_case_jaxpr_and_warnings(case: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oracle.assert_same_jaxpr(lambda m: partial(EDGE_CASES[case], m.scipy.signal), SIGNAL)
    jax_warnings = [str(w.message) for w in caught[: len(caught) // 2]]
    assert [str(w.message) for w in caught[len(caught) // 2 :]] == jax_warnings


def test_csd_of_signals_of_different_lengths() -> None:
    def program(m: ModuleType) -> Any:
        return lambda x, y: m.scipy.signal.csd(x, y, nperseg=16)

    oracle.assert_same_values(program, SIGNAL, _data((1, 50)))
    oracle.assert_same_jaxpr(program, _data((1, 50)), SIGNAL)


def test_stft_and_welch_gradients() -> None:
    def program(m: ModuleType) -> Any:
        s = m.scipy.signal

        def loss(x: Any) -> Any:
            power = m.numpy.abs(s.stft(x, nperseg=16)[2]) ** 2
            return m.numpy.sum(power) + m.numpy.sum(s.welch(x, nperseg=16)[1])

        return m.grad(loss)

    oracle.assert_same_jaxpr(program, SIGNAL)
    oracle.assert_same_values(program, SIGNAL)


def test_stft_vmap_equals_a_loop() -> None:
    @lamina.jit
    def f(x: Any) -> Any:
        return lamina.scipy.signal.stft(x, nperseg=16)[2]

    got = lamina.vmap(f)(SIGNAL)
    looped = np.stack([np.asarray(f(x)) for x in SIGNAL])
    np.testing.assert_allclose(np.asarray(got), looped, rtol=2e-5, atol=2e-5)
    oracle.assert_same_jaxpr(
        lambda m: m.vmap(lambda x: m.scipy.signal.welch(x, nperseg=16)), SIGNAL
    )


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.stft(SIGNAL, nperseg=8, noverlap=8), id="noverlap"),
        pytest.param(lambda s: s.stft(SIGNAL, nperseg=8, nfft=4), id="nfft"),
        pytest.param(lambda s: s.stft(SIGNAL, nperseg=0), id="nperseg"),
        pytest.param(lambda s: s.stft(SIGNAL, boundary="bogus"), id="boundary"),
        pytest.param(lambda s: s.stft(SIGNAL, window=HANN16, nperseg=8), id="window length"),
        pytest.param(lambda s: s.stft(SIGNAL, window=np.ones((2, 8))), id="window rank"),
        pytest.param(lambda s: s.welch(SIGNAL, scaling="bogus"), id="scaling"),
        pytest.param(lambda s: s.welch(SIGNAL, nperseg=8, average="bogus"), id="average"),
        pytest.param(lambda s: s.welch(SIGNAL, detrend=1), id="detrend"),
        pytest.param(lambda s: s.csd(SIGNAL, SIGNAL[0]), id="csd ranks"),
        pytest.param(lambda s: s.csd(SIGNAL, _data((3, 64))), id="csd broadcast"),
        pytest.param(lambda s: s.istft(SIGNAL[0]), id="istft rank"),
        pytest.param(lambda s: s.istft(SIGNAL, time_axis=0, freq_axis=-2), id="istft axes"),
        pytest.param(lambda s: s.istft(SIGNAL, nperseg=8, noverlap=8), id="istft noverlap"),
        pytest.param(lambda s: s.istft(SIGNAL, nperseg=80), id="istft nfft"),
        pytest.param(lambda s: s.istft(SIGNAL, window=np.ones(5)), id="istft window"),
        pytest.param(lambda s: s.istft(SIGNAL, nperseg=65), id="istft odd nperseg"),
    ],
)
def test_spectral_bad_input_is_jaxs_error(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.signal), jit=True)


def test_stft_with_traced_nperseg_under_jit_is_jaxs_error() -> None:
    oracle.assert_same_error(
        lambda m: lambda x, n: m.scipy.signal.stft(x, nperseg=n), SIGNAL, 8, jit=True
    )
