"""The AOT stages (`jax.stages`, issue 36 item 1) against JAX 0.10.2: every public attribute of
`Traced`, `Lowered` and `Compiled` (values, types and printed text), `jit(f).trace` and
`.eval_shape`, unused arguments pruned as JAX prunes them, the HLO dialect, and the errors a
`Compiled` raises for a wrong tree, wrong types and tracers. Shardings over 8 devices are in
`stages_multidevice_cases.py`, run in a process of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np
import pytest

import lamina
import lamina.aot
import lamina.stages


def f(x: Any, y: Any, z: Any = None) -> Any:
    return {"a": x * 2, "b": (x + 1.0, y * 3)}


def unused(x: Any, y: Any, z: Any) -> Any:
    return x + z, 2 * z


def _args(api: Any) -> tuple[Any, ...]:
    return (api.numpy.ones(3, np.float32), 2.0)


def _stages(api: Any, fun: Callable[..., Any], args: tuple[Any, ...], **options: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Some donated buffers were not usable"
        traced = api.jit(fun, **options).trace(*args)
        lowered = traced.lower()
        return traced, lowered, lowered.compile()


STAGE_ATTRIBUTES = {
    "traced": ("fun_name", "in_avals", "in_tree", "out_tree", "out_info", "out_avals",
               "args_info", "donate_argnums", "jaxpr"),
    "lowered": ("in_avals", "in_tree", "out_tree", "out_info", "args_info", "donate_argnums"),
    "compiled": ("in_avals", "in_tree", "out_tree", "out_info", "args_info", "donate_argnums",
                 "input_shardings", "output_shardings", "input_formats", "output_formats"),
}  # fmt: skip

CASES: dict[str, tuple[Callable[..., Any], Callable[[Any], tuple[Any, ...]], dict[str, Any]]] = {
    "pytree out, donated": (f, _args, {"donate_argnums": (0,)}),
    "unused arguments pruned": (
        unused,
        lambda api: (api.numpy.ones(3), api.numpy.ones(2, np.int32), 3.0),
        {"donate_argnums": (1,)},
    ),
    "unused arguments kept": (
        unused,
        lambda api: (api.numpy.ones(3), api.numpy.ones(2, np.int32), 3.0),
        {"keep_unused": True},
    ),
    "keyword arguments": (
        lambda x, *, scale: x * scale,
        lambda api: (api.numpy.ones((2, 2)),),
        {},
    ),
}


def _described(case: str) -> dict[str, str]:
    fun, make_args, options = CASES[case]
    out: dict[str, str] = {}
    for api in (jax, lamina):
        args = make_args(api)
        kwargs = {"scale": 2.0} if case == "keyword arguments" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = api.jit(fun, **options).trace(*args, **kwargs)
            lowered = traced.lower()
            compiled = lowered.compile()
        stages = {"traced": traced, "lowered": lowered, "compiled": compiled}
        text = [
            f"{name}.{attr} = {getattr(stage, attr)!r}"
            for name, stage in stages.items()
            for attr in STAGE_ATTRIBUTES[name]
        ]
        text.append(lowered.as_text())
        text.append(lowered.as_text("stablehlo"))
        text.append(lowered.as_text(dialect="hlo"))
        text.append(lowered.compiler_ir("hlo").as_hlo_text())
        text.append(repr(sorted(lowered.cost_analysis())))
        outs = compiled(*args, **kwargs)
        text.append(repr(jax.tree_util.tree_map(lambda v: np.asarray(v).tolist(), outs)))
        out[api.__name__] = "\n".join(text)
    return out


@pytest.mark.oracle
@pytest.mark.parametrize("case", list(CASES))
def test_every_stage_attribute_prints_as_jax(case: str) -> None:
    described = _described(case)
    assert described["lamina"] == described["jax"]


@pytest.mark.oracle
def test_stage_values_have_jax_types() -> None:
    jt, jl, jc = _stages(jax, f, _args(jax), donate_argnums=(0,))
    lt, ll, lc = _stages(lamina, f, _args(lamina), donate_argnums=(0,))
    for theirs, ours in [(jt, lt), (jl, ll), (jc, lc)]:
        assert type(ours).__name__ == type(theirs).__name__
        assert isinstance(ours.in_tree.num_leaves, int)
    assert type(ll.compiler_ir()).__name__ == type(jl.compiler_ir()).__name__ == "Module"
    assert type(ll.compiler_ir("hlo")) is type(jl.compiler_ir("hlo"))
    assert type(lc.runtime_executable()) is type(jc.runtime_executable())
    assert type(lc.memory_analysis()) is type(jc.memory_analysis())
    assert (
        lc.memory_analysis().argument_size_in_bytes == jc.memory_analysis().argument_size_in_bytes
    )
    assert set(lc.cost_analysis()) == set(jc.cost_analysis())
    assert lc.as_text().startswith("HloModule jit_f, is_scheduled=true")
    info = lc.args_info[0][0]
    assert (info.shape, info.dtype, info.donated) == ((3,), np.dtype(np.float32), True)
    assert isinstance(lc, lamina.stages.Compiled) and isinstance(lt, lamina.stages.Traced)
    assert isinstance(lamina.jit(f), lamina.stages.Wrapped)


@pytest.mark.oracle
@pytest.mark.parametrize("dialect", ["mhlo", "foo"])
def test_unknown_dialect_is_jax_error(dialect: str) -> None:
    errors = []
    for api in (jax, lamina):
        lowered = api.jit(f).lower(*_args(api))
        for method in (lowered.as_text, lowered.compiler_ir):
            with pytest.raises(ValueError) as caught:
                method(dialect)
            errors.append(str(caught.value))
    assert errors[:2] == errors[2:] == [f"unknown dialect: {dialect}"] * 2


def _call_error(api: Any, call: Callable[[Any, Any], Any]) -> str:
    compiled = api.jit(f).lower(*_args(api)).compile()
    nested = api.jit(lambda d: d["a"] + d["b"][0]).lower({"a": 1.0, "b": [2.0]}).compile()
    try:
        call(api, compiled if call.__name__ != "nested" else nested)
    except (TypeError, ValueError) as err:
        return f"{type(err).__name__}: {err}"
    return "no error"


def _bad_calls() -> dict[str, Callable[[Any, Any], Any]]:
    def nested(api: Any, c: Any) -> Any:
        return c({"a": 1.0, "b": (2.0,)})

    return {
        "too few": lambda api, c: c(api.numpy.ones(3)),
        "too many": lambda api, c: c(api.numpy.ones(3), 2.0, 3.0, 4.0),
        "leaf became a tuple": lambda api, c: c(api.numpy.ones(3), (2.0, 1.0)),
        "keyword given": lambda api, c: c(api.numpy.ones(3), y=2.0),
        "wrong shape": lambda api, c: c(api.numpy.ones(4), 2.0),
        "wrong dtype": lambda api, c: c(api.numpy.ones(3, np.int32), 2.0),
        "two wrong": lambda api, c: c(api.numpy.ones((3, 2)), 2),
        "not an array": lambda api, c: c("a", 2.0),
        "strong scalar is fine": lambda api, c: c(api.numpy.ones(3), np.float32(2)),
        "list for tuple": nested,
    }


@pytest.mark.oracle
@pytest.mark.parametrize("case", list(_bad_calls()))
def test_compiled_call_errors_are_jax_errors(case: str) -> None:
    call = _bad_calls()[case]
    assert _call_error(lamina, call) == _call_error(jax, call)


@pytest.mark.oracle
def test_compiled_call_under_a_transformation_is_jax_error() -> None:
    messages = []
    for api in (jax, lamina):
        compiled = api.jit(lambda x: x * 2).lower(api.numpy.ones(3)).compile()
        with pytest.raises(TypeError) as caught:
            api.vmap(compiled)(api.numpy.ones((2, 3)))
        messages.append(str(caught.value).rsplit("<class", 1)[0])
    assert messages[0] == messages[1]


@pytest.mark.oracle
def test_trace_eval_shape_and_make_jaxpr_take_duck_typed_arrays() -> None:
    class Duck:
        def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False):
            self.shape, self.dtype, self.weak_type = shape, dtype, weak_type

    def g(x: Any, y: Any) -> Any:
        return x * y

    args = (Duck((3,), np.float64), Duck((), np.float32, True))
    got = [
        (
            str(api.jit(g).trace(*args).jaxpr),
            repr(api.jit(g).eval_shape(*args)),
            repr(api.eval_shape(g, *args)),
            str(api.make_jaxpr(g)(*args)),
            api.jit(g).lower(*args).as_text(),
        )
        for api in (jax, lamina)
    ]
    assert got[0] == got[1]


@pytest.mark.oracle
def test_wrong_tree_error_lists_every_mismatch() -> None:
    def g(x: Any, *, scale: Any = 1.0) -> Any:
        return x * scale

    messages = []
    for api in (jax, lamina):
        compiled = api.jit(g).lower(api.numpy.ones(2), scale=2.0).compile()
        with pytest.raises(TypeError) as caught:
            compiled(api.numpy.ones(2), 1.0, other=3.0)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "There are 2 mismatches" in messages[1]


def test_pruned_function_saves_and_loads(tmp_path: Path) -> None:
    compiled = lamina.jit(unused).lower(np.ones(3, np.float32), np.ones(2), 3.0).compile()
    loaded = lamina.aot.deserialize(compiled.serialize())
    x = np.arange(3, dtype=np.float32)
    for fn in (compiled, loaded):
        a, b = fn(x, np.ones(2), 3.0)
        np.testing.assert_allclose(np.asarray(a), x + 3.0)
        assert float(b) == 6.0
    assert loaded.args_info == compiled.args_info
    assert loaded.input_shardings[0][1] is None  # pruned: the executable never takes it
    with pytest.raises(TypeError, match=r"Argument 'args\[1\]' compiled with float32\[2\]"):
        loaded(x, np.ones(5), 3.0)


def test_lowered_keeps_its_hoisted_constants_and_name() -> None:
    c = np.arange(16, dtype=np.float32)
    lowered = lamina.jit(lambda x: x + c).lower(np.ones(16, np.float32))
    assert lowered.const_args[0] is c
    assert lowered.kept_args is None
    assert lowered.name == "<lambda>"


CASES_FILE = Path(__file__).with_name("stages_multidevice_cases.py")


@pytest.mark.oracle
def test_stages_on_8_devices_in_their_own_process() -> None:
    env = {
        **os.environ,
        "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=8",
        "JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS": "True",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(CASES_FILE), "-q", "-p", "no:cacheprovider", "-p",
         "no:xdist", "-x"],
        capture_output=True, text=True, env=env, timeout=900, cwd=CASES_FILE.parent,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout
