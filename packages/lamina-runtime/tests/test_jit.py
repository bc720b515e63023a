"""`jit` on XLA: results, caches, constants passed from device buffers, stages and errors."""

from __future__ import annotations

import functools
import logging
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_runtime import Array

f32 = np.float32


def jitted(f: Any) -> lr.JitFunction:
    """The `JitFunction` behind what `lr.jit` returned."""
    found = lr.jit_function_of(f)
    assert found is not None
    return found


def test_jit_computes_and_returns_arrays() -> None:
    f = lr.jit(lambda x, y: {"s": x + y, "p": x * y})
    out = f(np.arange(4, dtype=f32), f32(2))
    assert isinstance(out["s"], Array)
    np.testing.assert_allclose(np.asarray(out["s"]), np.arange(4) + 2)
    np.testing.assert_allclose(np.asarray(out["p"]), np.arange(4) * 2)


def test_jit_traces_and_compiles_once_per_signature() -> None:
    calls = []

    def f(x: Any) -> Any:
        calls.append(1)
        return jnp.sin(x) * 2.0

    g = lr.jit(f)
    before = lr.runtime().compilations
    for _ in range(3):
        g(np.ones(5, f32))
    assert len(calls) == 1
    g(np.ones(6, f32))
    assert len(calls) == 2
    assert lr.runtime().compilations - before <= 2


def test_static_arguments() -> None:
    f = lr.jit(lambda n, x: x * n, static_argnums=0)
    np.testing.assert_allclose(np.asarray(f(3, np.ones(2, f32))), [3.0, 3.0])
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f([1], np.ones(2, f32))


def test_seed_example_runs_with_const_args() -> None:
    a = jnp.ones((16,), dtype=np.float32)

    @lr.jit
    def f(x: Any) -> Any:
        return x + a + np.full((16,), 42.0) + jnp.full((16,), 142.0)

    x = np.arange(16, dtype=f32)
    np.testing.assert_allclose(np.asarray(f(x)), x + 1 + 42 + 142)
    lowered = f.lower(x)
    assert lowered.const_args[0] is a  # the device array itself, never copied to the host
    assert "{jax.const = true}" in lowered.as_text()


def test_device_constant_is_passed_by_reference() -> None:
    const = lr.device_put(np.arange(16, dtype=f32))
    compiled = lr.jit(lambda x: x + const).lower(np.ones(16, f32)).compile()
    assert compiled._const_bufs[0] is const.jax_array


def test_new_closure_over_new_constant_reuses_the_executable() -> None:
    def make(value: float) -> Any:
        const = np.full((64,), value, f32)
        return lr.jit(lambda x: x * const)

    make(1.0)(np.ones(64, f32))
    before = lr.runtime().compilations
    out = make(3.0)(np.ones(64, f32))
    assert lr.runtime().compilations == before
    np.testing.assert_allclose(np.asarray(out), 3.0)


def test_nested_jit_runs_and_prints_as_jax() -> None:
    def func12(arg: Any) -> Any:
        @lr.jit
        def inner(x: Any) -> Any:
            return x + arg * jnp.ones(1)

        return arg + inner(arg - 2.0)

    np.testing.assert_allclose(np.asarray(lr.jit(func12)(3.0)), [7.0])
    assert "jit[\n      name=inner" in str(lc.make_jaxpr(func12)(1.0))


def test_donation_aliases_input_and_output() -> None:
    f = lr.jit(lambda x: x + 1.0, donate_argnums=0)
    x = lr.device_put(np.zeros(8, f32))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), 1.0)
    assert x.is_deleted()


def test_explain_cache_misses(caplog: pytest.LogCaptureFixture) -> None:
    f = lr.jit(lambda x: x * 2.0)
    with lc.config(jax_explain_cache_misses=True), caplog.at_level(logging.WARNING, "lamina.jit"):
        f(np.ones(3, f32))
        f(np.ones(4, f32))
        f(1.0)
    text = caplog.text
    assert "argument 0 changed type from f32[3] to f32[4]" in text
    assert "argument 0 changed" in text


def test_stages_api() -> None:
    f = lr.jit(lambda x, y: x * y)
    traced = f.trace(np.ones(3, f32), f32(2))
    assert str(traced.jaxpr) == "{ lambda ; a:f32[3] b:f32[]. let c:f32[3] = mul a b in (c,) }"
    lowered = traced.lower()
    text = lowered.as_text()
    assert text.startswith("module @jit_")
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(np.ones(3, f32), f32(2))), 2.0)
    assert compiled.cost_analysis() is not None
    with pytest.raises(
        TypeError, match=r"Argument 'x' compiled with float32\[3\] and called with float32\[4\]"
    ):
        compiled(np.ones(4, f32), f32(2))


def test_lower_accepts_shape_dtype_structs() -> None:
    lowered = lr.jit(jnp.sin).lower(lc.ShapeDtypeStruct((5,), np.float32))
    assert "tensor<5xf32>" in lowered.as_text()


def test_wrong_device_inputs_are_moved_not_crashing() -> None:
    code = textwrap.dedent(
        """
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import numpy as np
        import lamina_runtime as lr
        devices = lr.devices()
        x = lr.device_put(np.arange(4, dtype=np.float32), devices[3])
        y = lr.device_put(np.arange(4, dtype=np.float32), devices[0])
        f = lr.jit(lambda v: v * 2.0)
        # Repeated calls too (C++ dispatch), before and after one with a placed input.
        outs = [f(x), f(x), f(y), f(y), f(x)]
        print({tuple(np.asarray(out).tolist()) for out in outs})
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "{(0.0, 2.0, 4.0, 6.0)}"


def test_static_and_donated_arguments_by_name_or_position() -> None:
    f = lr.jit(lambda x, n: x * n, static_argnames="n")
    np.testing.assert_allclose(np.asarray(f(np.ones(2, f32), 3)), [3.0, 3.0])
    np.testing.assert_allclose(np.asarray(f(np.ones(2, f32), n=4)), [4.0, 4.0])
    g = lr.jit(lambda x, n: x * n, static_argnums=1)
    np.testing.assert_allclose(np.asarray(g(np.ones(2, f32), n=5)), [5.0, 5.0])
    h = lr.jit(lambda x, y: x + y, donate_argnames="x")
    assert jitted(h).donate_argnums == (0,)
    x = lr.device_put(np.zeros(4, f32))
    h(x, np.ones(4, f32))
    assert x.is_deleted()


def test_unused_arguments_are_not_passed_unless_kept() -> None:
    f = lr.jit(lambda x, y, z: x * 2.0 + z)
    args = (np.ones(3, f32), np.ones(5, f32), f32(1))
    np.testing.assert_allclose(np.asarray(f(*args)), 3.0)
    (_, call), *_ = jitted(f)._calls.values()
    assert len(call.executable.in_avals) == 2
    kept = lr.jit(lambda x, y, z: x * 2.0 + z, keep_unused=True)
    np.testing.assert_allclose(np.asarray(kept(*args)), 3.0)
    (_, kept_call), *_ = jitted(kept)._calls.values()
    assert len(kept_call.executable.in_avals) == 3


def test_dead_equations_are_not_compiled() -> None:
    text = lr.jit(lambda x: (x, jnp.sin(x))[0] + 1.0).lower(np.ones(2, f32)).as_text()
    assert "stablehlo.sine" not in text


def test_programs_sharing_compiled_code_keep_their_own_weak_types() -> None:
    # x + 1 on a weak int32 and on a strong int32 compile to the same module.
    weak = lr.jit(lambda x: x + 1)(2)
    strong = lr.jit(lambda x: x + 1)(np.int32(2))
    assert (weak.aval.weak_type, strong.aval.weak_type) == (True, False)
    assert repr(strong) == "Array(3, dtype=int32)"


def test_compiler_options_reach_xla_and_the_cache_key() -> None:
    no_ynn = {"xla_cpu_experimental_ynn_fusion_type": ""}
    x = np.ones((8, 8), f32)
    plain = lr.jit(lambda a: a @ a)
    tuned = lr.jit(lambda a: a @ a, compiler_options=no_ynn)
    np.testing.assert_allclose(np.asarray(tuned(x)), np.asarray(plain(x)))

    def call(f: Any) -> Any:
        return next(iter(jitted(f)._calls.values()))[1]

    assert call(tuned).executable.fingerprint != call(plain).executable.fingerprint
    compiled = lr.jit(lambda a: a @ a).lower(x).compile(compiler_options=no_ynn)
    assert compiled._executable.fingerprint == call(tuned).executable.fingerprint
    with pytest.raises(lr.CompileError, match="No such compile option: 'xla_no_such_option'"):
        lr.jit(lambda a: a + 1.0, compiler_options={"xla_no_such_option": 1})(x)
    with pytest.raises(TypeError, match="compiler_options maps XLA option names"):
        lr.jit(lambda a: a + 2.0, compiler_options={"xla_cpu_enable_fast_math": [1]})(x)


def _jax_error(call: Any) -> str:
    try:
        call()
    except TypeError as err:
        return str(err)
    raise AssertionError("no TypeError")


def test_a_non_array_argument_is_named_as_jax_names_it() -> None:
    import jax

    def f(x: Any, d: Any) -> Any:
        return x

    for args in [(1.0, {"a": [1, "b"]}), ("s", None), (1.0, object())]:
        want = _jax_error(functools.partial(jax.jit(f), *args))
        assert _jax_error(functools.partial(lr.jit(f), *args)) == want
    not_an_array: Any = "a"
    lamina_sin: Any = jnp.sin
    jax_sin: Any = jax.numpy.sin
    mine = _jax_error(functools.partial(lamina_sin, not_an_array))
    theirs = _jax_error(functools.partial(jax_sin, not_an_array))
    assert mine == theirs.replace(repr(jax_sin.__wrapped__), repr(lamina_sin.__wrapped__))


def test_closing_over_a_128mb_constant_adds_no_copy_of_it() -> None:
    # A fresh process, so its peak RSS (VmHWM) says what this function cost.
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina_runtime as lr
        from lamina_core import lax, numpy as jnp

        def peak_mb():
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024

        big = jnp.ones(32 * 1024 * 1024, np.float32)  # 128 MB, made on the device
        x = lr.device_put(np.float32(1.0))
        lr.jit(lambda v: v * 3.0)(x).block_until_ready()  # the compiler is loaded and warm
        before = peak_mb()
        out = lr.jit(lambda v: v * 2.0 + lax.slice(big, (0,), (1,)))(x).block_until_ready()
        print(peak_mb() - before, float(out[0]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    growth, value = map(float, proc.stdout.split())
    assert value == 3.0
    assert growth < 10.0, f"peak RSS grew by {growth:.1f} MB"
