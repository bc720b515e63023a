"""`lamina.scipy`'s `ndimage`, `integrate`, `interpolate`, `cluster`, `optimize` and
`sparse.linalg` against JAX 0.10.2: jitted values, printed jaxprs, gradients, `vmap` against a
Python loop, and the errors JAX raises for bad input.

Two kinds of jaxpr print differently for reasons outside these modules, and are checked in
part: `RegularGridInterpolator` stages `jnp.searchsorted`, which Lamina stages as its own
bisection (an expected failure here); and JAX's printer hoists the jaxprs inside
`custom_linear_solve`'s parameters, so the sparse solvers compare the equations around the
solve and its `matvec`, `solve` (and, for `cg`, `transpose_solve`) jaxprs one by one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import jax.scipy.cluster.vq
import jax.scipy.integrate
import jax.scipy.interpolate
import jax.scipy.ndimage
import jax.scipy.optimize
import jax.scipy.sparse.linalg
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.testing import load_test_module

oracle = load_test_module(Path(__file__).parent, "library_oracle")

pytestmark = pytest.mark.oracle

_rng = np.random.default_rng(31)


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX prints them so with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _normal(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


def _uniform(low: float, high: float, *shape: int) -> np.ndarray:
    return _rng.uniform(low, high, shape).astype(np.float32)


# --- ndimage.map_coordinates -----------------------------------------------------------------

IMAGE = _normal(4, 5)
COORDS = [_uniform(-2, 6, 7), _uniform(-2, 7, 7)]
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_jaxpr(order: int, mode: str) -> None:
    oracle.assert_same_jaxpr(
        lambda m: lambda x, a, b: m.scipy.ndimage.map_coordinates(x, [a, b], order, mode, 1.5),
        IMAGE,
        *COORDS,
    )


def test_map_coordinates_values() -> None:
    def program(m: ModuleType) -> Any:
        f = m.scipy.ndimage.map_coordinates
        return lambda x, i, a, b: [
            f(v, [a, b], order, mode, cval=-1.0)
            for v in (x, i)
            for order in (0, 1)
            for mode in MODES
        ]

    oracle.assert_same_values(program, IMAGE, (IMAGE * 4).astype(np.int32), *COORDS)


def test_map_coordinates_gradient_and_vmap() -> None:
    def grad_program(m: ModuleType) -> Any:
        f = m.scipy.ndimage.map_coordinates
        return m.grad(lambda x, a, b: m.numpy.sum(f(x, [a, b], 1, "nearest") ** 2), (0, 1, 2))

    oracle.assert_same_jaxpr(grad_program, IMAGE, *COORDS)
    oracle.assert_same_values(grad_program, IMAGE, *COORDS)

    batch = np.stack([COORDS[0], COORDS[1], COORDS[0] - 1])
    f = lamina.jit(lambda x, a: lamina.scipy.ndimage.map_coordinates(x, [a, a / 2], 1))
    looped = np.stack([np.asarray(f(IMAGE, a)) for a in batch])
    np.testing.assert_allclose(np.asarray(lamina.vmap(f, (None, 0))(IMAGE, batch)), looped)
    oracle.assert_same_jaxpr(
        lambda m: m.vmap(lambda x, a: m.scipy.ndimage.map_coordinates(x, [a, a], 1), (None, 0)),
        IMAGE,
        batch,
    )


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda nd: nd.map_coordinates(IMAGE, COORDS[:1], 1), id="rank"),
        pytest.param(lambda nd: nd.map_coordinates(IMAGE, COORDS, 1, "grid-wrap"), id="mode"),
        pytest.param(lambda nd: nd.map_coordinates(IMAGE, COORDS, 3), id="order"),
    ],
)
def test_map_coordinates_errors(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.ndimage))


# --- integrate.trapezoid ---------------------------------------------------------------------

SAMPLES = _normal(3, 6)
POINTS = np.sort(_normal(6))


def test_trapezoid_values_jaxpr_gradient_vmap() -> None:
    def program(m: ModuleType) -> Any:
        t = m.scipy.integrate.trapezoid
        return lambda y, x: [t(y), t(y, dx=0.5), t(y, x), t(y, axis=0), t(y.astype(int))]

    oracle.assert_same_jaxpr(program, SAMPLES, POINTS)
    oracle.assert_same_values(program, SAMPLES, POINTS)

    def grad_program(m: ModuleType) -> Any:
        return m.grad(lambda y, x: m.numpy.sum(m.scipy.integrate.trapezoid(y, x)), (0, 1))

    oracle.assert_same_jaxpr(grad_program, SAMPLES, POINTS)
    oracle.assert_same_values(grad_program, SAMPLES, POINTS)
    f = lamina.jit(lamina.scipy.integrate.trapezoid)
    looped = np.stack([np.asarray(f(y, POINTS)) for y in SAMPLES])
    np.testing.assert_allclose(np.asarray(lamina.vmap(f, (0, None))(SAMPLES, POINTS)), looped)


# --- cluster.vq.vq ---------------------------------------------------------------------------

OBS, BOOK = _normal(6, 3), _normal(4, 3)


def test_vq_values_jaxpr_gradient_vmap() -> None:
    def program(m: ModuleType) -> Any:
        vq = m.scipy.cluster.vq.vq
        return lambda o, c: [vq(o, c), vq(o[:, 0], c[:, 0]), vq(o.astype(int), c)]

    oracle.assert_same_jaxpr(program, OBS, BOOK)
    oracle.assert_same_values(program, OBS, BOOK)

    def grad_program(m: ModuleType) -> Any:
        return m.grad(lambda o, c: m.numpy.sum(m.scipy.cluster.vq.vq(o, c)[1]), (0, 1))

    oracle.assert_same_jaxpr(grad_program, OBS, BOOK)
    oracle.assert_same_values(grad_program, OBS, BOOK)
    batch = np.stack([OBS, OBS * 2])
    f = lamina.jit(lamina.scipy.cluster.vq.vq)
    codes, dists = lamina.vmap(f, (0, None))(batch, BOOK)
    for i, o in enumerate(batch):
        code, dist = f(o, BOOK)
        np.testing.assert_array_equal(np.asarray(codes[i]), np.asarray(code))
        np.testing.assert_allclose(np.asarray(dists[i]), np.asarray(dist))


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda c: c.vq.vq(OBS, BOOK[:, 0]), id="ranks"),
        pytest.param(lambda c: c.vq.vq(OBS[None], BOOK[None]), id="ndim"),
        pytest.param(lambda c: c.vq.vq([[1.0]], BOOK), id="list"),
    ],
)
def test_vq_errors(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.cluster))


# --- interpolate.RegularGridInterpolator -----------------------------------------------------

GRID = (np.array([0.0, 1.0, 2.5, 4.0], np.float32), np.array([-1.0, 0.0, 1.0], np.float32))
GRID_VALUES = _normal(4, 3)
QUERIES = _uniform(-1.5, 4.5, 6, 2)


def _interpolations(m: ModuleType) -> Any:
    rgi = m.scipy.interpolate.RegularGridInterpolator

    def run(a: Any, b: Any, v: Any, q: Any) -> list[Any]:
        trailing = m.numpy.stack([v, 2 * v], axis=-1)
        return [
            rgi((a, b), v)(q),
            rgi((a, b), v, method="nearest")(q),
            rgi((a, b), v, fill_value=None)(q),
            rgi((a, b), v, fill_value=0.5)((q[:, 0], q[:, 1])),
            rgi((a, b), v)(q, method="nearest"),
            rgi((a, b), trailing)(q),
            rgi((a, b), v.astype(int))(q),
        ]

    return run


def test_regular_grid_interpolator_values_gradient_vmap() -> None:
    oracle.assert_same_values(_interpolations, *GRID, GRID_VALUES, QUERIES)

    def grad_program(m: ModuleType) -> Any:
        rgi = m.scipy.interpolate.RegularGridInterpolator
        return m.grad(lambda v, q: m.numpy.sum(rgi(GRID, v, fill_value=None)(q)), (0, 1))

    oracle.assert_same_values(grad_program, GRID_VALUES, QUERIES)
    interp = lamina.scipy.interpolate.RegularGridInterpolator(GRID, GRID_VALUES)
    np.testing.assert_array_equal(
        np.asarray(lamina.jit(lambda i, q: i(q))(interp, QUERIES)),  # a pytree argument
        np.asarray(interp(QUERIES)),
    )
    batch = np.stack([QUERIES, QUERIES[::-1]])
    f = lamina.jit(interp)
    looped = np.stack([np.asarray(f(q)) for q in batch])
    np.testing.assert_allclose(np.asarray(lamina.vmap(f)(batch)), looped)


def test_regular_grid_interpolator_jaxpr() -> None:
    oracle.assert_same_jaxpr(_interpolations, *GRID, GRID_VALUES, QUERIES)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda i: i.RegularGridInterpolator(GRID, GRID_VALUES, "cubic"), id="method"),
        pytest.param(
            lambda i: i.RegularGridInterpolator(GRID, GRID_VALUES, bounds_error=True), id="bounds"
        ),
        pytest.param(lambda i: i.RegularGridInterpolator(GRID * 3, GRID_VALUES), id="points"),
        pytest.param(
            lambda i: i.RegularGridInterpolator(GRID, GRID_VALUES, fill_value=1j), id="fill"
        ),
        pytest.param(lambda i: i.RegularGridInterpolator(GRID, [[1.0]]), id="values"),
        pytest.param(
            lambda i: i.RegularGridInterpolator(GRID, GRID_VALUES)(QUERIES[:, :1]), id="xi"
        ),
        pytest.param(
            lambda i: i.RegularGridInterpolator(GRID, GRID_VALUES)(QUERIES, "spline"), id="call"
        ),
    ],
)
def test_regular_grid_interpolator_errors(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.interpolate))


# --- optimize.minimize -----------------------------------------------------------------------

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
START = np.array([-1.2, 1.0, 0.5], np.float32)


def _rosenbrock(m: ModuleType) -> Any:
    return lambda x: m.numpy.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _quadratic(m: ModuleType) -> Any:
    return lambda x, c: m.numpy.sum((x - c) ** 2 * m.numpy.arange(1.0, 4.0)) + x[0] * x[1]


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_minimize_jaxpr_and_values(method: str) -> None:
    def program(m: ModuleType) -> Any:
        minimize = m.scipy.optimize.minimize
        return lambda x, c: [
            minimize(_rosenbrock(m), x, method=method),
            minimize(_quadratic(m), x, (c,), method=method.lower(), options={"maxiter": 5}),
        ]

    oracle.assert_same_jaxpr(program, START, START[::-1])
    oracle.assert_same_values(program, START, START[::-1], tol=1e-4)


def test_minimize_converges_and_vmaps() -> None:
    f = lamina.jit(
        lambda x, c: lamina.scipy.optimize.minimize(_quadratic(lamina), x, (c,), method="BFGS")
    )
    result = f(START, START[::-1])
    assert bool(result.success) and int(result.status) == 0
    assert isinstance(result, lamina.scipy.optimize.OptimizeResults)
    targets = np.stack([START, START * 2, -START])
    batched = lamina.vmap(f, (None, 0))(START, targets)
    looped = np.stack([np.asarray(f(START, c).x) for c in targets])
    np.testing.assert_allclose(np.asarray(batched.x), looped, rtol=1e-4, atol=1e-4)
    oracle.assert_same_values(
        lambda m: m.vmap(
            lambda c: m.scipy.optimize.minimize(_quadratic(m), c, (c,), method=LBFGS).x
        ),
        targets,
        tol=1e-4,
    )


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(
            lambda m: m.scipy.optimize.minimize(_quadratic(m), START, START, method="BFGS"),
            id="args",
        ),
        pytest.param(
            lambda m: m.scipy.optimize.minimize(_rosenbrock(m), START, method="CG"), id="method"
        ),
    ],
)
def test_minimize_errors(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m))


# --- sparse.linalg ---------------------------------------------------------------------------

_Q = _normal(4, 4)
SPD = (_Q @ _Q.T + 4 * np.eye(4)).astype(np.float32)
RHS = _normal(4)


def _find_solve(jaxpr: Any) -> tuple[list[str], Any]:
    """The primitive names of the jaxpr holding the `custom_linear_solve`, and that equation."""
    eqns = jaxpr.jaxpr.eqns if hasattr(jaxpr, "jaxpr") else jaxpr.eqns
    for eqn in eqns:
        if eqn.primitive.name == "custom_linear_solve":
            return [e.primitive.name for e in eqns], eqn
    raise AssertionError("no custom_linear_solve")


SOLVERS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "cg": (lambda m: lambda A, b: m.scipy.sparse.linalg.cg(A, b)[0],
           ("matvec", "solve", "transpose_solve")),
    "cg function M": (
        lambda m: lambda A, b: m.scipy.sparse.linalg.cg(
            lambda x: A @ x, b, M=lambda x: x / 2, maxiter=30
        )[0],
        ("matvec", "solve", "transpose_solve"),
    ),
    "bicgstab": (lambda m: lambda A, b: m.scipy.sparse.linalg.bicgstab(A, b)[0],
                 ("matvec", "solve")),
    "gmres batched": (lambda m: lambda A, b: m.scipy.sparse.linalg.gmres(A, b), ("matvec",)),
    "gmres incremental": (
        lambda m: lambda A, b: m.scipy.sparse.linalg.gmres(
            A, b, restart=2, solve_method="incremental"
        ),
        ("matvec", "solve"),
    ),
}  # fmt: skip
"""Each solver's program, and the parts of its `custom_linear_solve` that print as JAX's (the
rest nest another solve, or close over the transposed operator's constants in another order)."""


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_sparse_solvers_stage_and_compute_as_jax(name: str) -> None:
    program, parts = SOLVERS[name]
    ours_prims, ours = _find_solve(lamina.make_jaxpr(program(lamina))(SPD, RHS))
    theirs_prims, theirs = _find_solve(jax.make_jaxpr(program(jax))(SPD, RHS))
    assert ours_prims == theirs_prims
    assert str(ours.params["const_lengths"]) == str(theirs.params["const_lengths"])
    for part in parts:
        assert str(getattr(ours.params["jaxprs"], part)) == str(
            getattr(theirs.params["jaxprs"], part)
        )
    oracle.assert_same_values(program, SPD, RHS, tol=1e-4)


def test_sparse_solver_gradient_and_vmap() -> None:
    def grad_program(m: ModuleType) -> Any:
        cg = m.scipy.sparse.linalg.cg
        return m.grad(lambda A, b: m.numpy.sum(cg(A, b)[0] ** 2), (0, 1))

    oracle.assert_same_values(grad_program, SPD, RHS, tol=1e-4)
    batch = np.stack([RHS, 2 * RHS, RHS[::-1]])
    f = lamina.jit(lambda b: lamina.scipy.sparse.linalg.bicgstab(SPD, b)[0])
    looped = np.stack([np.asarray(f(b)) for b in batch])
    np.testing.assert_allclose(np.asarray(lamina.vmap(f)(batch)), looped, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(looped @ SPD.T, batch, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda s: s.cg(SPD[:3], RHS), id="not square"),
        pytest.param(lambda s: s.cg(3.0, RHS), id="not an operator"),
        pytest.param(lambda s: s.bicgstab(SPD, RHS, x0=(RHS,)), id="x0 tree"),
        pytest.param(lambda s: s.cg(SPD, RHS, x0=RHS[:3]), id="x0 shape"),
        pytest.param(lambda s: s.gmres(SPD, RHS, solve_method="qr"), id="solve_method"),
    ],
)
def test_sparse_solver_errors(call: Any) -> None:
    oracle.assert_same_error(lambda m: lambda: call(m.scipy.sparse.linalg))
