"""JAX's top-level names that are not transformations (issue "API breadth", item 5): devices
and processes, the configuration flags as context managers, tracing helpers, and the additions
to `tree_util`, `dtypes`, `errors` and `custom_derivatives`, each against JAX."""

from __future__ import annotations

import collections
import logging
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, cast

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina_core.ir._named_scopes import current_name_stack
from lamina_core.trace._tracing import Tracer

pytestmark = pytest.mark.oracle

APIS = pytest.mark.parametrize("api", [jax, lamina], ids=["jax", "lamina"])


@pytest.fixture(autouse=True)
def _flags_restored() -> Iterator[None]:
    """Tests that set options process-wide put them back, for both libraries."""
    yield
    for name in ("jax_debug_nans", "jax_debug_infs", "jax_disable_jit", "jax_log_compiles"):
        cast(Any, jax.config).update(name, False)
        lamina.config.update(name, False)


# ---- devices and processes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "device_count",
        "local_device_count",
        "default_backend",
        "process_index",
        "process_count",
        "process_indices",
    ],
)
def test_device_and_process_queries_as_jax(name: str) -> None:
    assert getattr(lamina, name)() == getattr(jax, name)()


@pytest.mark.parametrize("name", ["host_id", "host_count", "host_ids"])
def test_old_host_names_warn_as_jax(name: str) -> None:
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        expected = getattr(jax, name)()
    with pytest.warns(UserWarning, match="has been renamed to jax.process_") as mine:
        got = getattr(lamina, name)()
    assert got == expected
    assert [str(w.message) for w in mine] == [str(w.message) for w in theirs]


def test_device_type() -> None:
    device = lamina.devices()[0]
    assert isinstance(device, lamina.Device)
    assert lamina.Device is jax.Device


def test_environment_info(capsys: pytest.CaptureFixture[str]) -> None:
    text = lamina.print_environment_info(return_string=True)
    assert text is not None
    assert f"lamina:    {lamina.__version__}" in text
    n = lamina.local_device_count()  # the test process has 8 CPU devices (root conftest)
    assert f"device info: cpu-{n}, {n} local devices" in text
    assert lamina.print_environment_info() is None
    assert capsys.readouterr().out == text + "\n"


def test_version_and_typing_modules() -> None:
    assert lamina.version.__version__ == lamina.__version__
    assert ".".join(map(str, lamina.version.__version_info__)) == lamina.__version__
    values: list[Any] = [1, 1.5, True, 2j, np.float32(1), np.ones(2), "a", [1.0], None]
    jax_array_like = cast(Any, jax.typing.ArrayLike)
    theirs = [isinstance(v, jax_array_like) for v in [*values, jnp.ones(2)]]
    assert [isinstance(v, lamina.typing.ArrayLike) for v in [*values, lnp.ones(2)]] == theirs

    def traced_is_array_like(x: Any) -> Any:
        assert isinstance(x, lamina.typing.ArrayLike)
        return x

    lamina.jit(traced_is_array_like)(1.0)


def test_effects_barrier_and_copy_to_host_async() -> None:
    lamina.effects_barrier()  # nothing is pending: returns at once
    x = lnp.arange(3.0)
    tree = {"a": x, "b": 1}
    assert lamina.copy_to_host_async(tree) is tree
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


# ---- configuration flags -------------------------------------------------------------------

FLAGS = [
    "enable_x64",
    "enable_checks",
    "debug_nans",
    "debug_infs",
    "log_compiles",
    "explain_cache_misses",
    "default_prng_impl",
    "threefry_partitionable",
]


@pytest.mark.parametrize("name", FLAGS)
def test_flag_defaults_as_jax(name: str) -> None:
    assert getattr(lamina, name).value == getattr(jax, name).value


@pytest.mark.parametrize("name", FLAGS)
def test_flag_bool_refused(name: str) -> None:
    with pytest.raises(TypeError, match=r"bool\(\) not supported .*did you mean to use '"):
        bool(getattr(lamina, name))


@pytest.mark.parametrize("name", ["enable_x64", "debug_nans", "log_compiles"])
def test_bool_flag_scope_defaults_to_true(name: str) -> None:
    for api in (jax, lamina):
        flag = getattr(api, name)
        seen = []
        with flag():
            seen.append(flag.value)
            with flag(False):
                seen.append(flag.value)
            seen.append(flag.value)
        seen.append(flag.value)
        assert seen == [True, False, True, False]


def test_non_bool_flag_needs_a_value() -> None:
    with pytest.raises(TypeError) as theirs:
        jax.default_prng_impl()
    with pytest.raises(TypeError) as mine:
        lamina.default_prng_impl()
    assert str(mine.value) == str(theirs.value)


@APIS
def test_enable_x64_scope_and_decorator(api: Any) -> None:
    with api.enable_x64(True):
        assert api.numpy.asarray(1.5).dtype == np.float64

    def wide() -> Any:
        return api.numpy.arange(3).dtype

    assert api.enable_x64(True)(wide)() == np.int64
    assert api.numpy.asarray(1.5).dtype == np.float32


def test_make_user_context_retraces_as_jax() -> None:
    def traces_per_step(api: Any) -> list[int]:
        traces: list[int] = []

        def double(x: Any) -> Any:
            traces.append(1)
            return x * 2

        f = api.jit(double)
        ctx = api.make_user_context(default_value=None)
        counts = []
        for value in [None, 1, 2, 1, None]:
            with ctx(value):
                assert ctx.value == value
                f(1.0)
            counts.append(len(traces))
        ctx.set_global(5)
        f(1.0)
        counts.append(len(traces))
        assert ctx.get_global() == ctx.value == 5
        ctx.set_global(None)
        return counts

    assert traces_per_step(lamina) == traces_per_step(jax)


def test_enable_checks_type_checks_traced_jaxprs(monkeypatch: pytest.MonkeyPatch) -> None:
    jit_module = sys.modules["lamina_core.transforms._jit"]
    checked: list[str] = []
    real_check = jit_module.check_jaxpr

    def spy(jaxpr: Any) -> None:
        checked.append(str(jaxpr))
        real_check(jaxpr)

    monkeypatch.setattr(jit_module, "check_jaxpr", spy)
    lamina.jit(lambda x: x + 1)(1.0)
    assert checked == []
    with lamina.enable_checks(True):
        lamina.jit(lambda x: lnp.sin(x) * 2)(1.0)
    assert any("sin" in text for text in checked)


# ---- disable_jit ---------------------------------------------------------------------------


@APIS
def test_disable_jit_runs_the_body_on_values(api: Any) -> None:
    seen: list[Any] = []

    def body(x: Any) -> Any:
        seen.append(x)
        return x * 2

    f = api.jit(body)
    f(1.0)
    f(2.0)
    assert len(seen) == 1 and isinstance(seen[0], (Tracer, jax.core.Tracer))
    with api.disable_jit():
        np.testing.assert_allclose(f(3.0), 6.0)
        np.testing.assert_allclose(f(4.0), 8.0)
    assert seen[1:] == [3.0, 4.0]  # the Python values themselves, no tracing
    with api.disable_jit(False):
        f(5.0)
    assert len(seen) == 3


def test_disable_jit_globally_and_static_args() -> None:
    g = lamina.jit(lambda x, n: x * n, static_argnums=1)
    lamina.config.update("jax_disable_jit", True)
    calls = [g(lnp.float32(2.0), 3) for _ in range(3)]  # C++ dispatch must not cache these
    lamina.config.update("jax_disable_jit", False)
    assert [float(c) for c in calls] == [6.0] * 3
    assert float(g(lnp.float32(2.0), 3)) == 6.0


def test_disable_jit_inlines_in_make_jaxpr() -> None:
    def outer(api: Any) -> Callable[[Any], Any]:
        inner = api.jit(lambda x: api.numpy.sin(x) * 2)
        return lambda x: inner(x) + 1

    for disable in (False, True):
        with jax.disable_jit(disable):
            expected = str(jax.make_jaxpr(outer(jax))(1.0))
        with lamina.disable_jit(disable):
            assert str(lamina.make_jaxpr(outer(lamina))(1.0)) == expected


# ---- debug_nans / debug_infs ---------------------------------------------------------------


def _raised(
    fun: Callable[[], Any], capsys: pytest.CaptureFixture[str]
) -> tuple[type[BaseException] | None, str, str]:
    try:
        fun()
    except Exception as err:  # the kind and the message are what is compared
        return type(err), str(err), capsys.readouterr().out
    return None, "", capsys.readouterr().out


def _nan_cases(api: Any) -> list[Callable[[], Any]]:
    np_ = api.numpy
    nan = np_.asarray(np.nan)  # made before the check is on
    return [
        lambda: api.jit(lambda x: np_.log(x) * 2)(-1.0),
        lambda: np_.log(np_.float32(-1.0)),
        lambda: api.jit(lambda x: x)(nan),
        lambda: api.jit(lambda x: np_.sqrt(x) + 1)(np_.arange(-1.0, 2.0)),
        lambda: api.jit(lambda x: np_.log(x))(2.0),
    ]


@pytest.mark.parametrize("case", range(5))
def test_debug_nans_as_jax(case: int, capsys: pytest.CaptureFixture[str]) -> None:
    theirs, mine = _nan_cases(jax)[case], _nan_cases(lamina)[case]
    with jax.debug_nans(True):
        expected = _raised(theirs, capsys)
    with lamina.debug_nans(True):
        got = _raised(mine, capsys)
    assert got == expected


def test_debug_infs_as_jax(capsys: pytest.CaptureFixture[str]) -> None:
    def cases(api: Any) -> list[Callable[[], Any]]:
        one = api.numpy.asarray(1.0)
        return [
            lambda: api.jit(lambda x: x / 0.0)(one),
            lambda: api.jit(lambda x: api.numpy.exp(x) * 2)(api.numpy.asarray(1000.0)),
            lambda: api.jit(lambda x: api.numpy.log(x))(-1.0),  # a NaN: not checked for
        ]

    for theirs, mine in zip(cases(jax), cases(lamina), strict=True):
        with jax.debug_infs(True):
            expected = _raised(theirs, capsys)
        with lamina.debug_infs(True):
            assert _raised(mine, capsys) == expected


def test_debug_nans_set_globally_checks_every_call(capsys: pytest.CaptureFixture[str]) -> None:
    f = lamina.jit(lambda x: lnp.log(x))
    f(-1.0)  # unchecked: C++ dispatch may now repeat this call
    lamina.config.update("jax_debug_nans", True)
    for _ in range(3):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            f(-1.0)
    lamina.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(-1.0)))
    capsys.readouterr()


# ---- log_compiles --------------------------------------------------------------------------


def test_log_compiles_as_jax(caplog: pytest.LogCaptureFixture) -> None:
    def f(x: Any, y: Any) -> Any:
        return x * y

    with caplog.at_level(logging.WARNING), jax.log_compiles(True):
        jax.jit(f)(1.0, jnp.ones(3))
    theirs = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling")]
    caplog.clear()
    g = lamina.jit(f)
    with caplog.at_level(logging.WARNING), lamina.log_compiles(True):
        g(1.0, lnp.ones(3))
        g(2.0, lnp.ones(3))  # cached: no second compilation
    mine = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling")]
    assert len(mine) == 1
    # JAX adds its sharding view ("Argument mapping: ..."), which Lamina has no use for.
    assert theirs[-1].startswith(mine[0].removesuffix("."))
    assert any(
        r.getMessage().startswith("Finished XLA compilation of jit(f)") for r in caplog.records
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        g(1.0, lnp.ones(4))
    assert not caplog.records


# ---- tracing helpers -----------------------------------------------------------------------


@APIS
def test_ensure_compile_time_eval(api: Any) -> None:
    kinds: list[bool] = []

    def f(x: Any) -> Any:
        with api.ensure_compile_time_eval():
            y = api.numpy.sin(api.numpy.float32(3.0)) * 2
            kinds.append(isinstance(y, (Tracer, jax.core.Tracer)))
            z = x * 2
        kinds.append(isinstance(z, (Tracer, jax.core.Tracer)))
        return z + y

    jaxpr = str(api.make_jaxpr(f)(1.0))
    assert kinds == [False, True]
    assert "sin" not in jaxpr
    np.testing.assert_allclose(api.jit(f)(1.0), 2 + 2 * np.sin(np.float32(3.0)), rtol=1e-6)


def test_named_scope_and_named_call_as_jax() -> None:
    def program(api: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            with api.named_scope("layer"):
                y = api.numpy.sin(x)
            return api.named_call(lambda z: z * 2, name="double")(y)

        return f

    assert str(lamina.make_jaxpr(program(lamina))(1.0)) == str(jax.make_jaxpr(program(jax))(1.0))
    np.testing.assert_allclose(lamina.jit(program(lamina))(1.0), jax.jit(program(jax))(1.0))


def test_named_scope_stack_and_errors() -> None:
    @lamina.named_scope("outer")
    def f() -> str:
        with lamina.named_scope("inner"):
            return current_name_stack()

    assert f() == "outer/inner"
    assert lamina.named_call(current_name_stack)() == "current_name_stack"
    assert current_name_stack() == ""
    for api in (jax, lamina):
        with pytest.raises(TypeError, match=r"^named_scope name argument must be a string\.$"):
            api.named_scope(1)


def test_float0() -> None:
    assert lamina.float0 == jax.dtypes.float0 == lamina.dtypes.float0


# ---- closure_convert, custom_gradient ------------------------------------------------------


@APIS
def test_custom_gradient(api: Any) -> None:
    def square(x: Any) -> Any:
        return x**2, lambda g: (g * x,)  # deliberately not 2x

    def product(x: Any, y: Any) -> Any:
        return x * y, lambda g: (g * 10.0, g * 20.0)

    f = api.custom_gradient(square)
    two = api.custom_derivatives.custom_gradient(product)

    assert float(f(3.0)) == 9.0
    assert float(api.grad(f)(3.0)) == 3.0
    assert float(api.grad(lambda x: f(api.numpy.sin(x)))(1.0)) == pytest.approx(
        np.sin(1.0) * np.cos(1.0), rel=1e-6
    )
    assert [float(g) for g in api.grad(two, argnums=(0, 1))(2.0, 3.0)] == [10.0, 20.0]


def test_custom_gradient_jaxpr_as_jax() -> None:
    def build(api: Any) -> Any:
        def sin_with_rule(x: Any) -> Any:
            return api.numpy.sin(x), lambda g: (g * api.numpy.cos(x) * 3,)

        return api.grad(api.custom_gradient(sin_with_rule))

    assert str(lamina.make_jaxpr(build(lamina))(1.0)) == str(jax.make_jaxpr(build(jax))(1.0))


@APIS
def test_closure_convert(api: Any) -> None:
    def outer(x: Any, y: Any) -> Any:
        def inner(z: Any) -> Any:
            return z * y + api.numpy.sin(y)

        converted, consts = api.closure_convert(inner, x)
        counts.append(len(consts))
        return converted(x, *consts)

    counts: list[int] = []
    assert float(outer(1.0, 2.0)) == pytest.approx(2.0 + np.sin(2.0))
    assert float(api.grad(outer, argnums=1)(1.0, 2.0)) == pytest.approx(1.0 + np.cos(2.0))
    assert counts == [0, 1]  # at top level nothing is traced; under grad `y` is hoisted
    converted, _ = api.closure_convert(lambda a, b: a + b, 1.0, 2.0)
    with pytest.raises(TypeError, match="must have the same Pytree structure"):
        converted((1.0, 2.0))


# ---- tree_util -----------------------------------------------------------------------------

_NT = collections.namedtuple("_NT", "a b")


def _nodes(tu: Any) -> list[Any]:
    return [
        None,
        (1, 2),
        [1, (2, 3)],
        {"b": 1, "a": (2, 3)},
        _NT(1, 2),
        collections.OrderedDict(b=1, a=2),
        collections.defaultdict(list, {"b": 1, "a": 2}),
        tu.Partial(max, 1),
        {"a": None},
    ]


def test_flatten_one_level_as_jax() -> None:
    for theirs, mine in zip(_nodes(jax.tree_util), _nodes(lamina.tree_util), strict=True):
        t_children, t_meta = jax.tree_util.flatten_one_level(theirs)
        m_children, m_meta = lamina.tree_util.flatten_one_level(mine)
        assert list(m_children) == list(t_children)
        assert m_meta == t_meta
        t_keyed, t_meta = jax.tree_util.flatten_one_level_with_keys(theirs)
        m_keyed, m_meta = lamina.tree_util.flatten_one_level_with_keys(mine)
        assert [v for _, v in m_keyed] == [v for _, v in t_keyed]
        if type(theirs) is not _NT:  # JAX 0.10.2 names both fields `a` there
            assert [str(k) for k, _ in m_keyed] == [str(k) for k, _ in t_keyed]
        assert m_meta == t_meta


def test_flatten_one_level_of_a_leaf() -> None:
    for value in (1, np.ones(2)):
        with pytest.raises(ValueError) as theirs:
            jax.tree_util.flatten_one_level(value)
        with pytest.raises(ValueError) as mine:
            lamina.tree_util.flatten_one_level(value)
        assert str(mine.value) == str(theirs.value)
        assert lamina.tree_util.default_registry.flatten_one_level(value) is None
        assert jax.tree_util.default_registry.flatten_one_level(value) is None


def test_is_tree_node_and_registry() -> None:
    types: list[type] = [
        int,
        type(None),
        tuple,
        list,
        dict,
        _NT,
        collections.OrderedDict,
        np.ndarray,
    ]
    expected = [jax.tree_util.is_tree_node(t) for t in types]
    assert [lamina.tree_util.is_tree_node(t) for t in types] == expected
    assert lamina.tree_util.is_tree_node(lamina.tree_util.Partial)
    registry = lamina.tree_util.default_registry
    assert registry.is_node(dict) and not registry.is_node(float)
    leaves, treedef = registry.flatten({"b": 1, "a": [2, 3]})
    assert leaves == [2, 3, 1]
    assert lamina.tree_util.tree_unflatten(treedef, leaves) == {"a": [2, 3], "b": 1}


# ---- dtypes --------------------------------------------------------------------------------

_DTYPES = [
    "bool",
    "int4",
    "uint2",
    "int8",
    "uint32",
    "int64",
    ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn,
    np.float16,
    "float32",
    np.float64,
    np.complex64,
    "complex128",
]


def test_itemsize_bits_as_jax() -> None:
    expected = [jax.dtypes.itemsize_bits(np.dtype(d)) for d in _DTYPES]
    assert [lamina.dtypes.itemsize_bits(np.dtype(d)) for d in _DTYPES] == expected
    bad: Any
    for bad in (None, "S3"):
        with pytest.raises(ValueError) as theirs:
            jax.dtypes.itemsize_bits(bad)
        with pytest.raises(ValueError) as mine:
            lamina.dtypes.itemsize_bits(bad)
        assert str(mine.value) == str(theirs.value)


def test_scalar_type_of_as_jax() -> None:
    values = [1, 1.0, True, 1j, np.uint8(3), np.float16(1)]
    values += [np.ones(2, np.dtype(d)) for d in _DTYPES]
    assert [lamina.dtypes.scalar_type_of(v) for v in values] == [
        jax.dtypes.scalar_type_of(v) for v in values
    ]
    assert lamina.dtypes.scalar_type_of(lnp.ones(2, "int4")) is int


# ---- errors --------------------------------------------------------------------------------

_ERRORS = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]


@pytest.mark.parametrize("name", _ERRORS)
def test_error_hierarchy_as_jax(name: str) -> None:
    def builtin_bases(cls: type) -> list[str]:
        return sorted(c.__name__ for c in cls.__mro__ if c.__module__ == "builtins")

    mine, theirs = getattr(lamina.errors, name), getattr(jax.errors, name)
    assert builtin_bases(mine) == builtin_bases(theirs)
    for base in ("JAXTypeError", "JAXIndexError"):
        assert issubclass(mine, getattr(lamina.errors, base)) == issubclass(
            theirs, getattr(jax.errors, base)
        )


def test_error_messages_end_with_jax_error_page() -> None:
    with pytest.raises(lamina.errors.JAXTypeError) as mine:
        lamina.jit(lambda x: int(x))(1.0)
    with pytest.raises(jax.errors.JAXTypeError) as theirs:
        jax.jit(lambda x: int(x))(1.0)
    assert str(mine.value).splitlines()[-1] == str(theirs.value).splitlines()[-1]


def test_traced_boolean_mask_raises_as_jax() -> None:
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError) as theirs:
        jax.jit(lambda x: x[x > 0])(np.arange(3.0))
    with pytest.raises(lamina.errors.NonConcreteBooleanIndexError) as mine:
        lamina.jit(lambda x: x[x > 0])(np.arange(3.0))
    assert str(mine.value) == str(theirs.value)


def test_jax_runtime_error_is_jaxlibs() -> None:
    assert lamina.errors.JaxRuntimeError is jax.errors.JaxRuntimeError


# ---- stages --------------------------------------------------------------------------------


def test_stages_types() -> None:
    f = lamina.jit(lambda x: x * 2)
    assert isinstance(f, lamina.stages.Wrapped)
    traced = f.trace(1.0)
    lowered = traced.lower()
    assert isinstance(traced, lamina.stages.Traced)
    assert isinstance(lowered, lamina.stages.Lowered)
    assert isinstance(lowered.compile(), lamina.stages.Compiled)
    assert not isinstance(len, lamina.stages.Wrapped)
    assert lamina.stages.CompilerOptions == jax.stages.CompilerOptions
