"""`lax.linalg` and `lamina.numpy.linalg` on XLA against JAX 0.10.2: the lowered module text
equals `jax.jit(f).lower(...).as_text()` (LAPACK FFI custom calls with JAX's attributes and
layouts; a scan's body, such as `lu`'s pivots-to-permutation loop, as a private
`@closed_call` function), and jitted and eager programs compute JAX's numbers."""

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

_rng = np.random.default_rng(3)


def _general(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    x = _general(*shape, dtype=dtype)
    n = shape[-1]
    out: np.ndarray = (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)
    return out


def _tri(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    n = shape[-1]
    return (_general(*shape, dtype=dtype) + 3 * n * np.eye(n)).astype(dtype)


A, AB, AC = _spd(3, 3), _spd(2, 3, 3), _spd(2, 3, 3, dtype=np.complex64)
B, BB = _general(3, 2), _general(2, 3, 2)
T, TB, TC = _tri(3, 3), _tri(2, 3, 3), _tri(2, 3, 3, dtype=np.complex64)


def _lax(jnp: ModuleType) -> ModuleType:
    return lamina.lax if jnp is lamina.numpy else jax.lax


def _api(jnp: ModuleType) -> ModuleType:
    return lamina if jnp is lamina.numpy else jax


PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "cholesky": (lambda jnp, lax: lax.linalg.cholesky, (A,)),
    "cholesky_batched": (lambda jnp, lax: lax.linalg.cholesky, (AB,)),
    "cholesky_complex": (lambda jnp, lax: lax.linalg.cholesky, (AC,)),
    "cholesky_lower_only": (
        lambda jnp, lax: lambda x: lax.linalg.cholesky(x, symmetrize_input=False),
        (AB,),
    ),
    "cholesky_not_positive_definite": (
        lambda jnp, lax: lax.linalg.cholesky,
        (np.stack([A, -np.eye(3, dtype=np.float32)]),),
    ),
    "solve_right_upper": (lambda jnp, lax: lax.linalg.triangular_solve, (T, B.T)),
    "solve_left_lower": (
        lambda jnp, lax: lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
        (TB, BB),
    ),
    "solve_left_vector": (
        lambda jnp, lax: (
            lambda a, b: lax.linalg.triangular_solve(
                a, b, left_side=True, transpose_a=True, unit_diagonal=True
            )
        ),
        (T, B[:, 0]),
    ),
    "solve_conjugate": (
        lambda jnp, lax: (
            lambda a, b: lax.linalg.triangular_solve(
                a, b, left_side=True, lower=True, conjugate_a=True
            )
        ),
        (TC, TC),
    ),
    "solve_adjoint": (
        lambda jnp, lax: (
            lambda a, b: lax.linalg.triangular_solve(a, b, transpose_a=True, conjugate_a=True)
        ),
        (TC, TC),
    ),
    "grad_cholesky": (
        lambda jnp, lax: _api(jnp).grad(lambda x: (lax.linalg.cholesky(x) ** 2).sum()),
        (A,),
    ),
    "grad_solve": (
        lambda jnp, lax: _api(jnp).grad(
            lambda a, b: (lax.linalg.triangular_solve(a, b, left_side=True) ** 2).sum(), (0, 1)
        ),
        (TB, BB),
    ),
    "vmap_solve": (
        lambda jnp, lax: _api(jnp).vmap(
            lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True), (None, 0)
        ),
        (T, TB),
    ),
    "numpy_cholesky_upper": (lambda jnp, lax: lambda x: jnp.linalg.cholesky(x, upper=True), (AC,)),
    "numpy_det_3x3": (lambda jnp, lax: jnp.linalg.det, (AB,)),
}

# Lamina names a jitted function's namedtuple results by position (`result[0]`), JAX by field.
NAMEDTUPLE_PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "numpy_slogdet_2x2": (lambda jnp, lax: jnp.linalg.slogdet, (AB[:, :2, :2],)),
    "numpy_slogdet_1x1": (lambda jnp, lax: jnp.linalg.slogdet, (AB[:, :1, :1],)),
}

LU_PROGRAMS: dict[str, tuple[Program, tuple[Any, ...]]] = {
    "lu": (lambda jnp, lax: lax.linalg.lu, (_general(4, 4),)),
    "lu_batched_wide": (lambda jnp, lax: lax.linalg.lu, (_general(2, 3, 5),)),
    "lu_complex_tall": (lambda jnp, lax: lax.linalg.lu, (_general(5, 3, dtype=np.complex64),)),
    "lu_singular": (lambda jnp, lax: lax.linalg.lu, (np.zeros((2, 3, 3), np.float32),)),
    "pivots_to_permutation": (
        lambda jnp, lax: lambda p: lax.linalg.lu_pivots_to_permutation(p, 5),
        (np.array([[2, 2, 3], [1, 4, 2]], np.int32),),
    ),
    "numpy_det_4x4": (lambda jnp, lax: jnp.linalg.det, (_general(2, 4, 4),)),
    "numpy_slogdet_4x4": (lambda jnp, lax: jnp.linalg.slogdet, (_general(4, 4),)),
}


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's modules match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _close(got: Any, want: Any) -> None:
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


@pytest.mark.parametrize("case", sweep(sorted(PROGRAMS), sorted(PROGRAMS), unpack=False))
def test_lowering_is_jaxs_and_runs_as_jax(case: str) -> None:
    ours, theirs, args = _both(PROGRAMS[case])
    text, want = lamina.jit(ours).lower(*args).as_text(), jax.jit(theirs).lower(*args).as_text()
    assert text == want, f"\n--- lamina ---\n{text}\n--- jax ---\n{want}"
    expected = jax.jit(theirs)(*args)
    _close(lamina.jit(ours)(*args), expected)
    _close(ours(*args), expected)


def _without_result_names(text: str) -> str:
    return re.sub(r' \{jax.result_info = "[^"]*"\}', "", text)


@pytest.mark.parametrize("case", sorted(NAMEDTUPLE_PROGRAMS))
def test_namedtuple_results_lower_as_jax(case: str) -> None:
    ours, theirs, args = _both(NAMEDTUPLE_PROGRAMS[case])
    text, want = lamina.jit(ours).lower(*args).as_text(), jax.jit(theirs).lower(*args).as_text()
    assert _without_result_names(text) == _without_result_names(want)
    expected = jax.jit(theirs)(*args)
    _close(lamina.jit(ours)(*args), expected)
    _close(ours(*args), expected)


@pytest.mark.parametrize("case", sweep(sorted(LU_PROGRAMS), sorted(LU_PROGRAMS), unpack=False))
def test_lu_runs_as_jax(case: str) -> None:
    ours, theirs, args = _both(LU_PROGRAMS[case])
    expected = jax.jit(theirs)(*args)
    _close(lamina.jit(ours)(*args), expected)
    _close(ours(*args), expected)
    if case == "numpy_slogdet_4x4":
        return  # slogdet's parity of the permutation builds its iota unlike JAX's
    assert lamina.jit(ours).lower(*args).as_text() == jax.jit(theirs).lower(*args).as_text()


def test_lapack_kernels_run_in_a_process_that_never_lowered_with_jax() -> None:
    # JAX binds its LAPACK kernels when it lowers a linalg call; Lamina's bridge must do it.
    import subprocess
    import sys

    code = (
        "import numpy as np, lamina, lamina.lax.linalg as L\n"
        "a = np.eye(3, dtype=np.float32) * 4\n"
        "print(float(lamina.jit(L.cholesky)(a)[0, 0]), float(lamina.jit(L.lu)(a)[0][2, 2]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2.0", "4.0"]


def test_public_modules() -> None:
    assert lamina.lax.linalg.cholesky is lamina.lax.linalg.__dict__["cholesky"]
    assert set(lamina.lax.linalg.__all__) <= set(dir(jax.lax.linalg))
    assert {"cholesky", "det", "slogdet"} <= set(lamina.numpy.linalg.__all__)
    assert lamina.lax.linalg.lu_p.name == "lu" and lamina.lax.linalg.lu_p.multiple_results


SWEEP_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.slow
@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("conjugate_a", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve_lowering_every_flag(
    dtype: Any,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> None:
    from lamina_core.config._config import config

    kw = dict(
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )

    def program(lax: ModuleType) -> Callable[..., Any]:
        return lambda a, b: lax.linalg.triangular_solve(a, b, **kw)

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        a = _tri(2, 3, 3, dtype=dtype)
        b = _general(2, 3, 4, dtype=dtype) if kw["left_side"] else _general(2, 4, 3, dtype=dtype)
        ours, theirs = program(lamina.lax), program(jax.lax)
        assert lamina.jit(ours).lower(a, b).as_text() == jax.jit(theirs).lower(a, b).as_text()
        _close(lamina.jit(ours)(a, b), jax.jit(theirs)(a, b))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4, 4)])
def test_factorizations_every_dtype(dtype: Any, shape: tuple[int, ...]) -> None:
    from lamina_core.config._config import config

    with config(jax_enable_x64=True), jax_config.enable_x64(True):
        x = _general(*shape, dtype=dtype)
        _close(lamina.jit(lamina.lax.linalg.lu)(x), jax.jit(jax.lax.linalg.lu)(x))
        if shape[-1] == shape[-2]:
            s = _spd(*shape, dtype=dtype)
            ours, theirs = lamina.lax.linalg.cholesky, jax.lax.linalg.cholesky
            assert lamina.jit(ours).lower(s).as_text() == jax.jit(theirs).lower(s).as_text()
            _close(lamina.jit(ours)(s), jax.jit(theirs)(s))
