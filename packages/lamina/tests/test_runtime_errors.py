"""Errors raised while a compiled program runs (issue 41, item 1): a host callback's exception
reaches the user as JAX's `JaxRuntimeError`, chained as its `__cause__` (JAX 0.10.2 chains
nothing: its message holds the formatted traceback, which Lamina's keeps); a buffer the
failed call consumed (a donated argument, a Ref's value) says so when next used.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina_runtime as lr

pytestmark = pytest.mark.oracle


class Boom(ValueError):
    pass


def _bad(*args: Any) -> Any:
    raise Boom("boom")


def _error(call: Callable[[], Any]) -> BaseException:
    try:
        call()
    except Exception as err:
        return err
    raise AssertionError("no error raised")


def _callback(m: Any, kind: str, x: Any) -> Any:
    """`x + 1` after calling `_bad` on `x` with the `kind` of callback of module `m`."""
    out = m.ShapeDtypeStruct((4,), np.float32)
    if kind == "debug":
        m.debug.callback(_bad, x)
        return x + 1
    if kind == "pure":
        return m.pure_callback(_bad, out, x) + 1
    return m.experimental.io_callback(_bad, out, x) + 1


KINDS = ["debug", "pure", "io"]


def _jax() -> Any:
    import jax
    import jax.experimental  # the attribute `experimental`

    return jax


def _check_chained(ours: BaseException, theirs: BaseException) -> None:
    assert type(ours) is type(theirs) is lr.JaxRuntimeError
    assert str(ours).startswith("INTERNAL: CpuCallback error calling callback")
    assert str(ours).endswith("Boom: boom") and str(theirs).endswith("Boom: boom")
    assert theirs.__cause__ is None  # JAX keeps only the text
    cause = ours.__cause__
    assert type(cause) is Boom and str(cause) == "boom"
    frames = traceback.extract_tb(cause.__traceback__)
    assert frames[-1].name == "_bad"  # the callback's own traceback


@pytest.mark.parametrize("kind", ["pure", "io"])
def test_eager_callback_failure_is_jaxs_error_with_the_exception_as_cause(kind: str) -> None:
    jax = _jax()
    theirs = _error(lambda: _callback(jax, kind, jax.numpy.ones(4)))
    ours = _error(lambda: _callback(lamina, kind, lamina.numpy.ones(4)))
    _check_chained(ours, theirs)


def test_eager_debug_callback_raises_the_exception_itself_as_jax() -> None:
    jax = _jax()
    theirs = _error(lambda: _callback(jax, "debug", jax.numpy.ones(4)))
    ours = _error(lambda: _callback(lamina, "debug", lamina.numpy.ones(4)))
    assert type(ours) is type(theirs) is Boom


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("donate", [False, True])
def test_jitted_callback_failure_is_jaxs_error_with_the_exception_as_cause(
    kind: str, donate: bool
) -> None:
    def run(m: Any) -> tuple[BaseException, Any]:
        x = m.numpy.ones(4)
        f = m.jit(lambda x: _callback(m, kind, x), donate_argnums=(0,) if donate else ())
        return _error(lambda: f(x)), x

    jax = _jax()
    theirs, their_x = run(jax)
    ours, our_x = run(lamina)
    _check_chained(ours, theirs)
    assert our_x.is_deleted() == their_x.is_deleted() == donate


def test_a_callback_failing_again_from_a_warm_jit_is_still_chained() -> None:
    calls = []

    def sometimes(x: Any) -> None:
        calls.append(x)
        if len(calls) > 2:
            raise Boom("boom")

    f = lamina.jit(lambda x: (lamina.debug.callback(sometimes, x), x + 1)[1])
    f(lamina.numpy.ones(4))
    f(lamina.numpy.ones(4))  # what C++ dispatch would repeat
    ours = _error(lambda: f(lamina.numpy.ones(4)))
    assert type(ours) is lr.JaxRuntimeError and type(ours.__cause__) is Boom


def _donated_to_failed_call(m: Any) -> Any:
    x = m.numpy.ones(4)
    f = m.jit(lambda x: _callback(m, "debug", x), donate_argnums=0)
    _error(lambda: f(x))
    return x


def _ref_of_failed_call(m: Any) -> Any:
    r = m.new_ref(m.numpy.ones(4))

    def body(r: Any) -> None:
        m.debug.callback(_bad, r[...])
        r[...] += 1

    f = m.jit(body)
    assert type(_error(lambda: f(r))).__name__ == "JaxRuntimeError"
    return r


USES: dict[str, Callable[[Any, Any], Any]] = {
    "added": lambda m, x: x + 1,
    "sin": lambda m, x: m.numpy.sin(x),
    "jitted": lambda m, x: m.jit(lambda x: x * 3)(x),
    "to_host": lambda m, x: np.asarray(x),
    "repr": lambda m, x: repr(x),
}
REF_USES: dict[str, Callable[[Any, Any], Any]] = {
    "read": lambda m, r: r[...],
    "jitted": lambda m, r: m.jit(lambda r: r[...] * 2)(r),
    # JAX's `freeze` fails at once; Lamina's returns the deleted array, failing when used.
    "frozen": lambda m, r: m.freeze(r) + 1,
    "repr": lambda m, r: repr(r),
}
_SAYS = "Array has been deleted with shape=float32[4]: it was donated to a call that failed: "


@pytest.mark.parametrize("use", sorted(USES))
def test_a_donated_argument_of_a_failed_call_says_so_when_used(use: str) -> None:
    jax = _jax()
    for _ in range(3):  # eager `+` warm in C++ dispatch: JAX gives XLA's ValueError there
        lamina.numpy.ones(4) + 1
    theirs = _error(lambda: USES[use](jax, _donated_to_failed_call(jax)))
    ours = _error(lambda: USES[use](lamina, _donated_to_failed_call(lamina)))
    assert "deleted" in str(theirs)
    assert type(ours) is RuntimeError
    assert str(ours) == _SAYS + "Boom: boom"
    assert type(ours.__cause__) is Boom


@pytest.mark.parametrize("use", sorted(REF_USES))
def test_a_ref_consumed_by_a_failed_call_says_so_when_used(use: str) -> None:
    jax = _jax()
    theirs = _error(lambda: REF_USES[use](jax, _ref_of_failed_call(jax)))
    ours = _error(lambda: REF_USES[use](lamina, _ref_of_failed_call(lamina)))
    assert type(theirs) is RuntimeError and "Array has been deleted" in str(theirs)
    assert type(ours) is RuntimeError
    assert str(ours) == _SAYS + "Boom: boom"


def test_a_ref_the_failed_call_did_not_take_keeps_its_value_as_jax() -> None:
    def run(m: Any) -> Any:
        r = m.new_ref(m.numpy.arange(4.0))
        other = m.new_ref(m.numpy.ones(4))

        def body(other: Any, x: Any) -> Any:
            other[...] += 1
            return _callback(m, "pure", x)

        f = m.jit(body)
        assert type(_error(lambda: f(other, m.numpy.ones(4)))).__name__ == "JaxRuntimeError"
        return np.asarray(r[...])

    np.testing.assert_array_equal(run(lamina), run(_jax()))


def test_a_deleted_argument_fails_before_the_call_and_keeps_the_ref_as_jax() -> None:
    def run(m: Any) -> tuple[BaseException, Any]:
        r = m.new_ref(m.numpy.arange(4.0))
        x = m.numpy.ones(4)
        x.delete()

        def body(r: Any, x: Any) -> None:
            r[...] += x

        f = m.jit(body)
        return _error(lambda: f(r, x)), r

    theirs, their_r = run(_jax())
    ours, our_r = run(lamina)
    assert type(ours) is type(theirs) is RuntimeError
    assert str(ours) == str(theirs) == "Array has been deleted with shape=float32[4]."
    np.testing.assert_array_equal(np.asarray(our_r[...]), np.arange(4.0))
    np.testing.assert_array_equal(np.asarray(their_r[...]), np.arange(4.0))


def test_a_plain_deleted_array_keeps_jaxs_message() -> None:
    x = lamina.numpy.ones(4)
    x.delete()
    for _ in range(3):
        lamina.numpy.ones(4) * 2
    ours = _error(lambda: x * 2)
    assert type(ours) is RuntimeError
    assert str(ours) == "Array has been deleted with shape=float32[4]."


# ---- the warm C++ dispatch path --------------------------------------------------------------


def _warm(m: Any, f: Any, *args: Any) -> None:
    for _ in range(3):  # C++ dispatch repeats the call from the second on
        f(*args)


def test_a_donated_argument_of_a_failed_call_says_so_in_a_warm_jit() -> None:
    def run(m: Any) -> tuple[BaseException, Any]:
        g = m.jit(lambda x: x * 3)
        _warm(m, g, m.numpy.ones(4))
        x = _donated_to_failed_call(m)
        return _error(lambda: g(x)), g

    theirs, _ = run(_jax())
    ours, g = run(lamina)
    # JAX's C++ dispatch hands the consumed buffer to XLA, which rejects it.
    assert type(theirs) is ValueError and "Buffer has been deleted or donated" in str(theirs)
    assert type(ours) is RuntimeError
    assert str(ours) == _SAYS + "Boom: boom"
    assert type(ours.__cause__) is Boom
    jitted = lr.jit_function_of(g)
    assert jitted is not None and jitted.dispatch_misses == 2  # C++ asked Python: no XLA error


def test_a_ref_consumed_by_a_failed_call_says_so_in_a_warm_jit() -> None:
    def run(m: Any) -> BaseException:
        g = m.jit(lambda r: r[...] * 2)
        _warm(m, g, m.new_ref(m.numpy.ones(4)))
        r = _ref_of_failed_call(m)
        return _error(lambda: g(r))

    theirs = run(_jax())
    ours = run(lamina)
    assert type(theirs) is RuntimeError and "Array has been deleted" in str(theirs)
    assert type(ours) is RuntimeError
    assert str(ours) == _SAYS + "Boom: boom"


def test_a_call_that_succeeds_after_a_failed_one_is_unchanged() -> None:
    g = lamina.jit(lambda x: x * 3)
    _warm(lamina, g, lamina.numpy.ones(4))
    _donated_to_failed_call(lamina)
    np.testing.assert_array_equal(np.asarray(g(lamina.numpy.ones(4))), np.full(4, 3.0))


# ---- XLA's own runtime errors: out of memory ------------------------------------------------

_HUGE = 2**40  # float32 elements: 4 TiB, more than any machine this runs on


def _refuses_huge_allocations() -> bool:
    """Whether the kernel refuses a 4 TiB allocation outright (heuristic or strict overcommit),
    so that asking for one fails at once instead of exhausting the machine."""
    try:
        with open("/proc/sys/vm/overcommit_memory") as f:
            return f.read().strip() in ("0", "2")
    except OSError:
        return False


needs_refusal = pytest.mark.skipif(
    not _refuses_huge_allocations(), reason="the kernel might grant a 4 TiB allocation"
)
_OOM = "RESOURCE_EXHAUSTED: Out of memory allocating 4398046511104 bytes."


@needs_refusal
def test_out_of_memory_at_run_time_is_jaxs_error() -> None:
    def run(m: Any) -> tuple[BaseException, BaseException]:
        f = m.jit(lambda: m.numpy.ones((_HUGE,), np.float32))
        f.lower().compile()  # compiles: the allocation fails when it runs
        return _error(f), _error(f)

    theirs = run(_jax())
    ours = run(lamina)
    for mine, their in zip(ours, theirs, strict=True):
        assert type(mine) is type(their) is lr.JaxRuntimeError
        assert str(mine) == str(their) == _OOM
        assert mine.__cause__ is their.__cause__ is None


@needs_refusal
def test_a_donated_argument_and_a_ref_of_an_out_of_memory_call_say_so() -> None:
    def run(m: Any) -> tuple[Any, Any, Any]:
        x = m.numpy.ones(4)
        f = m.jit(lambda x: (x + 1, m.numpy.ones((_HUGE,), np.float32)), donate_argnums=0)
        assert type(_error(lambda: f(x))) is lr.JaxRuntimeError
        r = m.new_ref(m.numpy.ones(4))

        def body(r: Any) -> Any:
            r[...] += 1
            return m.numpy.ones((_HUGE,), np.float32)

        assert type(_error(lambda: m.jit(body)(r))) is lr.JaxRuntimeError
        g = m.jit(lambda x: x * 3)
        _warm(m, g, m.numpy.ones(4))
        return x, r, g

    their_x, _, _ = run(_jax())
    our_x, our_r, our_g = run(lamina)
    assert their_x.is_deleted() and our_x.is_deleted()
    says = "Array has been deleted with shape=float32[4]: it was donated to a call that failed: "
    uses: list[Callable[[], Any]] = [
        lambda: our_x + 1,
        lambda: np.asarray(our_x),
        lambda: our_g(our_x),  # C++ dispatch, warm
        lambda: our_r[...],
        lambda: our_g(our_r[...]),
    ]
    for use in uses:
        err = _error(use)
        assert type(err) is RuntimeError
        assert str(err) == says + "JaxRuntimeError: " + _OOM
        assert type(err.__cause__) is lr.JaxRuntimeError
    assert type(_error(lambda: their_x + 1)) is RuntimeError  # JAX: "Array has been deleted"


# ---- what a failed call leaves of a Ref (docs/refs.md, "When a call fails") ----------------


def test_a_ref_only_read_by_a_failed_call_is_consumed_too_as_jax() -> None:
    def run(m: Any) -> BaseException:
        r = m.new_ref(m.numpy.arange(4.0))

        def reads(r: Any) -> Any:
            m.debug.callback(_bad, r[...])
            return r[...] * 2

        assert type(_error(lambda: m.jit(reads)(r))).__name__ == "JaxRuntimeError"
        return _error(lambda: r[...])

    theirs = run(_jax())
    ours = run(lamina)
    assert type(theirs) is type(ours) is RuntimeError
    assert str(theirs) == "Array has been deleted with shape=float32[4]."
    assert str(ours) == _SAYS + "Boom: boom"


def test_eagerly_a_ref_keeps_what_the_steps_before_the_failure_wrote_as_jax() -> None:
    def run(m: Any) -> Any:
        r = m.new_ref(m.numpy.arange(4.0))

        def steps(r: Any) -> None:
            r[...] += 1
            m.debug.callback(_bad, r[...])
            r[...] += 10  # never runs

        assert type(_error(lambda: steps(r))) is Boom
        return np.asarray(r[...])

    ours, theirs = run(lamina), run(_jax())
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, np.arange(4.0) + 1)
