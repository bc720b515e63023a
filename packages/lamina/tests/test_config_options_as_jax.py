"""`lamina.config` against JAX 0.10.2's `jax.config`, option by option.

Every option JAX defines (`jax.config.values`, JAX's own list, so an option a new JAX adds fails
here until Lamina handles it) reads as JAX's default, is set and read back, and checks values
with JAX's errors; an option Lamina refuses names itself when set to anything but its default.
The options JAX users set are then tested for their effect: results, dtypes, printed jaxprs,
warnings and errors, under `config.update`, `with config(...)` and JAX's top-level context
managers (`with jax.numpy_rank_promotion("raise"):`).
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import logging
import os
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest
from jax._src import config as jax_config

import lamina
from lamina_core.config import Support

pytestmark = pytest.mark.oracle

JAX_OPTIONS = sorted(jax.config.values)


def _plain(value: Any) -> Any:
    """An option's value comparable across the two libraries (their enums are distinct)."""
    return value.name if isinstance(value, enum.Enum) else value


def _support(name: str) -> Support:
    return lamina.config.option(name).support


def _other_value(name: str) -> Any:
    """A value of option `name` other than its default that JAX accepts."""
    kind, _, meta = jax.config.meta[name]
    default = jax.config.values[name]
    if kind is bool:
        return not default
    if kind is int:
        return (default or 0) + 1
    if kind is float:
        return (default or 0.0) + 1.0
    if kind == "enum":
        return next(v for v in meta["enum_values"] if v != default and v != "threefry4x32")
    if kind == "enum_class":
        member = next(m for m in meta["enum_class"] if m != default)
        return member.value if isinstance(member.value, str) else member.name.lower()
    assert kind is str
    return "cpu" if name in ("jax_default_device", "jax_platforms") else "lamina-test"


def _as_jax_reads(name: str, value: Any) -> Any:
    """`value` as JAX's option `name` holds it once set (JAX's parser applied)."""
    parser = getattr(jax_config.config._value_holders[name], "_parser", None)
    try:
        return _plain(parser(value) if parser is not None else value)
    except RuntimeError:  # JAX's check that its backend has not started yet: not a parse
        return _plain(value)


class Raised(NamedTuple):
    """An exception, as compared: its class's name and its text."""

    kind: str
    text: str


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Exception as error:
        return Raised(type(error).__name__, str(error))


def _update_outcome(api: Any, name: str, value: Any) -> Any:
    """What `api.config.update(name, value)` does: its error, or the value read back; the
    option is put back to what it was."""
    before = api.config.read(name) if api is lamina else api.config.values[name]
    try:
        api.config.update(name, value)
    except Exception as error:
        return Raised(type(error).__name__, str(error))
    try:
        return _plain(api.config.read(name) if api is lamina else api.config.values[name])
    finally:
        api.config.update(name, before)


def _refused_by_name(outcome: Any, name: str) -> bool:
    return (
        isinstance(outcome, Raised)
        and outcome.kind == "NotImplementedError"
        and f"{name}=" in outcome.text
        and "not supported by Lamina" in outcome.text
    )


# Options whose global update acts on the process beyond the option (JAX's backends, logging,
# caches): they are set in scopes here, and tested for effect below.
_PROCESS_WIDE = frozenset(
    {
        "jax_compilation_cache_dir",
        "jax_cpu_collectives_implementation",
        # JAX refuses these once its backend has started; Lamina takes them without effect.
        "jax_cpu_get_global_topology_timeout_minutes",
        "jax_cpu_get_local_topology_timeout_minutes",
        "jax_debug_log_modules",
        "jax_default_device",
        "jax_enable_compilation_cache",
        "jax_logging_level",
        "jax_num_cpu_devices",
        "jax_platform_name",
        "jax_platforms",
        "jax_transfer_guard",
    }
)

# Defaults Lamina chooses otherwise, each for a reason of its own: the value Lamina reads.
_LAMINA_DEFAULTS: dict[str, Callable[[], Any]] = {
    # The conftests give each library its own cache directory.
    "jax_compilation_cache_dir": lambda: os.environ["LAMINA_COMPILATION_CACHE_DIR"],
    # Lamina's tests keep Lamina's frames (the root conftest); JAX's default otherwise.
    "jax_traceback_filtering": lambda: os.environ.get("LAMINA_TRACEBACK_FILTERING", "auto"),
    # Lamina's persistent cache is on by default, so it is bounded by default (1 GiB).
    "jax_compilation_cache_max_size": lambda: 1 << 30,
    # Lamina prints closed-over constants as literals by default (docs/compilation.md).
    "jax_use_simplified_jaxpr_constants": lambda: True,
    # Every executable is written to Lamina's cache (JAX: those over a second); the root
    # conftest sets JAX's to Lamina's.
    "jax_persistent_cache_min_compile_time_secs": lambda: 0.0,
}


@pytest.mark.parametrize("name", JAX_OPTIONS)
def test_option_reads_as_jax_default(name: str) -> None:
    assert name in lamina.config.options(), f"{name} is not handled by Lamina"
    expected = _LAMINA_DEFAULTS.get(name, lambda: _plain(jax.config.values[name]))()
    assert _plain(lamina.config.read(name)) == expected
    assert _plain(getattr(lamina.config, name)) == expected


@pytest.mark.parametrize("name", JAX_OPTIONS)
def test_option_is_set_and_read_back_or_refused_by_name(name: str) -> None:
    value = _other_value(name)
    before = _plain(lamina.config.read(name))
    if _support(name) is Support.REFUSED:
        assert _refused_by_name(_outcome(lambda: lamina.config.update(name, value)), name)
        with (
            pytest.raises(NotImplementedError, match=re.escape(name)),
            lamina.config(**{name: value}),
        ):
            pass
        assert _plain(lamina.config.read(name)) == before
        return
    if name == "jax_num_cpu_devices":  # set in a scope, it would start the backend with it
        return
    with lamina.config(**{name: value}):
        assert _plain(lamina.config.read(name)) == _as_jax_reads(name, value)
    assert _plain(lamina.config.read(name)) == before
    if name not in _PROCESS_WIDE:
        assert _update_outcome(lamina, name, value) == _update_outcome(jax, name, value)


_BAD_VALUES: list[Any] = [(1,), "not-a-value", 2.5]


@pytest.mark.parametrize("bad", _BAD_VALUES, ids=repr)
@pytest.mark.parametrize("name", sorted(set(JAX_OPTIONS) - _PROCESS_WIDE))
def test_option_checks_values_as_jax(name: str, bad: Any) -> None:
    theirs = _update_outcome(jax, name, bad)
    ours = _update_outcome(lamina, name, bad)
    if _support(name) is Support.REFUSED and not isinstance(theirs, Raised):
        # JAX took it; Lamina takes only the default
        assert ours == theirs or _refused_by_name(ours, name)
    else:
        assert ours == theirs


def test_num_cpu_devices_is_refused_once_the_backend_started_as_jax() -> None:
    lamina.numpy.ones(1).block_until_ready()
    jax.numpy.ones(1).block_until_ready()
    value = jax.config.values["jax_num_cpu_devices"] + 3
    theirs = _update_outcome(jax, "jax_num_cpu_devices", value)
    assert isinstance(theirs, Raised) and theirs.kind == "RuntimeError"
    assert _update_outcome(lamina, "jax_num_cpu_devices", value) == theirs


def test_unknown_option_is_refused_as_jax() -> None:
    calls: list[Callable[[Any], Any]] = [
        lambda api: api.config.update("jax_no_such_option", 1),
        lambda api: api.config.read("jax_no_such_option"),
    ]
    for call in calls:
        with pytest.raises(AttributeError) as theirs:
            call(jax)
        with pytest.raises(AttributeError) as ours:
            call(lamina)
        assert str(ours.value) == str(theirs.value)


# The top-level context managers JAX exports: each one is its option.
_TOP_LEVEL = sorted(
    name
    for name in dir(jax)
    if hasattr(getattr(jax, name), "name")
    and getattr(getattr(jax, name), "name", None) in jax.config.values
)


@pytest.mark.parametrize("attr", _TOP_LEVEL)
def test_top_level_context_manager_sets_its_option(attr: str) -> None:
    name = getattr(jax, attr).name
    ours = getattr(lamina, attr)
    assert ours.name == name
    value = _other_value(name)
    if _support(name) is Support.REFUSED:
        with pytest.raises(NotImplementedError, match=re.escape(name)), ours(value):
            pass
        return
    if name == "jax_default_prng_impl":
        value = "rbg"
    with ours(value):
        assert _plain(ours.value) == _as_jax_reads(name, value)
        assert _plain(lamina.config.read(name)) == _as_jax_reads(name, value)
    assert _plain(ours.value) == _plain(getattr(jax, attr).value)


@pytest.mark.parametrize("attr", _TOP_LEVEL)
def test_top_level_context_manager_without_value_as_jax(attr: str) -> None:
    def enter(api: Any) -> Any:
        with getattr(api, attr)():
            return _plain(getattr(api, attr).value)

    theirs, ours = _outcome(lambda: enter(jax)), _outcome(lambda: enter(lamina))
    assert ours == theirs or _refused_by_name(ours, getattr(jax, attr).name)


def test_top_level_context_manager_refuses_bool_as_jax() -> None:
    with pytest.raises(TypeError) as theirs:
        bool(jax.numpy_rank_promotion)
    with pytest.raises(TypeError) as ours:
        bool(lamina.numpy_rank_promotion)
    # JAX names its class `State`, Lamina's is `Option`
    assert str(ours.value) == str(theirs.value).replace("'State", "'Option")


# Effects: each case runs the same code against `jax` and `lamina` and compares what it shows.

_NUMBERS = re.compile(r"0x[0-9a-f]+|\b\d+(\.\d+)?(e-?\d+)?\b")


def _normalized(text: str) -> str:
    """`text` without what differs between runs: addresses, ids, timings, file paths."""
    text = re.sub(r'(File )?"?/[^\s"]+\.py"?(:\d+)?( \(\w+\))?', "<path>", text)
    return _NUMBERS.sub("N", text)


def _jaxpr(api: Any, f: Callable[..., Any], *args: Any) -> str:
    return str(api.make_jaxpr(f)(*args))


def _x64_case(api: Any) -> Any:
    f32 = np.ones(2, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        narrowed = _jaxpr(api, lambda x: x.astype(np.float64).sum(), f32)
    return (
        str(api.numpy.arange(3).dtype),
        str(api.numpy.asarray(1.5).dtype),
        _jaxpr(api, lambda x: x * 2 + api.numpy.arange(2), f32),
        narrowed,
        [(w.category.__name__, str(w.message)) for w in caught],
    )


def _matmul_case(api: Any) -> Any:
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    return _jaxpr(api, api.numpy.dot, a, b) + _jaxpr(api, lambda x, y: x @ y, a, b)


def _rank_case(api: Any) -> Any:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _outcome(lambda: (api.numpy.ones(3) + api.numpy.ones((2, 3))).shape)
        traced = _outcome(lambda: _jaxpr(api, lambda x, y: x * y, np.ones(3), np.ones((2, 1))))
    return out, traced, [(w.category.__name__, str(w.message)) for w in caught]


def _dtype_promotion_case(api: Any) -> Any:
    jnp = api.numpy
    return tuple(
        _unordered_dtypes(_outcome(call))
        for call in (
            lambda: str((jnp.ones(3, np.float32) + jnp.ones(3, np.int32)).dtype),
            lambda: str((jnp.ones(3, np.float32) + 1.0).dtype),
            lambda: str((jnp.ones(3, np.float32) + jnp.ones(3, np.float16)).dtype),
            lambda: str(jnp.promote_types(np.int8, np.uint8)),
        )
    )


def _unordered_dtypes(outcome: Any) -> Any:
    """JAX lists the dtypes of a TypePromotionError in a set's order, which varies by process."""
    if not isinstance(outcome, Raised):
        return outcome
    match = re.match(r"Input dtypes \((.*?)\)(.*)", outcome.text, re.DOTALL)
    if match is None:
        return outcome
    return Raised(outcome.kind, str(sorted(match[1].split(", "))) + match[2])


def _nan_case(api: Any) -> Any:
    jnp = api.numpy
    # Not `jnp.asarray(np.nan)`: JAX's debug_nans checks the transfer too ("encountered in
    # stage"); Lamina does not.
    return (
        _outcome(lambda: str(jnp.log(np.float32(-1.0)))),
        _outcome(lambda: str(api.jit(lambda x: jnp.log(x) * 2)(-1.0))),
        _outcome(lambda: str(api.jit(lambda x: x / 0.0)(1.0))),
        _outcome(lambda: str(api.jit(lambda x: x - x)(np.inf))),
    )


def _first_lines(outcome: Any) -> Any:
    """An error's first line (the rest of JAX's debug_nans text is its own re-run's story)."""
    if isinstance(outcome, tuple) and not isinstance(outcome, Raised):
        return tuple(_first_lines(o) for o in outcome)
    if isinstance(outcome, Raised):
        return Raised(outcome.kind, outcome.text.splitlines()[0])
    return outcome


def _disable_jit_case(api: Any) -> Any:
    calls: list[str] = []

    def f(x: Any) -> Any:
        calls.append(type(x).__name__)
        return float(x) + 1.0 if x > 0 else -1.0

    return _outcome(lambda: api.jit(f)(2.0)), _outcome(lambda: api.jit(f)(2.0)), len(calls)


def _prng_case(api: Any) -> Any:
    random = api.random
    key = random.key(0)
    raw = random.PRNGKey(1)
    return (
        key.shape,
        np.asarray(random.key_data(key)).tolist(),
        np.asarray(raw).tolist(),
        np.asarray(random.uniform(raw, (4,))).tolist(),
        np.asarray(random.normal(random.split(key)[1], (3,))).tolist(),
        np.asarray(random.randint(random.fold_in(key, 3), (3,), 0, 100)).tolist(),
        _jaxpr(api, lambda k: random.normal(k, (2,)), raw),
    )


_SETTINGS: list[Any] = [
    ("jax_enable_x64", True, _x64_case),
    pytest.param(
        "jax_enable_x64",
        False,
        _x64_case,
        marks=pytest.mark.xfail(
            strict=True,
            reason="JAX warns that an explicitly requested float64 is narrowed; Lamina does not",
        ),
    ),
    ("jax_default_matmul_precision", "highest", _matmul_case),
    ("jax_default_matmul_precision", "bfloat16", _matmul_case),
    ("jax_default_matmul_precision", "tensorfloat32", _matmul_case),
    ("jax_numpy_rank_promotion", "allow", _rank_case),
    ("jax_numpy_rank_promotion", "warn", _rank_case),
    ("jax_numpy_rank_promotion", "raise", _rank_case),
    ("jax_numpy_dtype_promotion", "standard", _dtype_promotion_case),
    ("jax_numpy_dtype_promotion", "strict", _dtype_promotion_case),
    ("jax_debug_nans", True, lambda api: _first_lines(_nan_case(api))),
    ("jax_debug_infs", True, lambda api: _first_lines(_nan_case(api))),
    ("jax_disable_jit", True, _disable_jit_case),
    ("jax_disable_jit", False, _disable_jit_case),
    ("jax_default_prng_impl", "rbg", _prng_case),
    ("jax_default_prng_impl", "unsafe_rbg", _prng_case),
    ("jax_default_prng_impl", "threefry2x32", _prng_case),
    ("jax_threefry_partitionable", False, _prng_case),
    ("jax_threefry_partitionable", True, _prng_case),
]


def _setting_id(value: Any) -> str:
    return "" if callable(value) else str(value)


@contextlib.contextmanager
def _globally(api: Any, name: str, value: Any) -> Iterator[None]:
    before = api.config.read(name) if api is lamina else api.config.values[name]
    api.config.update(name, value)
    try:
        yield
    finally:
        api.config.update(name, before)


def _scoped(api: Any, name: str, value: Any) -> Any:
    """JAX's top-level context manager of option `name` (`jax.enable_x64(True)`)."""
    return getattr(api, name.removeprefix("jax_"))(value)


@pytest.mark.parametrize("form", ["update", "scope"])
@pytest.mark.parametrize(("name", "value", "case"), _SETTINGS, ids=_setting_id)
def test_option_has_jax_effect(
    name: str, value: Any, case: Callable[[Any], Any], form: str
) -> None:
    setting = _globally if form == "update" else _scoped
    # Warnings are given as functions trace: a trace cached by an earlier case gives none.
    jax.clear_caches()  # type: ignore[no-untyped-call]  # JAX does not annotate it
    lamina.clear_caches()
    with setting(jax, name, value):
        theirs = case(jax)
    with setting(lamina, name, value):
        ours = case(lamina)
    assert ours == theirs


def test_option_set_by_lamina_config_scope_has_jax_effect() -> None:
    with jax.numpy_rank_promotion("raise"), jax.enable_x64(True):
        theirs = _rank_case(jax), _x64_case(jax)
    with lamina.config(jax_numpy_rank_promotion="raise", jax_enable_x64=True):
        ours = _rank_case(lamina), _x64_case(lamina)
    assert ours == theirs


def test_context_manager_decorates_a_function_as_jax() -> None:
    def make(api: Any) -> Callable[[], Any]:
        def added() -> Any:
            return _rank_case(api)

        decorated: Callable[[], Any] = api.numpy_rank_promotion("raise")(added)
        return decorated

    assert make(lamina)() == make(jax)()
    assert lamina.config.jax_numpy_rank_promotion == "allow"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("jax_default_prng_impl", "threefry4x32"),
        ("jax_default_prng_impl", "philox2x32"),
        ("jax_default_prng_impl", "philox4x32"),
        ("jax_default_matmul_precision", "F32_F32_F32"),
        ("jax_default_matmul_precision", "BF16_BF16_F32_X3"),
    ],
)
def test_value_lamina_lacks_is_refused_by_name(name: str, value: str) -> None:
    assert not isinstance(_update_outcome(jax, name, value), Raised)
    assert _refused_by_name(_update_outcome(lamina, name, value), name)


def test_disable_jit_function_as_jax() -> None:
    def run(api: Any) -> Any:
        with api.disable_jit():
            return _disable_jit_case(api)

    assert run(lamina) == run(jax)


def _leak(api: Any) -> Any:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return x + 1

    return api.jit(f)(1.0)


@pytest.mark.parametrize("form", ["checking_leaks", "check_tracer_leaks", "update"])
def test_leaked_tracer_is_reported_as_jax(form: str) -> None:
    def run(api: Any) -> Any:
        if form == "checking_leaks":
            scope = api.checking_leaks()
        elif form == "check_tracer_leaks":
            scope = api.check_tracer_leaks(True)
        else:
            scope = _globally(api, "jax_check_tracer_leaks", True)
        with scope:
            return _outcome(lambda: _leak(api))

    theirs, ours = run(jax), run(lamina)
    assert isinstance(theirs, Raised) and isinstance(ours, Raised)
    assert ours.kind == theirs.kind
    # The chain of referrers, up to the user's function; beyond it, each library's own objects.
    assert _up_to_user_function(ours.text) == _up_to_user_function(theirs.text)


def _up_to_user_function(text: str) -> str:
    end = text.index("closed-over variable leaked")
    return _normalized(text[:end])


@pytest.mark.parametrize("transform", ["jit_vmap", "vmap_jit", "vmap_grad"])
def test_no_leak_is_reported_where_none_is_as_jax(transform: str) -> None:
    """A checkified vmapped function under leak checking: nothing leaks, in JAX or in Lamina
    (Lamina's vmap once reported its last output, still named by a loop variable)."""

    def run(api: Any) -> Any:
        checkify: Any = importlib.import_module(f"{api.__name__}.experimental.checkify")

        def f(x: Any) -> Any:
            checkify.check(api.numpy.all(x > 0), "must be positive")
            return api.numpy.log(x), x * 2

        wrap: Callable[[Any], Any] = {
            "jit_vmap": lambda g: api.jit(api.vmap(g)),
            "vmap_jit": lambda g: api.vmap(api.jit(g)),
            "vmap_grad": lambda g: api.vmap(api.grad(lambda x: g(x)[0].sum())),
        }[transform]
        with api.checking_leaks():
            err, out = checkify.checkify(wrap(f))(np.full((3, 2), 2.0, np.float32))
        return err.get(), api.tree.map(np.asarray, out)

    (their_err, theirs), (our_err, ours) = run(jax), run(lamina)
    assert their_err is None and our_err is None
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_leak_checking_is_off_by_default_as_jax() -> None:
    assert float(_leak(lamina)) == float(_leak(jax)) == 2.0


def _compile_logs(api: Any, caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG):

        def logged_function(x: Any) -> Any:
            return x * 3

        api.jit(logged_function)(np.float32(2.0)).block_until_ready()
    return [
        (r.name, r.levelno, _normalized(r.getMessage()))
        for r in caplog.records
        # JAX's persistent-cache messages (`jax._src.compiler`) are about JAX's cache.
        if r.name in ("jax._src.dispatch", "jax._src.interpreters.pxla")
        and "logged_function" in r.getMessage()
    ]


@pytest.mark.parametrize("value", [True, False])
def test_log_compiles_logs_as_jax(value: bool, caplog: pytest.LogCaptureFixture) -> None:
    with jax.log_compiles(value):
        theirs = _compile_logs(jax, caplog)
    with lamina.log_compiles(value):
        ours = _compile_logs(lamina, caplog)
    assert theirs
    assert ours == theirs


def _failing_call(api: Any) -> Any:
    def f(x: Any) -> Any:
        return x.no_such_attribute

    try:
        api.jit(f)(1.0)
    except AttributeError as error:
        return error
    raise AssertionError("no error")


@pytest.mark.parametrize("mode", ["off", "tracebackhide", "remove_frames", "quiet_remove_frames"])
def test_traceback_filtering_as_jax(mode: str) -> None:
    def shown(api: Any) -> Any:
        with _globally(api, "jax_traceback_filtering", mode):
            error = _failing_call(api)
        # The cause filtering attaches (JAX's own AttributeError cause is not compared).
        cause = error.__cause__ if mode == "remove_frames" else None
        return (
            str(error),
            getattr(error, "__notes__", None),
            type(cause).__name__ if cause is not None else None,
            _normalized(str(cause)) if cause is not None else None,
        )

    assert shown(lamina) == shown(jax)


def _enter(scope: Any) -> None:
    with scope:
        pass


def test_default_device_as_jax() -> None:
    def placed(api: Any) -> Any:
        device = api.devices()[1]
        with api.default_device(device):
            inside = api.numpy.ones(2).devices()
            jitted = api.jit(lambda x: x + 1)(np.ones(2)).devices()
        outside = api.numpy.ones(2).devices()
        with api.default_device("cpu"):
            by_name = api.numpy.ones(2).devices()
        return inside, jitted, outside, by_name, _outcome(lambda: _enter(api.default_device("no")))

    theirs, ours = placed(jax), placed(lamina)
    assert ours[:4] == theirs[:4]
    assert isinstance(theirs[4], Raised)
    assert ours[4] == theirs[4]


def test_platform_options_read_as_jax() -> None:
    for name in ("jax_platforms", "jax_platform_name"):
        assert lamina.config.read(name) == jax.config.values[name]
    assert lamina.default_backend() == jax.default_backend()
    assert lamina.devices() == jax.devices()


def test_platform_name_update_is_passed_to_jax() -> None:
    with _globally(lamina, "jax_platform_name", "cpu"):
        assert jax.config.values["jax_platform_name"] == "cpu"
        assert lamina.devices()[0].platform == "cpu"
    assert jax.config.values["jax_platform_name"] == ""


@pytest.mark.parametrize("level", ["disallow", "log"])
def test_transfer_guard_as_jax(level: str, caplog: pytest.LogCaptureFixture) -> None:
    def transfer(api: Any) -> Any:
        caplog.clear()
        with api.transfer_guard(level):
            implicit = _outcome(lambda: float((api.numpy.ones(3) + np.ones(3)).sum()))
            explicit = _outcome(lambda: float(api.device_put(np.ones(3)).sum()))
            to_host = _outcome(lambda: np.asarray(api.numpy.ones(2)).tolist())
        return implicit, explicit, to_host, [_normalized(r.getMessage()) for r in caplog.records]

    with caplog.at_level(logging.WARNING):
        theirs, ours = transfer(jax), transfer(lamina)
    assert ours == theirs


@pytest.mark.parametrize("direction", ["host_to_device", "device_to_host"])
def test_directional_transfer_guard_as_jax(direction: str) -> None:
    def transfer(api: Any) -> Any:
        with getattr(api, f"transfer_guard_{direction}")("disallow"):
            to_device = _outcome(lambda: float((api.numpy.ones(3) + np.ones(3)).sum()))
            to_host = _outcome(lambda: np.asarray(api.numpy.ones(2) * 2).tolist())
        return to_device, to_host

    assert transfer(lamina) == transfer(jax)


def test_no_tracing_as_jax() -> None:
    def traced(api: Any) -> Any:
        f = api.jit(lambda x: x * 2)
        f(1.0)
        with api.no_tracing(True):
            return _outcome(lambda: float(f(3.0))), _outcome(lambda: float(f(np.ones(2))[0]))

    ours, theirs = traced(lamina), traced(jax)
    assert ours[0] == theirs[0] == 6.0
    assert isinstance(theirs[1], Raised)
    assert ours[1].kind == theirs[1].kind
    assert _normalized(ours[1].text) == _normalized(theirs[1].text)
