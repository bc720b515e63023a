"""`lax.linalg`'s `eigh`, `qr` and `svd` and `lamina.numpy.linalg`'s decompositions on XLA
against JAX 0.10.2: the lowered module text equals `jax.jit(f).lower(...).as_text()` (LAPACK
`syevd`/`heevd`, `geqrf` + `orgqr`/`ungqr` and `gesdd` FFI custom calls with JAX's attributes
and layouts), and jitted and eager programs compute JAX's numbers exactly as the same LAPACK
kernels run (singular and eigenvectors included)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
import lamina.lax.linalg
import lamina.numpy.linalg
from lamina_core.testing import sweep

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]

_rng = np.random.default_rng(5)


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _api(jnp: ModuleType) -> ModuleType:
    return lamina if jnp is lamina.numpy else jax


X, XB, XC = _general(4, 3), _general(2, 3, 5), _general(2, 4, 3, dtype=np.complex64)
S, SB, SC = _general(3, 3), _general(2, 4, 4), _general(2, 3, 3, dtype=np.complex64)

PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "eigh": (lambda jnp, lax: lax.linalg.eigh, (S,)),
    "eigh_batched": (lambda jnp, lax: lax.linalg.eigh, (SB,)),
    "eigh_complex": (lambda jnp, lax: lax.linalg.eigh, (SC,)),
    "eigh_upper_only": (
        lambda jnp, lax: lambda x: lax.linalg.eigh(x, lower=False, symmetrize_input=False),
        (SB,),
    ),
    "eigh_nan": (lambda jnp, lax: lax.linalg.eigh, (np.full((2, 2), np.nan, np.float32),)),
    "qr_full": (lambda jnp, lax: lax.linalg.qr, (X,)),
    "qr_reduced": (lambda jnp, lax: lambda x: lax.linalg.qr(x, full_matrices=False), (X,)),
    "qr_wide_batched": (lambda jnp, lax: lax.linalg.qr, (XB,)),
    "qr_complex_reduced": (
        lambda jnp, lax: lambda x: lax.linalg.qr(x, full_matrices=False),
        (XC,),
    ),
    "qr_empty": (lambda jnp, lax: lax.linalg.qr, (np.zeros((2, 0, 3), np.float32),)),
    "householder_product": (
        lambda jnp, lax: lax.linalg.householder_product,
        (X, np.array([0.5, 1.2, 0.0], np.float32)),
    ),
    "svd_full": (lambda jnp, lax: lax.linalg.svd, (X,)),
    "svd_reduced_wide": (
        lambda jnp, lax: lambda x: lax.linalg.svd(x, full_matrices=False),
        (XB,),
    ),
    "svd_complex": (lambda jnp, lax: lax.linalg.svd, (XC,)),
    "svd_values_only": (lambda jnp, lax: lambda x: lax.linalg.svd(x, compute_uv=False), (XB,)),
    "svd_empty": (lambda jnp, lax: lax.linalg.svd, (np.zeros((0, 3), np.float32),)),
    "svd_empty_reduced": (
        lambda jnp, lax: lambda x: lax.linalg.svd(x, full_matrices=False),
        (np.zeros((2, 3, 0), np.float32),),
    ),
    "grad_eigh": (
        lambda jnp, lax: _api(jnp).grad(lambda x: lax.linalg.eigh(x)[1].sum()),
        (S,),
    ),
    "grad_qr": (
        lambda jnp, lax: _api(jnp).grad(lambda x: (lax.linalg.qr(x)[1] ** 2).sum()),
        (X,),
    ),
    "grad_svd": (
        lambda jnp, lax: _api(jnp).grad(lambda x: lax.linalg.svd(x, compute_uv=False).sum()),
        (XB,),
    ),
    "vmap_svd": (
        lambda jnp, lax: _api(jnp).vmap(lambda x: lax.linalg.svd(x, full_matrices=False), 2),
        (XB,),
    ),
    "numpy_eigvalsh": (lambda jnp, lax: jnp.linalg.eigvalsh, (SB,)),
    "numpy_qr_r": (lambda jnp, lax: lambda x: jnp.linalg.qr(x, "r"), (XB,)),
    "numpy_svdvals": (lambda jnp, lax: jnp.linalg.svdvals, (XC,)),
    "numpy_matrix_rank": (lambda jnp, lax: jnp.linalg.matrix_rank, (XB,)),
    "numpy_pinv": (lambda jnp, lax: jnp.linalg.pinv, (XC,)),
    "numpy_cond": (lambda jnp, lax: jnp.linalg.cond, (XB,)),
    "numpy_norm_nuc": (lambda jnp, lax: lambda x: jnp.linalg.norm(x, "nuc", (0, 2)), (XB,)),
    "numpy_norm_2": (lambda jnp, lax: lambda x: jnp.linalg.norm(x, 2), (X,)),
}

# Lamina names a jitted function's namedtuple results by position (`result[0]`), JAX by field.
NAMEDTUPLE_PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "numpy_eigh": (lambda jnp, lax: jnp.linalg.eigh, (SC,)),
    "numpy_qr": (lambda jnp, lax: jnp.linalg.qr, (X,)),
    "numpy_qr_raw": (lambda jnp, lax: lambda x: jnp.linalg.qr(x, "raw"), (XB,)),
    "numpy_svd": (lambda jnp, lax: jnp.linalg.svd, (XB,)),
    "numpy_svd_hermitian": (lambda jnp, lax: lambda x: jnp.linalg.svd(x, hermitian=True), (SB,)),
}


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _equal(got: Any, want: Any) -> None:
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype)
        scale = max(1.0, float(np.nanmax(np.abs(w), initial=0.0)))
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)


def _both(case: tuple[Program, tuple[Any, ...]]) -> tuple[Any, Any, tuple[Any, ...]]:
    program, args = case
    return program(lamina.numpy, lamina.lax), program(jax.numpy, jax.lax), args


def _without_result_names(text: str) -> str:
    return re.sub(r' \{jax.result_info = "[^"]*"\}', "", text)


@pytest.mark.parametrize("case", sweep(sorted(PROGRAMS), sorted(PROGRAMS), unpack=False))
def test_lowering_is_jaxs_and_runs_as_jax(case: str) -> None:
    ours, theirs, args = _both(PROGRAMS[case])
    text, want = lamina.jit(ours).lower(*args).as_text(), jax.jit(theirs).lower(*args).as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    expected = jax.jit(theirs)(*args)
    _equal(lamina.jit(ours)(*args), expected)
    _equal(ours(*args), expected)


@pytest.mark.parametrize("case", sorted(NAMEDTUPLE_PROGRAMS))
def test_namedtuple_results_lower_as_jax(case: str) -> None:
    ours, theirs, args = _both(NAMEDTUPLE_PROGRAMS[case])
    text, want = lamina.jit(ours).lower(*args).as_text(), jax.jit(theirs).lower(*args).as_text()
    assert _without_result_names(text) == _without_result_names(want)
    expected = jax.jit(theirs)(*args)
    _equal(lamina.jit(ours)(*args), expected)
    _equal(ours(*args), expected)


def test_full_qr_jvp_runs_as_jax() -> None:
    # The full-matrix tangent solves with `lu`, whose permutation loop Lamina lowers inline
    # (see test_linalg_xla): the numbers are compared, not the text.
    def program(api: ModuleType) -> Callable[..., Any]:
        return lambda x, t: api.jvp(api.lax.linalg.qr, (x,), (t,))

    t = _general(4, 3)
    _equal(lamina.jit(program(lamina))(X, t), jax.jit(program(jax))(X, t))


def test_public_modules() -> None:
    names = {"eigh", "eigh_p", "qr", "qr_p", "householder_product", "svd", "svd_p"}
    assert names <= set(lamina.lax.linalg.__all__)
    assert set(lamina.lax.linalg.__all__) <= set(dir(jax.lax.linalg))
    numpy_names = {"eigh", "eigvalsh", "qr", "svd", "svdvals", "matrix_rank", "pinv", "cond"}
    assert numpy_names <= set(lamina.numpy.linalg.__all__)
    functions = {n for n in lamina.numpy.linalg.__all__ if not n.endswith("Result")}
    assert functions <= set(dir(jax.numpy.linalg))
    assert lamina.lax.linalg.svd_p.multiple_results and lamina.lax.linalg.eigh_p.name == "eigh"


SWEEP_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_decompositions_every_dtype(
    dtype: Any, shape: tuple[int, ...], full_matrices: bool
) -> None:
    from lamina_core.config._config import config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        x = _general(*shape, dtype=dtype)
        programs: list[Callable[[ModuleType], Callable[..., Any]]] = [
            lambda lax: lambda x: lax.linalg.qr(x, full_matrices=full_matrices),
            lambda lax: lambda x: lax.linalg.svd(x, full_matrices=full_matrices),
            lambda lax: lambda x: lax.linalg.svd(x, compute_uv=False),
        ]
        if shape[-1] == shape[-2]:
            programs.append(lambda lax: lax.linalg.eigh)
        for program in programs:
            ours, theirs = program(lamina.lax), program(jax.lax)
            assert lamina.jit(ours).lower(x).as_text() == jax.jit(theirs).lower(x).as_text()
            _equal(lamina.jit(ours)(x), jax.jit(theirs)(x))
