"""The module around the program: names, `@main`'s attributes, aliasing, locations, output.

`LoweredModule.as_text()` prints as JAX's `Lowered.as_text()`; `as_text(debug_info=True)` adds
each op's location (primitive and user line); `as_bytecode()` is what compilers take. Every
module verifies, and a module that does not is reported with the verifier's diagnostics.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from typing import Any

import numpy as np
import pytest
from jaxlib.mlir import ir

import lamina_core
import lamina_mlir
from lamina_core import lax
from lamina_core.ir._avals import ShapedArray
from lamina_core.ir._effects import Effect
from lamina_core.ir._jaxpr import Jaxpr, JaxprEqn, Var
from lamina_core.ir._primitive import Primitive
from lamina_mlir import LoweredModule, lower_jaxpr_to_module, make_context, verify
from lamina_mlir._mlir_context import MAX_MODULES_PER_CONTEXT, context_for_module
from lamina_mlir._module import module_symbol_name

x34 = np.ones((3, 4), np.float32)


def lower(fun: Any, *args: Any, **kwargs: Any) -> LoweredModule:
    return lower_jaxpr_to_module(
        lamina_core.make_jaxpr(fun)(*args), module_name="jit(fun)", **kwargs
    )


@pytest.mark.parametrize(
    ("name", "symbol"),
    [("jit(f)", "jit_f"), ("jit(<lambda>)", "jit__lambda"), ("my.mod-1", "my.mod-1")],
)
def test_module_symbol_replaces_what_xla_would_rewrite(name: str, symbol: str) -> None:
    assert module_symbol_name(name) == symbol


def test_module_header_records_replicas_and_partitions() -> None:
    text = lower(lambda x: x, x34, num_replicas=2, num_partitions=4).as_text()
    assert text.startswith(
        "module @jit_fun attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 2 : i32}"
    )


def test_single_result_is_named_result(filecheck: Any) -> None:
    filecheck(
        lower(lambda x: x, x34).as_text(),
        '// CHECK: -> (tensor<3x4xf32> {jax.result_info = "result"})',
    )


def test_several_results_are_numbered(filecheck: Any) -> None:
    filecheck(
        lower(lambda x: (x, x), x34).as_text(),
        """
        // CHECK: {jax.result_info = "result[0]"}, tensor<3x4xf32> {jax.result_info = "result[1]"}
        """,
    )


def test_result_names_are_given_by_the_caller(filecheck: Any) -> None:
    text = lower(lambda x: (x, x), x34, result_names=["result['a']", "result['b']"]).as_text()
    filecheck(text, """// CHECK: {jax.result_info = "result['a']"}, {{.*}}"result['b']"}""")


def test_arg_names_are_locations(filecheck: Any) -> None:
    def fun(x: Any, y: Any) -> Any:
        return x + y

    text = lower(fun, x34, x34).as_text(debug_info=True)
    filecheck(
        text, '// CHECK: @main(%arg0: tensor<3x4xf32> loc("x"), %arg1: tensor<3x4xf32> loc("y"))'
    )


def test_locations_name_the_primitive_and_the_user_line() -> None:
    def fun(x: Any) -> Any:
        return lax.sin(x)

    line = inspect.getsourcelines(fun)[1] + 1
    text = lower(fun, x34).as_text(debug_info=True)
    assert 'loc("jit(fun)/sin"' in text
    assert f'"{__file__}":{line}:' in text
    assert 'loc("fun"(' in text
    assert "jit(fun)/sin" not in lower(fun, x34).as_text()


def test_donated_argument_aliases_an_output_of_its_type(filecheck: Any) -> None:
    text = lower(lambda x, y: (y, x + 1.0), x34, x34[0], donated_args=(True, False)).as_text()
    filecheck(text, "// CHECK: @main(%arg0: tensor<3x4xf32> {tf.aliasing_output = 1 : i32}, %arg1")


def test_donated_argument_of_another_shape_is_a_buffer_donor(filecheck: Any) -> None:
    text = lower(lambda x: x.reshape(4, 3) * 2.0, x34, donated_args=(True,)).as_text()
    filecheck(text, "// CHECK: @main(%arg0: tensor<3x4xf32> {jax.buffer_donor = true})")


def test_unusable_donation_warns() -> None:
    with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
        lower(lambda x: x.sum(), x34, donated_args=(True,))


def test_input_output_aliases_are_kept(filecheck: Any) -> None:
    text = lower(lambda x, y: (x, y), x34, x34, input_output_aliases=(None, 0)).as_text()
    filecheck(text, "// CHECK: %arg1: tensor<3x4xf32> {tf.aliasing_output = 0 : i32})")


def test_donation_with_partitions_leaves_placement_to_xla(filecheck: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = lower(lambda x: x + 1.0, x34, donated_args=(True,), num_partitions=2).as_text()
    filecheck(text, "// CHECK: @main(%arg0: tensor<3x4xf32> {jax.buffer_donor = true})")


def test_aliases_count_after_const_args(filecheck: Any) -> None:
    c = np.arange(12, dtype=np.float32).reshape(3, 4)
    text = lower(lambda x: x + c, x34, donated_args=(True,)).as_text()
    filecheck(
        text,
        """
        // CHECK: @main(%arg0: tensor<3x4xf32> {jax.const = true}, %arg1: tensor<3x4xf32> {tf.aliasing_output = 0 : i32})
        """,  # noqa: E501
    )


def test_bytecode_parses_back_to_the_same_module() -> None:
    lowered = lower(lambda x: lax.exp(x) * 2.0, x34)
    with make_context():
        parsed = ir.Module.parse(lowered.as_bytecode())
        assert str(parsed) == lowered.as_text()


def test_avals_of_the_module_exclude_const_args() -> None:
    c = np.arange(12, dtype=np.float32).reshape(3, 4)
    lowered = lower(lambda x, n: (x + c, n), x34, np.int32(3))
    assert [a.str_short(True) for a in lowered.in_avals] == ["f32[3,4]", "i32[]"]
    assert [a.str_short(True) for a in lowered.out_avals] == ["f32[3,4]", "i32[]"]
    assert [a.str_short(True) for a in lowered.const_args.avals] == ["f32[3,4]"]
    assert lowered.name == "jit_fun"


def test_a_thread_reuses_its_context_a_bounded_number_of_times() -> None:
    first = context_for_module()
    seen = [context_for_module().context for _ in range(2 * MAX_MODULES_PER_CONTEXT)]
    distinct = {id(c) for c in seen}
    assert 2 <= len(distinct) <= 3
    assert first.types is not None


def test_a_primitive_without_rule_is_reported() -> None:
    unknown = Primitive("mystery")
    x = Var(ShapedArray((2,), np.dtype(np.float32)))
    out = Var(ShapedArray((2,), np.dtype(np.float32)))
    jaxpr = Jaxpr([], [x], [out], [JaxprEqn((x,), (out,), unknown, {})])
    with pytest.raises(
        NotImplementedError, match="MLIR translation rule for primitive 'mystery' not found"
    ):
        lower_jaxpr_to_module(jaxpr, module_name="jit(bad)")


def test_a_module_that_does_not_verify_is_reported() -> None:
    with make_context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(
            "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }"
        )
        i32 = ir.IntegerType.get_signless(32)
        block = module.body.operations[0].regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(block):
            ir.Operation.create(
                "stablehlo.add",
                results=[ir.RankedTensorType.get([2], i32)],
                operands=[block.arguments[0], block.arguments[0]],
            )
        with pytest.raises(ValueError, match="does not verify"):
            verify(module)


def test_public_names() -> None:
    assert callable(lamina_mlir.lower_jaxpr_to_module)
    assert lamina_mlir.LoweringParameters().hoist_constants_as_args is True


def test_threads_lower_in_their_own_contexts() -> None:
    results: dict[int, LoweredModule] = {}

    def work(i: int) -> None:
        results[i] = lower(lambda x: lax.sin(x) * float(i), x34)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    assert len({id(m.context) for m in results.values()}) == 4
    for m in results.values():
        verify(m.module)


class _Io(Effect):
    """A test effect, ordered once registered."""

    def __str__(self) -> str:
        return "Io"

    def __eq__(self, other: object) -> bool:
        return type(other) is _Io

    def __hash__(self) -> int:
        return hash(_Io)


def test_ordered_effects_get_token_arguments_and_results(filecheck: Any) -> None:
    x = Var(ShapedArray((2,), np.dtype(np.float32)))
    jaxpr = Jaxpr([], [x], [x], [], effects=frozenset({_Io()}))
    lamina_mlir.ordered_effect_types.add(_Io)
    try:
        text = lower_jaxpr_to_module(jaxpr, module_name="jit(io)").as_text()
    finally:
        lamina_mlir.ordered_effect_types.discard(_Io)
    filecheck(
        text,
        """
        // CHECK: @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<2xf32>) -> (!stablehlo.token {jax.token = true}, tensor<2xf32> {jax.result_info = "result"})
        // CHECK-NEXT: return %arg0, %arg1 : !stablehlo.token, tensor<2xf32>
        """,  # noqa: E501
    )
