"""`lamina.experimental`'s `mesh_utils`, `compilation_cache`, `ode` and `multihost_utils`
against JAX 0.10.2's: the same calls give equal values (devices, arrays, gradients), equal
printed jaxprs for the integrator's pieces, and the same errors. The test session has 8 CPU
devices (the root conftest's XLA flag) and one process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax._src import config as jax_config
from jax.experimental import mesh_utils as _jax_mesh_utils
from jax.experimental import multihost_utils as _jax_multihost
from jax.experimental import ode as _jax_ode
from jax.experimental.compilation_cache import compilation_cache as _jax_cc

import lamina
import lamina.numpy as ljnp
import lamina_runtime
from lamina.experimental import mesh_utils, multihost_utils, ode
from lamina.experimental.compilation_cache import compilation_cache

pytestmark = pytest.mark.oracle

# JAX's modules are untyped; the options are attributes of each library's config.
jax_mesh_utils: Any = _jax_mesh_utils
jax_multihost: Any = _jax_multihost
jax_ode: Any = _jax_ode
jax_cc: Any = _jax_cc
jax_cfg: Any = jax.config
lamina_cfg: Any = lamina.config

NEW_MODULES = (
    "lamina.experimental.mesh_utils",
    "lamina.experimental.compilation_cache",
    "lamina.experimental.ode",
    "lamina.experimental.multihost_utils",
)


def test_import_lamina_loads_none_of_the_new_modules() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import lamina"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert "lamina" in imported
    assert imported.isdisjoint(NEW_MODULES), sorted(imported & set(NEW_MODULES))


def raised(f: Callable[[], object]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        f()
    return info.type, str(info.value)


# --- mesh_utils --------------------------------------------------------------------------------


def ids(mesh: Any) -> list[Any]:
    return np.vectorize(lambda d: d.id)(mesh).tolist()  # type: ignore[no-any-return]  # numpy


@pytest.mark.parametrize("shape", [(8,), (2, 4), (4, 1, 2)])
def test_create_device_mesh_lays_out_devices_as_jax(shape: tuple[int, ...]) -> None:
    assert ids(mesh_utils.create_device_mesh(shape)) == ids(
        jax_mesh_utils.create_device_mesh(shape)
    )


def test_create_device_mesh_of_given_devices_as_jax() -> None:
    chosen = lamina.devices()[3:7][::-1]
    ours = mesh_utils.create_device_mesh([2, 2], chosen)
    assert ids(ours) == ids(jax_mesh_utils.create_device_mesh([2, 2], chosen))
    assert ours[0, 0] is chosen[0]


@pytest.mark.parametrize("shape", [(3,), ("a", 8)])
def test_create_device_mesh_errors_as_jax(shape: tuple[Any, ...]) -> None:
    assert raised(lambda: mesh_utils.create_device_mesh(shape)) == raised(
        lambda: jax_mesh_utils.create_device_mesh(shape)
    )


def test_hybrid_mesh_by_process_as_jax() -> None:
    ours = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)
    theirs = jax_mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)
    assert ids(ours) == ids(theirs)


@pytest.mark.parametrize(
    ("mesh", "dcn", "by_process"), [((2, 4), (1, 1), False), ((2, 4), (2, 1), True)]
)
def test_hybrid_mesh_errors_as_jax(
    mesh: tuple[int, ...], dcn: tuple[int, ...], by_process: bool
) -> None:
    assert raised(
        lambda: mesh_utils.create_hybrid_device_mesh(mesh, dcn, process_is_granule=by_process)
    ) == raised(
        lambda: jax_mesh_utils.create_hybrid_device_mesh(mesh, dcn, process_is_granule=by_process)
    )


def test_registered_device_kind_handler_is_used() -> None:
    kind = lamina.devices()[0].device_kind
    calls: list[tuple[int, ...]] = []

    def handler(shape: tuple[int, ...], devices: Any, *, contiguous_submeshes: bool) -> Any:
        calls.append(shape)
        return np.asarray(devices[::-1]).reshape(shape)

    mesh_utils.device_kind_handler_dict[kind] = handler
    try:
        mesh = mesh_utils.create_device_mesh((8,))
    finally:
        del mesh_utils.device_kind_handler_dict[kind]
    assert calls == [(8,)]
    assert ids(mesh) == list(range(7, -1, -1))


# --- compilation_cache -------------------------------------------------------------------------


@pytest.fixture
def cache_dir_restored() -> Iterator[None]:
    ours, theirs = lamina_cfg.jax_compilation_cache_dir, jax_cfg.jax_compilation_cache_dir
    yield
    lamina_cfg.update("jax_compilation_cache_dir", ours)
    jax_cfg.update("jax_compilation_cache_dir", theirs)


@pytest.mark.usefixtures("cache_dir_restored")
def test_set_cache_dir_sets_the_option_as_jax(tmp_path: Path) -> None:
    compilation_cache.set_cache_dir(str(tmp_path / "c"))
    jax_cc.set_cache_dir(str(tmp_path / "c"))
    assert lamina_cfg.jax_compilation_cache_dir == jax_cfg.jax_compilation_cache_dir
    assert lamina_runtime.configured_cache_dir() == tmp_path / "c"
    compilation_cache.reset_cache()
    jax_cc.reset_cache()
    assert lamina_cfg.jax_compilation_cache_dir == jax_cfg.jax_compilation_cache_dir


@pytest.mark.usefixtures("cache_dir_restored")
def test_set_cache_dir_is_where_compilations_are_kept(tmp_path: Path) -> None:
    compilation_cache.set_cache_dir(tmp_path)
    x = ljnp.arange(3.0)
    np.testing.assert_allclose(lamina.jit(lambda v: v * 17.0 + 0.5)(x), np.arange(3.0) * 17 + 0.5)
    assert list(tmp_path.glob("*.lxc"))


def test_compilation_cache_package_names_its_module() -> None:
    import lamina.experimental.compilation_cache as package

    assert package.compilation_cache is compilation_cache


# --- multihost_utils ---------------------------------------------------------------------------

TREE = {"a": np.arange(6.0).reshape(2, 3), "b": (np.int32(4), np.ones(2, np.float32))}


def assert_trees_equal(ours: Any, theirs: Any) -> None:
    assert str(jax.tree.structure(ours)) == str(jax.tree.structure(theirs))
    for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        assert type(x) is type(y)
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("tiled", [False, True])
def test_process_allgather_as_jax(tiled: bool) -> None:
    assert_trees_equal(
        multihost_utils.process_allgather(TREE, tiled=tiled),
        jax_multihost.process_allgather(TREE, tiled=tiled),
    )


def test_process_allgather_of_a_device_array_as_jax() -> None:
    ours = multihost_utils.process_allgather(ljnp.arange(4.0))
    assert_trees_equal(ours, jax_multihost.process_allgather(jjnp.arange(4.0)))


def test_broadcast_one_to_all_as_jax() -> None:
    assert_trees_equal(
        multihost_utils.broadcast_one_to_all(TREE), jax_multihost.broadcast_one_to_all(TREE)
    )


def test_barrier_and_equality_check_pass_with_one_process() -> None:
    multihost_utils.sync_global_devices("step 1")
    multihost_utils.assert_equal(TREE, "differs")
    assert multihost_utils.reached_preemption_sync_point(3) is (
        jax_multihost.reached_preemption_sync_point(3)
    )


def test_live_devices_needs_the_distributed_runtime_as_jax() -> None:
    def enter(module: Any) -> None:
        with module.live_devices(jax.devices()):
            pass

    assert raised(lambda: enter(multihost_utils)) == raised(lambda: enter(jax_multihost))


def test_process_failure_error_as_jax() -> None:
    failed = {lamina.devices()[1]}
    ours, theirs = (
        multihost_utils.ProcessFailureError(failed),
        jax_multihost.ProcessFailureError(failed),
    )
    assert (str(ours), ours.failed_devices) == (str(theirs), theirs.failed_devices)


def mesh_of(lib: Any) -> Any:
    return lib.sharding.Mesh(np.array(lib.devices()).reshape(2, 4), ("x", "y"))


@pytest.mark.parametrize(
    "spec", [("x",), ("x", "y"), (None, "y"), ()], ids=["x", "xy", "y", "replicated"]
)
def test_host_local_to_global_and_back_as_jax(spec: tuple[str | None, ...]) -> None:
    local = {"w": np.arange(32.0, dtype=np.float32).reshape(4, 8)}
    results = []
    for lib, to_global, to_local in (
        (lamina, multihost_utils.host_local_array_to_global_array,
         multihost_utils.global_array_to_host_local_array),
        (jax, jax_multihost.host_local_array_to_global_array,
         jax_multihost.global_array_to_host_local_array),
    ):  # fmt: skip
        mesh, pspec = mesh_of(lib), lib.sharding.PartitionSpec(*spec)
        global_ = to_global(local, mesh, pspec)["w"]
        back = to_local({"w": global_}, mesh, {"w": pspec})["w"]
        shards = sorted((s.device.id, str(s.index)) for s in global_.addressable_shards)
        results.append((global_.shape, global_.sharding.spec, shards, np.asarray(back)))
    (shape, spec_ours, shards, back), (shape_j, spec_j, shards_j, back_j) = results
    assert (shape, tuple(spec_ours), shards) == (shape_j, tuple(spec_j), shards_j)
    np.testing.assert_array_equal(back, back_j)


def _conversions(lib: Any, module: Any) -> dict[str, tuple[Callable[..., Any], np.ndarray]]:
    mesh, P = mesh_of(lib), lib.sharding.PartitionSpec
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)

    def to_global(v: Any) -> Any:
        return module.host_local_array_to_global_array(v, mesh, P("x"))

    def to_local(v: Any) -> Any:
        return module.global_array_to_host_local_array(v, mesh, P("y"))

    return {
        "to_global": (to_global, x),
        "to_local": (to_local, x),
        "vmap_to_global": (lib.vmap(to_global), x.reshape(2, 4, 2)),
        "vmap_to_local": (lib.vmap(to_local, in_axes=2), x.reshape(4, 2, 2)),
        "grad_to_global": (lib.grad(lambda v: (to_global(v) * v).sum()), x),
        "grad_to_local": (lib.grad(lambda v: lib.numpy.sin(to_local(v)).sum()), x),
        "jit_round_trip": (lib.jit(lambda v: to_local(to_global(v)) * 2.0), x),
    }


@pytest.mark.parametrize("name", sorted(_conversions(jax, jax_multihost)))
def test_conversions_are_primitives_as_jax(name: str) -> None:
    ours, x = _conversions(lamina, multihost_utils)[name]
    theirs, _ = _conversions(jax, jax_multihost)[name]
    assert str(lamina.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
    got, want = ours(x), theirs(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert _placement(got) == _placement(want)


def _placement(a: Any) -> tuple[str, tuple[Any, ...]]:
    return type(a.sharding).__name__, tuple(getattr(a.sharding, "spec", ()))


@pytest.mark.parametrize("direction", ["to_global", "to_local"])
def test_uneven_tiling_is_refused_as_jax(direction: str) -> None:
    def run(lib: Any, module: Any) -> Any:
        f, _ = _conversions(lib, module)[direction]
        return lib.jit(f).trace(np.ones((5, 3), np.float32))

    ours, theirs = (
        raised(lambda: run(lamina, multihost_utils)),
        raised(lambda: run(jax, jax_multihost)),
    )
    assert ours[0] is theirs[0] is AssertionError


def test_conversion_primitives_are_jax_names() -> None:
    for name in ("host_local_array_to_global_array", "global_array_to_host_local_array"):
        ours, theirs = getattr(multihost_utils, f"{name}_p"), getattr(jax_multihost, f"{name}_p")
        assert (ours.name, str(ours)) == (theirs.name, str(theirs))


@pytest.mark.parametrize("direction", ["to_global", "to_local"])
def test_none_pspec_error_as_jax(direction: str) -> None:
    name = f"{'host_local_array_to_global_array' if direction == 'to_global' else 'global_array_to_host_local_array'}"  # noqa: E501
    x = np.arange(8.0)
    ours = raised(lambda: getattr(multihost_utils, name)(x, mesh_of(lamina), None))
    theirs = raised(lambda: getattr(jax_multihost, name)(x, mesh_of(jax), None))
    assert ours == theirs


# --- ode ---------------------------------------------------------------------------------------


def decay(np_: Any) -> Callable[..., Any]:
    def f(y: Any, t: Any, a: Any) -> Any:
        return -a * y + np_.sin(3.0 * t)

    return f


def pendulum(np_: Any) -> Callable[..., Any]:
    def f(state: Any, t: Any, params: Any) -> Any:
        theta, omega = state["theta"], state["omega"]
        return {"theta": omega, "omega": -params["g"] * np_.sin(theta) - params["b"] * omega}

    return f


Y0 = np.array([1.0, -0.5, 2.0], np.float32)
TS = np.linspace(0.0, 2.0, 5, dtype=np.float32)
A = np.float32(0.7)
STATE = {"theta": np.float32(1.0), "omega": np.float32(0.0)}
PARAMS = {"g": np.float32(9.8), "b": np.float32(0.3)}


@pytest.mark.parametrize(
    "options", [{}, {"rtol": 1e-3, "atol": 1e-4}, {"hmax": 0.05}, {"mxstep": 3}], ids=str
)
def test_odeint_values_as_jax(options: dict[str, float]) -> None:
    ours = ode.odeint(decay(ljnp), Y0, ljnp.asarray(TS), A, **options)
    theirs = jax_ode.odeint(decay(jjnp), Y0, jjnp.asarray(TS), A, **options)
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


def test_odeint_of_pytrees_as_jax() -> None:
    ours = ode.odeint(pendulum(ljnp), STATE, ljnp.asarray(TS), PARAMS)
    theirs = jax_ode.odeint(pendulum(jjnp), STATE, jjnp.asarray(TS), PARAMS)
    assert str(jax.tree.structure(ours)) == str(jax.tree.structure(theirs))
    for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_allclose(x, y, rtol=2e-6, atol=2e-6)


def test_odeint_gradients_as_jax() -> None:
    def loss(lib: Any, np_: Any) -> Callable[..., Any]:
        def f(y0: Any, ts: Any, a: Any) -> Any:
            return np_.sum(lib.experimental.ode.odeint(decay(np_), y0, ts, a) ** 2)

        return f

    ours = lamina.grad(loss(lamina, ljnp), (0, 1, 2))(Y0, TS, A)
    theirs = jax.grad(loss(jax, jjnp), (0, 1, 2))(Y0, TS, A)
    for x, y in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


def test_odeint_gradient_of_closed_over_values_and_pytree_args_as_jax() -> None:
    def loss(lib: Any, np_: Any) -> Callable[..., Any]:
        def f(scale: Any, params: Any) -> Any:
            def rhs(state: Any, t: Any, p: Any) -> Any:
                d = pendulum(np_)(state, t, p)
                return {"theta": scale * d["theta"], "omega": d["omega"]}

            out = lib.experimental.ode.odeint(rhs, STATE, np_.asarray(TS), params)
            return np_.sum(out["theta"]) + np_.sum(out["omega"] ** 2)

        return f

    ours = lamina.grad(loss(lamina, ljnp), (0, 1))(np.float32(1.5), PARAMS)
    theirs = jax.grad(loss(jax, jjnp), (0, 1))(np.float32(1.5), PARAMS)
    for x, y in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


def test_odeint_errors_as_jax() -> None:
    f = decay(ljnp)
    g = decay(jjnp)
    assert raised(lambda: ode.odeint(f, Y0, ljnp.arange(3), A)) == raised(
        lambda: jax_ode.odeint(g, Y0, jjnp.arange(3), A)
    )
    assert raised(lambda: ode.odeint(f, Y0, ljnp.asarray(TS), "a")) == raised(
        lambda: jax_ode.odeint(g, Y0, jjnp.asarray(TS), "a")
    )


def same_jaxpr(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any) -> None:
    # Lamina stages constants as literals: JAX's jaxprs match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        expected = str(jax.make_jaxpr(theirs)(*args))
    assert str(lamina.make_jaxpr(ours)(*args)) == expected


def test_step_size_control_jaxprs_as_jax() -> None:
    y = np.ones(3, np.float32)
    same_jaxpr(ode.optimal_step_size, jax_ode.optimal_step_size, np.float32(0.1), np.float32(2))
    same_jaxpr(
        lambda e, y0, y1: ode.mean_error_ratio(e, 1e-3, 1e-6, y0, y1),
        lambda e, y0, y1: jax_ode.mean_error_ratio(e, 1e-3, 1e-6, y0, y1),
        0.01 * y,
        y,
        2 * y,
    )
    same_jaxpr(
        lambda y0, t0: ode.initial_step_size(lambda y, t: -y * t, t0, y0, 4, 1e-6, 1e-6, -y0),
        lambda y0, t0: jax_ode.initial_step_size(lambda y, t: -y * t, t0, y0, 4, 1e-6, 1e-6, -y0),
        Y0,
        np.float32(0.0),
    )


def test_interpolant_jaxprs_as_jax() -> None:
    k = np.arange(21.0, dtype=np.float32).reshape(7, 3)
    same_jaxpr(ode.interp_fit_dopri, jax_ode.interp_fit_dopri, Y0, 2 * Y0, k, np.float32(0.1))
    same_jaxpr(ode.abs2, jax_ode.abs2, np.array([1 + 2j], np.complex64))


def test_runge_kutta_step_jaxpr_as_jax() -> None:
    def step(lib_ode: Any) -> Callable[..., Any]:
        return lambda y0, t0, dt: lib_ode.runge_kutta_step(lambda y, t: -y, y0, -y0, t0, dt)

    same_jaxpr(step(ode), step(jax_ode), Y0, np.float32(0.0), np.float32(0.1))
