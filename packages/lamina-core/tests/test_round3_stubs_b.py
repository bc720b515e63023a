"""Oracle tests for computations that used to be "not supported yet" stubs: `take_along_axis`'s
`mode='one_hot'`, complex `logaddexp`/`logaddexp2`, column-pivoted QR (`lax.linalg.qr`,
`scipy.linalg.qr`, `qr_multiply`), and JAX's own refusals (blocked `schur`, `fresnel` of
complex or large input) with JAX's class and message. Each program prints JAX 0.10.2's jaxpr
byte for byte and computes JAX's numbers; gradients and vmap where they apply.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, check_vmap

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

RNG = np.random.default_rng(7)
F32 = np.dtype(np.float32)


def normal(shape: tuple[int, ...], dtype: Any = F32) -> np.ndarray:
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return np.asarray(x, dtype)


def scipy_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy
    import jax.scipy

    return jax.scipy


# --- take_along_axis(mode='one_hot') ----------------------------------------------------------


def one_hot_take(axis: int) -> Program:
    return lambda jnp, lax: lambda a, i: jnp.take_along_axis(a, i, axis=axis, mode="one_hot")


ONE_HOT_CASES: list[tuple[str, np.ndarray, np.ndarray, int]] = [
    ("vector", normal((5,)), np.array([0, 4, -1, 7, 2, -6], np.int32), 0),
    ("matrix_axis0", normal((3, 4)), np.array([[0, 2, 1, -1], [1, 1, 0, 3]], np.int32), 0),
    ("matrix_axis1", normal((3, 4)), np.array([[0, 3], [1, -4], [2, 9]], np.int32), 1),
    ("rank3_middle", normal((2, 4, 3)), np.array([[[0], [3]], [[-1], [1]]], np.int32), 1),
    ("broadcast_index", normal((2, 3, 4)), np.array([[[2, 0, 1, 1]]], np.int8), 1),
    ("ints", np.arange(12, dtype=np.int32).reshape(3, 4), np.array([[2, 1, 0, 1]]), 0),
]


@pytest.mark.parametrize(
    ("name", "a", "indices", "axis"), ONE_HOT_CASES, ids=[c[0] for c in ONE_HOT_CASES]
)
def test_take_along_axis_one_hot(
    oracle: Oracle, name: str, a: np.ndarray, indices: np.ndarray, axis: int
) -> None:
    oracle.check(one_hot_take(axis), a, indices)


def test_take_along_axis_one_hot_grad(oracle: Oracle) -> None:
    a, indices = normal((3, 4)), np.array([[0, 2, 1, -1], [1, 1, 0, 3]], np.int32)

    def program(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        return lambda a: jnp.take_along_axis(a, indices, axis=0, mode="one_hot")

    check_ad(oracle, program, a)


def test_take_along_axis_one_hot_vmap(oracle: Oracle) -> None:
    a, indices = normal((3, 2, 4)), np.array([[0, 2, 1, -1], [1, 1, 0, 3]], np.int32)
    check_vmap(oracle, one_hot_take(0), a, indices[None].repeat(3, 0), in_axes=(0, 0))
    check_vmap(oracle, one_hot_take(1), a, np.array([[0], [3], [-1]], np.int32), in_axes=(1, None))


def test_take_along_axis_one_hot_matches_the_gather_for_in_range_indices() -> None:
    a, indices = normal((4, 3)), np.array([[3, 0, -2], [1, 2, 0]], np.int32)
    jnp = lamina_core.numpy
    hot = jnp.take_along_axis(a, indices, axis=0, mode="one_hot")
    gathered = jnp.take_along_axis(a, indices, axis=0)
    np.testing.assert_allclose(np.asarray(hot), np.asarray(gathered), rtol=1e-6)


# --- logaddexp / logaddexp2 of complex inputs ------------------------------------------------


def binary(name: str) -> Program:
    return lambda jnp, lax: getattr(jnp, name)


COMPLEX_PAIRS: list[tuple[str, np.ndarray, np.ndarray]] = [
    ("c64", normal((5,), np.complex64), normal((5,), np.complex64)),
    ("c128_broadcast", normal((3, 1), np.complex128), normal((4,), np.complex128)),
    # Imaginary parts far outside [-pi, pi]: the result's must be wrapped back.
    (
        "large_phase",
        np.array([1 + 9j, -2 - 7j, 0.5 + 20j], np.complex64),
        np.array([0.5 + 3j, -1 + 11j, 0.25 - 15j], np.complex64),
    ),
    ("complex_and_float", normal((4,), np.complex64), normal((4,))),
]


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize(("case", "x1", "x2"), COMPLEX_PAIRS, ids=[c[0] for c in COMPLEX_PAIRS])
def test_logaddexp_of_complex_inputs(
    oracle: Oracle, name: str, case: str, x1: np.ndarray, x2: np.ndarray
) -> None:
    oracle.check(binary(name), x1, x2)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_of_complex_inputs_is_the_principal_log(name: str) -> None:
    x1, x2 = COMPLEX_PAIRS[2][1:]
    got = np.asarray(getattr(lamina_core.numpy, name)(x1, x2))
    wide1, wide2 = x1.astype(np.complex128), x2.astype(np.complex128)
    if name == "logaddexp":
        want = np.log(np.exp(wide1) + np.exp(wide2))
    else:
        want = np.log2(np.exp2(wide1) + np.exp2(wide2))
    np.testing.assert_allclose(got.real, want.real, rtol=1e-5)
    # The same point on the circle (base 2's imaginary period is 2 pi / ln 2).
    period = 2 * np.pi if name == "logaddexp" else 2 * np.pi / np.log(2)
    np.testing.assert_allclose(
        np.mod(got.imag - want.imag + period / 2, period) - period / 2, 0, atol=1e-4
    )


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_of_complex_inputs_derivatives(oracle: Oracle, name: str) -> None:
    x1, x2 = normal((3,), np.complex64), normal((3,), np.complex64)
    check_ad(oracle, binary(name), x1, x2, order=1)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_of_complex_inputs_vmap(oracle: Oracle, name: str) -> None:
    x1, x2 = normal((3, 2), np.complex64), normal((2,), np.complex64)
    check_vmap(oracle, binary(name), x1, x2, in_axes=(0, None))


# --- column-pivoted QR ------------------------------------------------------------------------


def lax_linalg_of(lax: ModuleType) -> Any:
    if lax is lamina_core.lax:
        return lamina_core.lax.linalg
    import jax._src.lax.linalg  # geqp3, as geqrf, is not in jax.lax.linalg's names

    return jax._src.lax.linalg


def pivoted_qr(full_matrices: bool) -> Program:
    return lambda jnp, lax: (
        lambda a: lax_linalg_of(lax).qr(a, pivoting=True, full_matrices=full_matrices)
    )


# Columns of distinct norms, so that the pivots do not hang on rounding.
QR_MATRICES: list[tuple[str, np.ndarray]] = [
    ("tall", normal((5, 3)) * np.array([1.0, 4.0, 2.0], np.float32)),
    ("wide", normal((3, 5)) * np.array([1.0, 5.0, 3.0, 0.5, 2.0], np.float32)),
    ("square_c64", normal((4, 4), np.complex64) * np.array([2.0, 1.0, 4.0, 3.0], np.float32)),
    ("batch", normal((2, 4, 3)) * np.array([3.0, 1.0, 2.0], np.float32)),
    ("no_columns", np.zeros((3, 0), np.float32)),
]


@pytest.mark.parametrize("full_matrices", [True, False], ids=["full", "reduced"])
@pytest.mark.parametrize(("name", "a"), QR_MATRICES, ids=[c[0] for c in QR_MATRICES])
def test_lax_qr_with_pivoting(
    oracle: Oracle, name: str, a: np.ndarray, full_matrices: bool
) -> None:
    oracle.check(pivoted_qr(full_matrices), a)


# Rank 1: past the first, `q`'s columns are any orthonormal completion (rounding picks one, so
# they are not compared with JAX's), but `q r` is still the permuted matrix.
RANK_ONE = np.outer(normal((4,)), [1.0, -2.0, 3.0]).astype(np.float32)


@pytest.mark.parametrize(
    ("name", "a"),
    [*QR_MATRICES[:4], ("rank_one", RANK_ONE)],
    ids=[*(c[0] for c in QR_MATRICES[:4]), "rank_one"],
)
def test_lax_qr_with_pivoting_factors_the_permuted_matrix(name: str, a: np.ndarray) -> None:
    q, r, p = (np.asarray(x) for x in lamina_core.lax.linalg.qr(a, pivoting=True))
    np.testing.assert_allclose(q @ r, np.take_along_axis(a, p[..., None, :], -1), atol=1e-5)
    diagonal = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    assert np.all(diagonal[..., :-1] >= diagonal[..., 1:] * (1 - 1e-6))


def geqp3_program() -> Program:
    return lambda jnp, lax: lambda a, jpvt: lax_linalg_of(lax).geqp3(a, jpvt)


@pytest.mark.parametrize(("name", "a"), QR_MATRICES[:4], ids=[c[0] for c in QR_MATRICES[:4]])
def test_geqp3(oracle: Oracle, name: str, a: np.ndarray) -> None:
    oracle.check(geqp3_program(), a, np.zeros(a.shape[:-2] + a.shape[-1:], np.int32))


GEQP3_MISUSE: list[tuple[str, np.ndarray, np.ndarray]] = [
    ("float_pivots", np.ones((3, 4), np.float32), np.zeros(4, np.float32)),
    ("int_matrix", np.ones((3, 4), np.int32), np.zeros(4, np.int32)),
    ("vector", np.ones(3, np.float32), np.zeros(3, np.int32)),
    ("batch_mismatch", np.ones((3, 4), np.float32), np.zeros((2, 4), np.int32)),
]


@pytest.mark.parametrize(("name", "a", "jpvt"), GEQP3_MISUSE, ids=[c[0] for c in GEQP3_MISUSE])
def test_geqp3_misuse_raises_jaxs_error(
    oracle: Oracle, name: str, a: np.ndarray, jpvt: np.ndarray
) -> None:
    with pytest.raises(Exception) as theirs:
        oracle.jax.make_jaxpr(geqp3_program()(oracle.jnp, oracle.lax))(a, jpvt)
    with pytest.raises(type(theirs.value)) as ours:
        lamina_core.make_jaxpr(geqp3_program()(lamina_core.numpy, lamina_core.lax))(a, jpvt)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("full_matrices", [True, False], ids=["full", "reduced"])
def test_lax_qr_with_pivoting_derivatives(oracle: Oracle, full_matrices: bool) -> None:
    a = QR_MATRICES[0][1]
    check_ad(oracle, pivoted_qr(full_matrices), a, kinds=("jvp",), order=1)
    check_ad(oracle, pivoted_qr(full_matrices), a[:3], kinds=("jvp",), order=1)
    check_ad(oracle, pivoted_qr(full_matrices), a[:2], kinds=("jvp",), order=1)


def test_lax_qr_with_pivoting_vmap(oracle: Oracle) -> None:
    check_vmap(oracle, pivoted_qr(False), QR_MATRICES[3][1])
    check_vmap(oracle, pivoted_qr(True), QR_MATRICES[3][1].transpose(1, 2, 0), in_axes=2)


def scipy_qr(mode: str) -> Program:
    return lambda jnp, lax: lambda a: scipy_of(jnp).linalg.qr(a, mode=mode, pivoting=True)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
@pytest.mark.parametrize(("name", "a"), QR_MATRICES[:4], ids=[c[0] for c in QR_MATRICES[:4]])
def test_scipy_qr_with_pivoting(oracle: Oracle, name: str, a: np.ndarray, mode: str) -> None:
    oracle.check(scipy_qr(mode), a)


def test_scipy_qr_with_pivoting_grad(oracle: Oracle) -> None:
    check_ad(oracle, scipy_qr("economic"), QR_MATRICES[0][1], kinds=("jvp",), order=1)


def qr_multiply(mode: str, conjugate: bool = False) -> Program:
    return lambda jnp, lax: (
        lambda a, c: scipy_of(jnp).linalg.qr_multiply(
            a, c, mode=mode, pivoting=True, conjugate=conjugate
        )
    )


QR_MULTIPLY_CASES: list[tuple[str, str, bool, np.ndarray, np.ndarray]] = [
    ("right", "right", False, QR_MATRICES[0][1], normal((2, 5))),
    ("left", "left", False, QR_MATRICES[0][1], normal((3, 2))),
    ("left_vector", "left", False, QR_MATRICES[1][1], normal((3,))),
    ("right_conjugate", "right", True, QR_MATRICES[2][1], normal((3, 4), np.complex64)),
    ("batch", "right", False, QR_MATRICES[3][1], normal((2, 4))),
]


@pytest.mark.parametrize(
    ("name", "mode", "conjugate", "a", "c"),
    QR_MULTIPLY_CASES,
    ids=[case[0] for case in QR_MULTIPLY_CASES],
)
def test_qr_multiply_with_pivoting(
    oracle: Oracle, name: str, mode: str, conjugate: bool, a: np.ndarray, c: np.ndarray
) -> None:
    oracle.check(qr_multiply(mode, conjugate), a, c)


def test_qr_multiply_with_pivoting_vmap(oracle: Oracle) -> None:
    a, c = QR_MATRICES[3][1], normal((2, 2, 4))
    check_vmap(oracle, qr_multiply("right"), a, c)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_pivoted_qr_lowers_to_jaxs_lapack_call(oracle: Oracle, dtype: Any) -> None:
    lamina = pytest.importorskip("lamina")
    a = QR_MATRICES[3][1].astype(dtype)

    def f(scipy: Any) -> Callable[..., Any]:
        return lambda a, c: (
            scipy.linalg.qr(a, pivoting=True),
            scipy.linalg.qr_multiply(a, c, pivoting=True),
        )

    c = normal((2, 3, 4)).astype(dtype)
    ours, theirs = lamina.jit(f(lamina.scipy)), oracle.jax.jit(f(scipy_of(oracle.jnp)))
    text = ours.lower(a, c).as_text()
    assert "geqp3_ffi" in text
    assert text == theirs.lower(a, c).as_text()
    for got, want in zip(
        lamina.tree_util.tree_leaves(ours(a, c)),
        oracle.jax.tree_util.tree_leaves(theirs(a, c)),
        strict=True,
    ):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


# --- JAX's own refusals -----------------------------------------------------------------------


def _same_refusal(oracle: Oracle, call: Callable[[Any], Any]) -> None:
    """`call(scipy)` fails for JAX's `jax.scipy` and Lamina's alike: class and message."""
    with pytest.raises(Exception) as theirs:
        call(scipy_of(oracle.jnp))
    with pytest.raises(type(theirs.value)) as ours:
        call(lamina_core.scipy)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_sqrtm_refuses_blocking_as_jax_does(oracle: Oracle) -> None:
    _same_refusal(oracle, lambda scipy: scipy.linalg.sqrtm(np.eye(3, dtype=np.float32), 2))


@pytest.mark.parametrize(
    "x",
    [
        np.array([0.5 + 1j], np.complex64),
        np.zeros(2, ml_dtypes.float8_e4m3fn),
        np.zeros(2, ml_dtypes.float8_e5m2),
    ],
    ids=["complex", "float8_e4m3fn", "float8_e5m2"],
)
def test_fresnel_refuses_what_jax_refuses(oracle: Oracle, x: np.ndarray) -> None:
    _same_refusal(oracle, lambda scipy: scipy.special.fresnel(x))


# --- effects inside a shard_map body, lowered ------------------------------------------------


def _eight_device_apis(oracle: Oracle) -> tuple[Any, Any]:
    """(lamina, jax), both with 8 CPU devices, else the test is skipped."""
    lamina = pytest.importorskip("lamina")
    if len(lamina.devices()) < 8 or oracle.jax.device_count() < 8:
        pytest.skip("needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)")
    return lamina, oracle.jax


def _effectful_shard_map(api: Any, case: str) -> Any:
    from importlib import import_module

    io_callback = import_module(f"{api.__name__}.experimental").io_callback
    devices = np.array(api.devices()[:8]).reshape(4, 2)
    mesh = api.sharding.Mesh(devices, ("x", "y"), axis_types=(api.sharding.AxisType.Auto,) * 2)
    P = api.sharding.PartitionSpec

    def body(x: Any) -> Any:
        if case == "ordered_debug_print":
            api.debug.print("x={x}", x=x, ordered=True)
            return x * 2
        if case != "partially_manual":  # JAX gathers a debug print's operands there
            api.debug.print("x={x}", x=x)
        io_callback(lambda v: None, None, x, ordered=True)
        result = api.ShapeDtypeStruct(x.shape, x.dtype)
        y = io_callback(lambda v: np.asarray(v * 3), result, x, ordered=True)
        return x * 2 + y

    axis_names = {"x"} if case == "partially_manual" else set()
    return api.jit(
        api.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"), axis_names=axis_names)
    )


def test_shard_map_body_with_callbacks_lowers_as_jax(oracle: Oracle) -> None:
    lamina, jax = _eight_device_apis(oracle)
    x = np.arange(8, dtype=np.float32)
    ours, theirs = _effectful_shard_map(lamina, "callbacks"), _effectful_shard_map(jax, "callbacks")
    text = ours.lower(x).as_text()
    assert "!stablehlo.token" in text and "@empty_mesh" in text
    assert text == theirs.lower(x).as_text()
    np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(theirs(x)))


@pytest.mark.parametrize("case", ["ordered_debug_print", "partially_manual"])
def test_shard_map_body_effects_jax_refuses(oracle: Oracle, case: str) -> None:
    lamina, jax = _eight_device_apis(oracle)
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(Exception) as theirs:
        _effectful_shard_map(jax, case).lower(x)
    with pytest.raises(type(theirs.value)) as ours:
        _effectful_shard_map(lamina, case).lower(x)
    # The message names the effect objects, whose reprs are each library's.
    assert str(ours.value).split(": [")[0] == str(theirs.value).split(": [")[0]
