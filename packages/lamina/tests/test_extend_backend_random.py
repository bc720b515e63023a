"""`jax.extend.backend`, `jax.extend.random`, `jax.interpreters.pxla`, vmappable containers
and `linear_call` on Lamina, each against JAX 0.10.2: the same values, printed jaxprs, errors.

Clearing the backends runs in a child process: it replaces the clients every later test of
this process would otherwise share.
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import jax
import jax.extend.backend as jax_backend
import jax.extend.random as jax_random
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
import lamina.extend.backend as lamina_backend
import lamina.extend.random as lamina_random
import lamina_runtime

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's jaxprs match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _mod(api: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{api.__name__}.{name}")


def _same_jaxpr(fun: Callable[[ModuleType], Callable[..., Any]], *args: Any) -> None:
    theirs = str(jax.make_jaxpr(fun(jax))(*args))
    ours = str(lamina.make_jaxpr(fun(lamina))(*args))
    assert ours == theirs


def _error(fun: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        fun()
    return info.type, str(info.value)


# ---- jax.extend.backend ----------------------------------------------------------------------


def test_backend_clients_are_jaxs_own() -> None:
    assert lamina_backend.backends() == jax_backend.backends()
    client = lamina_backend.get_backend()
    assert client is jax_backend.get_backend()
    assert lamina_backend.get_backend("cpu") is jax_backend.get_backend("cpu")
    assert lamina_backend.get_backend(client) is client
    assert lamina.devices()[0].client is client
    assert lamina_backend.backend_xla_version() == jax_backend.backend_xla_version()
    assert lamina_backend.ifrt_proxy is jax_backend.ifrt_proxy


def test_unknown_backend_raises_jaxs_error() -> None:
    assert _error(lambda: lamina_backend.get_backend("nosuch")) == _error(
        lambda: jax_backend.get_backend("nosuch")
    )


def test_default_device_follows_the_default_device_option() -> None:
    assert lamina_backend.get_default_device() == jax_backend.get_default_device()
    device = lamina.devices()[-1]
    with lamina.default_device(device), jax.default_device(device):
        assert lamina_backend.get_default_device() == device
        assert jax_backend.get_default_device() == device


def _options_fields(options: Any) -> tuple[Any, ...]:
    build = options.executable_build_options
    return (
        options.num_replicas,
        options.num_partitions,
        str(options.device_assignment),
        sorted(options.env_option_overrides),
        build.use_spmd_partitioning,
        build.fdo_profile,
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"device_assignment": [0]},
        {
            "device_assignment": "devices",
            "env_options_overrides": {"xla_cpu_use_thunk_runtime": "true"},
        },
        {"device_assignment": [[0]], "fdo_profile": b"profile"},
    ],
    ids=["bare", "ids", "devices-overrides", "grid-profile"],
)
def test_compile_options_match_jaxs(kwargs: dict[str, Any]) -> None:
    if kwargs.get("device_assignment") == "devices":
        kwargs = {**kwargs, "device_assignment": np.array(lamina.devices()[:1], dtype=object)}
    theirs = jax_backend.get_compile_options(1, 1, **kwargs)
    ours = lamina_backend.get_compile_options(1, 1, **kwargs)
    assert _options_fields(ours) == _options_fields(theirs)


@pytest.mark.parametrize(
    ("replicas", "partitions", "assignment"),
    [(2, 1, [0]), (1, 2, [[0]])],
    ids=["replicas", "partitions"],
)
def test_compile_options_check_the_assignment_as_jax(
    replicas: int, partitions: int, assignment: Any
) -> None:
    ours = _error(lambda: lamina_backend.get_compile_options(replicas, partitions, assignment))
    theirs = _error(lambda: jax_backend.get_compile_options(replicas, partitions, assignment))
    assert ours == theirs


def test_clear_caches_empties_a_registered_cache_and_lets_it_go() -> None:
    @functools.lru_cache
    def square(n: int) -> int:
        return n * n

    square(3)
    lamina_backend.register_backend_cache(square, "squares, for a test")
    lamina.clear_caches()
    assert square.cache_info().currsize == 0
    del square
    gc.collect()  # registered weakly, as JAX's: a dropped cache is not kept alive


def test_clear_in_memory_compilation_cache_forgets_executables() -> None:
    runtime = lamina_runtime.runtime()
    x = np.arange(5.0, dtype=np.float32)
    lowered = lamina.jit(lambda v: v * 2.0 + 1.0).lower(x)
    lowered.compile()

    def built() -> int:
        return runtime.compilations + runtime.persistent_hits

    before = built()
    lowered.compile()
    assert built() == before  # an in-memory hit
    lamina_backend.clear_in_memory_compilation_cache()
    compiled = lowered.compile()
    assert built() == before + 1
    np.testing.assert_array_equal(compiled(x), x * 2.0 + 1.0)


CLEAR_BACKENDS = """
import functools, importlib, sys
api = __import__(sys.argv[1])
backend = importlib.import_module(sys.argv[1] + ".extend.backend")
from jax._src import xla_bridge

calls = []
def factory():
    calls.append(1)
    return xla_bridge.make_cpu_client()

@functools.lru_cache
def square(n):
    return n * n

square(2)
backend.register_backend_cache(square, "squares")
first = backend.get_backend()
print(api.jit(lambda x: x + 1)(1.0))
backend.register_backend_factory("second", factory, priority=-100)
print("factory calls before clearing:", len(calls))
backend.clear_backends()
print("cache entries:", square.cache_info().currsize)
print("same client:", backend.get_backend() is first)
print(sorted(backend.backends()), "factory calls:", len(calls))
print(api.jit(lambda x: x * 3)(2.0), api.numpy.arange(3) + 1)
"""


def test_clear_backends_makes_new_clients_and_empties_caches_as_jax() -> None:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}

    def run(api: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CLEAR_BACKENDS), api],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout

    ours = run("lamina")
    assert ours == run("jax")
    assert "cache entries: 0" in ours and "same client: False" in ours


# ---- jax.extend.random -----------------------------------------------------------------------


@pytest.mark.parametrize("impl", ["threefry_prng_impl", "rbg_prng_impl", "unsafe_rbg_prng_impl"])
def test_prng_impls_are_jaxs(impl: str) -> None:
    ours, theirs = getattr(lamina_random, impl), getattr(jax_random, impl)
    assert (ours.name, ours.tag, ours.key_shape) == (theirs.name, theirs.tag, theirs.key_shape)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("impl", ["threefry_prng_impl", "rbg_prng_impl", "unsafe_rbg_prng_impl"])
@pytest.mark.parametrize(
    "seeds", [7, np.arange(6, dtype=np.int32).reshape(2, 3)], ids=["int", "array"]
)
@pytest.mark.parametrize("order", ["random_seed", "seed_with_impl"])
def test_random_seed_gives_jaxs_keys(impl: str, seeds: Any, order: str) -> None:
    def seed(api: ModuleType) -> Callable[[Any], Any]:
        random = _mod(api, "extend.random")
        prng = getattr(random, impl)
        if order == "random_seed":
            return lambda s: random.random_seed(s, prng)
        return lambda s: random.seed_with_impl(prng, s)

    ours, theirs = seed(lamina)(seeds), seed(jax)(seeds)
    assert str(lamina.random.key_impl(ours)) == str(jax.random.key_impl(theirs))
    np.testing.assert_array_equal(lamina.random.key_data(ours), jax.random.key_data(theirs))
    _same_jaxpr(seed, seeds)


@pytest.mark.parametrize("shape", [(5,), (6,), (2, 3), (1,)])
def test_threefry_2x32_is_jaxs(shape: tuple[int, ...]) -> None:
    keypair = np.array([0x13198A2E, 0x03707344], np.uint32)
    count = np.arange(np.prod(shape), dtype=np.uint32).reshape(shape)
    np.testing.assert_array_equal(
        lamina_random.threefry_2x32(keypair, count), jax_random.threefry_2x32(keypair, count)
    )
    np.testing.assert_array_equal(
        lamina.jit(lamina_random.threefry_2x32)(keypair, count),
        jax_random.threefry_2x32(keypair, count),
    )
    _same_jaxpr(lambda api: _mod(api, "extend.random").threefry_2x32, keypair, count)


def test_threefry_2x32_refuses_other_dtypes_as_jax() -> None:
    keypair, count = np.array([1, 2], np.int32), np.arange(4, dtype=np.uint32)
    assert _error(lambda: lamina_random.threefry_2x32(keypair, count)) == _error(
        lambda: jax_random.threefry_2x32(keypair, count)
    )


def test_threefry2x32_primitive_binds_as_jaxs() -> None:
    assert lamina_random.threefry2x32_p.name == jax_random.threefry2x32_p.name
    args = [np.arange(4, dtype=np.uint32) * np.uint32(i + 3) for i in range(4)]
    ours = lamina_random.threefry2x32_p.bind(*args)
    theirs = jax_random.threefry2x32_p.bind(*args)  # type: ignore[no-untyped-call]  # JAX's
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def _toy_impl(api: ModuleType, tag: str) -> Any:
    """A PRNG whose keys are one word: seeding takes the seed, splitting adds 1 (and the index),
    folding in adds the data, bits repeat the key."""
    jnp = api.numpy

    def split(k: Any, shape: tuple[int, ...]) -> Any:
        n = int(np.prod(shape))
        return jnp.reshape(k + 1 + jnp.arange(n, dtype=jnp.uint32), (*shape, 1))

    return _mod(api, "extend.random").define_prng_impl(
        key_shape=(1,),
        seed=lambda s: jnp.reshape(s.astype(jnp.uint32), (1,)),
        split=split,
        random_bits=lambda k, width, shape: jnp.full(shape, k[0], jnp.dtype(f"uint{width}")),
        fold_in=lambda k, d: k + jnp.uint32(d),
        name="toy",
        tag=tag,
    )


@functools.cache
def _toy_impls() -> tuple[Any, Any]:
    return _toy_impl(lamina, "toy"), _toy_impl(jax, "toy")


def _toy_program(api: ModuleType, impl: Any) -> Callable[[Any], Any]:
    random = api.random

    def program(seed: Any) -> Any:
        key = random.key(seed, impl=impl)
        a, b = random.split(key)
        folded = random.fold_in(b, 5)
        return (
            random.key_data(random.split(key, (2, 2))),
            random.key_data(folded),
            random.bits(a, (3,)),
            random.bits(folded, (2,), np.uint16),
        )

    return program


def test_defined_prng_impl_draws_jaxs_values_eager_jitted_and_vmapped() -> None:
    ours_impl, theirs_impl = _toy_impls()
    ours, theirs = _toy_program(lamina, ours_impl), _toy_program(jax, theirs_impl)
    seeds = np.array([3, 10, 40], np.int32)
    runs: list[tuple[Callable[[Any], Any], Callable[[Any], Any], Any]] = [
        (ours, theirs, 3),
        (lamina.jit(ours), jax.jit(theirs), 3),
        (lamina.vmap(ours), jax.vmap(theirs), seeds),
    ]
    for run_ours, run_theirs, arg in runs:
        for a, b in zip(run_ours(arg), run_theirs(arg), strict=True):
            np.testing.assert_array_equal(a, b)
            assert np.asarray(a).dtype == np.asarray(b).dtype


def test_defined_prng_impl_prints_as_jaxs() -> None:
    ours_impl, theirs_impl = _toy_impls()
    assert str(lamina.make_jaxpr(_toy_program(lamina, ours_impl))(3)) == str(
        jax.make_jaxpr(_toy_program(jax, theirs_impl))(3)
    )
    key = lamina.random.key(1, impl=ours_impl)
    assert str(lamina.random.key_impl(key)) == str(
        jax.random.key_impl(jax.random.key(1, impl=theirs_impl))
    )
    assert repr(key) == repr(jax.random.key(1, impl=theirs_impl))


def test_defined_prng_impl_with_a_taken_tag_is_refused() -> None:
    _toy_impls()
    with pytest.raises(ValueError, match="already defined"):
        _toy_impl(lamina, "toy")


# ---- jax.interpreters and jax.interpreters.pxla ----------------------------------------------


def test_interpreters_has_jaxs_names() -> None:
    theirs = {n for n in dir(jax.interpreters) if not n.startswith("_")}
    assert theirs <= set(dir(lamina.interpreters))
    assert vars(lamina.interpreters)["os"] is os
    assert callable(lamina.interpreters.traceback_util.register_exclusion)


def test_pxla_compile_options_match_jaxs() -> None:
    from jax.interpreters import pxla as jax_pxla

    from lamina.interpreters import pxla

    devices = np.array(lamina.devices()[:1], dtype=object)
    module = jax.jit(lambda x: x).lower(1.0).compiler_ir()  # JAX reads its size

    def options(pxla_module: Any) -> Any:
        return pxla_module.create_compile_options(
            module, True, [True], [False, True], None, devices, {"fdo_profile": b"p"}
        )

    ours, theirs = options(pxla), options(jax_pxla)
    assert _options_fields(ours) == _options_fields(theirs)
    assert ours.parameter_is_tupled_arguments == theirs.parameter_is_tupled_arguments
    for field in ("parameters", "output"):
        name = f"allow_spmd_sharding_propagation_to_{field}"
        assert getattr(ours.executable_build_options, name) == getattr(
            theirs.executable_build_options, name
        )


@pytest.mark.parametrize("name", ["Index", "MeshAxisName"])
def test_pxla_deprecated_aliases_warn_as_jax(name: str) -> None:
    from jax.interpreters import pxla as jax_pxla

    from lamina.interpreters import pxla

    with warnings.catch_warnings(record=True) as ours_caught:
        warnings.simplefilter("always")
        ours = getattr(pxla, name)
    with warnings.catch_warnings(record=True) as theirs_caught:
        warnings.simplefilter("always")
        theirs = getattr(jax_pxla, name)
    assert ours == theirs
    assert [str(w.message) for w in ours_caught] == [str(w.message) for w in theirs_caught]
    assert [w.category for w in ours_caught] == [w.category for w in theirs_caught]


@pytest.mark.parametrize("name", ["shard_args", "ShardingSpec", "parallel_callable"])
def test_pxla_removed_names_raise_jaxs_error(name: str) -> None:
    from jax.interpreters import pxla as jax_pxla

    from lamina.interpreters import pxla

    assert _error(lambda: getattr(pxla, name)) == _error(lambda: getattr(jax_pxla, name))


# ---- vmappable containers --------------------------------------------------------------------


class Pair:
    """Two arrays and, inside `vmap`, the element's index."""

    def __init__(self, a: Any, b: Any, idx: Any = None) -> None:
        self.a, self.b, self.idx = a, b, idx


class PairSpec:
    def __init__(self, axis: int) -> None:
        self.axis = axis


def _axis(spec: Any) -> Any:
    return spec.axis if isinstance(spec, PairSpec) else spec


def _pair_to_elt(cont: Any, get_idx: Any, x: Pair, spec: Any) -> Pair:
    return Pair(cont(x.a, _axis(spec)), cont(x.b, _axis(spec)), get_idx())


def _pair_from_elt(cont: Any, size: Any, elt: Pair, spec: Any) -> Pair:
    return Pair(cont(size, elt.a, _axis(spec)), cont(size, elt.b, _axis(spec)))


@pytest.fixture
def pair_registered() -> Iterator[None]:
    for api in (jax, lamina):
        _mod(api, "interpreters.batching").register_vmappable(
            Pair, PairSpec, int, _pair_to_elt, _pair_from_elt, None
        )
    yield
    for api in (jax, lamina):
        _mod(api, "interpreters.batching").unregister_vmappable(Pair)


def _pair_step(q: Pair) -> Pair:
    return Pair(q.a * 2, q.b + q.a.sum() + q.idx)


@pytest.mark.usefixtures("pair_registered")
@pytest.mark.parametrize(
    "axes",
    [
        {"in_axes": PairSpec(0), "out_axes": PairSpec(1), "axis_size": 2},
        {"axis_size": 2},
        {"in_axes": PairSpec(0), "out_axes": 0, "axis_size": 2},
    ],
    ids=["specs", "defaults", "spec-in-int-out"],
)
def test_vmap_maps_a_registered_container_as_jax(axes: dict[str, Any]) -> None:
    p = Pair(np.arange(6.0, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32))
    ours, theirs = (api.vmap(_pair_step, **axes)(p) for api in (lamina, jax))
    np.testing.assert_array_equal(ours.a, theirs.a)
    np.testing.assert_array_equal(ours.b, theirs.b)
    # Inside jit (a container is no jit argument, as in JAX: it is built inside).
    ours_b, theirs_b = (
        api.jit(lambda a, b, api=api: api.vmap(_pair_step, **axes)(Pair(a, b)).b)(p.a, p.b)
        for api in (lamina, jax)
    )
    np.testing.assert_array_equal(ours_b, theirs_b)
    _same_jaxpr(lambda api: lambda a, b: api.vmap(_pair_step, **axes)(Pair(a, b)).b, p.a, p.b)


@pytest.mark.usefixtures("pair_registered")
def test_vmap_takes_a_container_beside_arrays_as_jax() -> None:
    p = Pair(np.arange(6.0, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32))
    x = np.arange(3.0, dtype=np.float32)

    def f(q: Pair, v: Any) -> tuple[Pair, Any]:
        return Pair(q.a * v, q.b), q.a.sum()

    (ours, ours_sum), (theirs, theirs_sum) = (
        api.vmap(f, in_axes=(PairSpec(1), 0))(p, x) for api in (lamina, jax)
    )
    np.testing.assert_array_equal(ours.a, theirs.a)
    np.testing.assert_array_equal(ours.b, theirs.b)
    np.testing.assert_array_equal(ours_sum, theirs_sum)


@pytest.mark.usefixtures("pair_registered")
def test_vmap_without_an_axis_size_for_a_container_raises_jaxs_error() -> None:
    p = Pair(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    spec: Any = PairSpec(0)  # a registered spec type: JAX's annotations do not list them
    assert _error(lambda: lamina.vmap(_pair_step, in_axes=spec)(p)) == _error(
        lambda: jax.vmap(_pair_step, in_axes=spec)(p)
    )


def test_unregistered_container_is_no_longer_mapped() -> None:
    batching = lamina.interpreters.batching
    batching.register_vmappable(Pair, PairSpec, int, _pair_to_elt, _pair_from_elt, None)
    batching.unregister_vmappable(Pair)
    p = Pair(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="is not a valid Lamina"):
        lamina.vmap(_pair_step, in_axes=PairSpec(0), axis_size=2)(p)


# ---- linear_call and remat_opt_p -------------------------------------------------------------


def _div_add(api: ModuleType) -> Callable[[Any, Any], Any]:
    linear_call = _mod(api, "custom_derivatives").linear_call

    def f(r: Any, x: Any) -> Any:
        return x / r

    def t(r: Any, ct: Any) -> Any:
        return ct / r

    return lambda x, d: x + linear_call(f, t, d, x)


def _custom_id(api: ModuleType) -> Callable[[Any], Any]:
    linear_call = _mod(api, "custom_derivatives").linear_call

    def f(_: Any, x: Any) -> Any:
        return x

    def t(_: Any, ct: Any) -> Any:
        return 7.0

    return lambda x: linear_call(f, t, (), x)


def _transpose(api: ModuleType, f: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda y: api.linear_transpose(f, 1.0)(y)[0]


def test_linear_call_values_match_jaxs() -> None:
    programs: list[Callable[[ModuleType], Any]] = [
        lambda api: _div_add(api)(9.0, 3.0),
        lambda api: api.jit(_div_add(api))(9.0, 3.0),
        lambda api: api.grad(_div_add(api))(1.0, 3.0),
        lambda api: api.jvp(lambda x: _div_add(api)(x, 3.0), (1.0,), (2.0,))[1],
        lambda api: _transpose(api, lambda x: _div_add(api)(x, 3.0))(18.0),
        lambda api: _transpose(api, _custom_id(api))(1.0),
        lambda api: _transpose(api, _transpose(api, _custom_id(api)))(1.0),
        lambda api: _transpose(api, _transpose(api, _transpose(api, _custom_id(api))))(1.0),
    ]
    for make in programs:
        np.testing.assert_allclose(make(lamina), make(jax), rtol=1e-6)


def test_linear_call_jaxprs_match_jaxs() -> None:
    _same_jaxpr(_div_add, 1.0, 3.0)
    _same_jaxpr(lambda api: api.grad(_div_add(api)), 1.0, 3.0)


def test_linear_call_errors_match_jaxs() -> None:
    def bad_tree(api: ModuleType) -> Any:
        linear_call = _mod(api, "custom_derivatives").linear_call
        f = lambda x: linear_call(lambda r, x: x / r, lambda r, ct: (ct, ct), 2.0, x)  # noqa: E731
        return _transpose(api, f)(1.0)

    assert _error(lambda: bad_tree(lamina)) == _error(lambda: bad_tree(jax))
    ones = np.ones(2, np.float32)
    assert _error(lambda: lamina.vmap(_div_add(lamina))(ones, ones)) == _error(
        lambda: jax.vmap(_div_add(jax))(ones, ones)
    )
    ours_type, _ = _error(lambda: lamina.jvp(_div_add(lamina), (1.0, 3.0), (1.0, 1.0)))
    theirs_type, _ = _error(lambda: jax.jvp(_div_add(jax), (1.0, 3.0), (1.0, 1.0)))
    assert ours_type is theirs_type  # differentiating in the residual is refused


def test_remat_opt_runs_its_forward_jaxpr_as_jaxs() -> None:
    from jax.custom_derivatives import remat_opt_p as jax_remat_opt_p

    from lamina.custom_derivatives import remat_opt_p

    assert (remat_opt_p.name, remat_opt_p.multiple_results) == (
        jax_remat_opt_p.name,
        jax_remat_opt_p.multiple_results,
    )

    def bind(api: ModuleType, p: Any, x: Any) -> Any:
        fwd = api.make_jaxpr(lambda v: (api.numpy.sin(v), v * 2.0))(1.0)
        return p.bind(x, num_consts=0, num_res=1, fwd_jaxpr=fwd, fun_jaxpr_thunk=None)

    x = np.float32(0.5)
    for ours, theirs in [
        (bind(lamina, remat_opt_p, x), bind(jax, jax_remat_opt_p, x)),
        (
            lamina.jit(lambda v: bind(lamina, remat_opt_p, v))(x),
            jax.jit(lambda v: bind(jax, jax_remat_opt_p, v))(x),
        ),
    ]:
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    _, tangents = lamina.jvp(lambda v: bind(lamina, remat_opt_p, v), (x,), (np.float32(1.0),))
    np.testing.assert_allclose(tangents, [np.cos(x), 2.0], rtol=1e-6)
