"""`jax.interpreters.mlir`'s extension API against JAX 0.10.2: user primitives whose lowering
rules use a registered constant handler, `ir_type_handlers` for a user aval,
`emit_python_callback`, `lower_jaxpr_to_fun`; `merge_mlir_modules`, `lower_jaxpr_to_module`,
`lowerable_effects`, `ir_tree_registry` and the axis contexts.

Each case is written once over an `api` module (`jax` or `lamina`) and run on both: values,
printed jaxprs and StableHLO text must be equal.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

import lamina

APIS = {"jax": jax, "lamina": lamina}
X = np.arange(3, dtype=np.float32)
Y = np.array([1.0, -2.0, 0.5], np.float32)


def _mod(api: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{api.__name__}.{name}")


def _both(run: Callable[[ModuleType], Any]) -> tuple[Any, Any]:
    return run(lamina), run(jax)


def _values_and_text(api: ModuleType, f: Callable[..., Any], *args: Any) -> tuple[Any, str]:
    return np.asarray(api.jit(f)(*args)), api.jit(f).lower(*args).as_text()


def _assert_same(ours: tuple[Any, str], theirs: tuple[Any, str]) -> None:
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1] == theirs[1]


# ---- register_constant_handler ---------------------------------------------------------------


class Scaled:
    """A user type that lowers as the constant `data * k`."""

    def __init__(self, data: np.ndarray, k: float) -> None:
        self.data, self.k = data, k


class Halves(Scaled):
    """A subclass with no handler of its own: it lowers with `Scaled`'s."""


class SplitPair:
    """A user type that lowers to two IR values."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b = a, b


def _constant_program(api: ModuleType) -> Callable[[Any], Any]:
    mlir, hlo = _mod(api, "interpreters.mlir"), _mod(api, "extend.mlir.dialects.stablehlo")
    mlir.register_constant_handler(
        Scaled, lambda val, aval: mlir.ir_constant(np.asarray(val.data * val.k, np.float32))
    )
    mlir.register_constant_handler(
        SplitPair, lambda val, aval: (mlir.ir_constant(val.a), mlir.ir_constant(val.b))
    )
    add_c = _mod(api, "extend.core").Primitive("add_scaled")
    add_c.def_abstract_eval(lambda x, **_: x)

    def rule(ctx: Any, x: Any, *, c: Scaled, pair: SplitPair) -> list[Any]:
        a, b = mlir.ir_constants(pair)
        return [hlo.multiply(hlo.add(x, mlir.ir_constant(c)), hlo.subtract(a, b))]

    mlir.register_lowering(add_c, rule)
    c = Halves(np.array([1.0, 2.0, 4.0], np.float32), 0.5)
    pair = SplitPair(np.full(3, 3.0, np.float32), np.array([1.0, 0.0, 2.0], np.float32))
    return lambda x: add_c.bind(x, c=c, pair=pair)


@pytest.mark.oracle
def test_a_registered_constant_handler_lowers_a_user_type_as_jaxs() -> None:
    ours, theirs = _both(lambda api: _values_and_text(api, _constant_program(api), X))
    _assert_same(ours, theirs)
    np.testing.assert_allclose(ours[0], (X + np.array([0.5, 1.0, 2.0])) * [2.0, 3.0, 1.0])


@pytest.mark.oracle
def test_ir_constant_of_a_handler_giving_two_values_raises_as_jax() -> None:
    def run(api: ModuleType) -> str:
        mlir = _mod(api, "interpreters.mlir")
        _constant_program(api)
        with mlir.make_ir_context(), mlir.ir.Location.unknown():
            module = mlir.ir.Module.create()
            with mlir.ir.InsertionPoint(module.body), pytest.raises(ValueError) as info:
                mlir.ir_constant(SplitPair(np.zeros(2, np.float32), np.ones(2, np.float32)))
        return str(info.value).split(",")[0]

    ours, theirs = _both(run)
    assert ours == theirs


# ---- ir_type_handlers ------------------------------------------------------------------------


def _pair_program(api: ModuleType) -> Callable[[Any, Any], Any]:
    """`pack(x, y)` has a user aval, whose IR type only `ir_type_handlers` knows:
    `tensor<2 x shape x dtype>`; `pair_sum` reduces it back to an array."""
    core, jcore = _mod(api, "extend.core"), _mod(api, "core")
    mlir, hlo = _mod(api, "interpreters.mlir"), _mod(api, "extend.mlir.dialects.stablehlo")
    ir = mlir.ir

    class PairAval(jcore.AbstractValue):  # type: ignore[misc,name-defined]  # per-API base
        def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
            self.shape, self.dtype = shape, np.dtype(dtype)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, PairAval) and (other.shape, other.dtype) == (
                self.shape,
                self.dtype,
            )

        def __hash__(self) -> int:
            return hash((self.shape, self.dtype))

        def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
            return f"pair[{self.dtype.name}{list(self.shape)}]"

    def pair_type(aval: PairAval) -> Any:
        return ir.RankedTensorType.get([2, *aval.shape], mlir.dtype_to_ir_type(aval.dtype))

    mlir.ir_type_handlers[PairAval] = pair_type
    assert mlir.ir_type_handlers[PairAval] is pair_type
    pack = core.Primitive("pack")
    pack.def_abstract_eval(lambda x, y: PairAval(x.shape, x.dtype))

    def pack_rule(ctx: Any, x: Any, y: Any) -> list[Any]:
        (out_type,) = mlir.aval_to_ir_types(ctx.module_context, ctx.avals_out[0])
        return [hlo.reshape(out_type, hlo.concatenate([x, y], 0))]

    mlir.register_lowering(pack, pack_rule)
    pair_sum = core.Primitive("pair_sum")
    pair_sum.def_abstract_eval(lambda p: jcore.ShapedArray(p.shape, p.dtype))

    def pair_sum_rule(ctx: Any, p: Any) -> list[Any]:
        (aval,) = ctx.avals_out
        scalar = ir.RankedTensorType.get([], mlir.dtype_to_ir_type(aval.dtype))
        zero = mlir.ir_constant(np.zeros((), aval.dtype))
        out_type = mlir.aval_to_ir_type(ctx.module_context, aval)
        reduce = hlo.ReduceOp([out_type], [p], [zero], mlir.dense_int_array([0]))
        block = reduce.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([hlo.add(*block.arguments)])
        return list(reduce.results)

    mlir.register_lowering(pair_sum, pair_sum_rule)
    return lambda x, y: pair_sum.bind(pack.bind(x, y)) * 2


@pytest.mark.oracle
def test_ir_type_handlers_give_a_user_avals_ir_type_as_jaxs() -> None:
    def run(api: ModuleType) -> tuple[Any, str, str]:
        f = _pair_program(api)
        return (*_values_and_text(api, f, X, Y), str(api.make_jaxpr(f)(X, Y)))

    ours, theirs = _both(run)
    _assert_same(ours[:2], theirs[:2])
    assert ours[2] == theirs[2]
    assert "tensor<2x3xf32>" in ours[1]
    np.testing.assert_allclose(ours[0], 2 * (X + Y))


@pytest.mark.oracle
def test_ir_type_handlers_show_the_array_handler() -> None:
    def run(api: ModuleType) -> str:
        mlir, jcore = _mod(api, "interpreters.mlir"), _mod(api, "core")
        with mlir.make_ir_context(), mlir.ir.Location.unknown():
            return str(mlir.ir_type_handlers[jcore.ShapedArray](jcore.ShapedArray((2,), np.int8)))

    ours, theirs = _both(run)
    assert ours == theirs == "tensor<2xi8>"


# ---- emit_python_callback --------------------------------------------------------------------


def _callback_program(api: ModuleType, *, with_token: bool, wrong_shape: bool = False) -> Any:
    mlir, hlo = _mod(api, "interpreters.mlir"), _mod(api, "extend.mlir.dialects.stablehlo")
    p = _mod(api, "extend.core").Primitive("host_affine")
    p.def_abstract_eval(lambda x: x)

    def host(x: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.zeros(4, x.dtype),) if wrong_shape else (3 * x - 1,)

    def rule(ctx: Any, x: Any) -> list[Any]:
        token = hlo.create_token() if with_token else None
        results, token_out, called = mlir.emit_python_callback(
            ctx, host, token, [x], ctx.avals_in, ctx.avals_out, has_side_effect=with_token
        )
        assert (token_out is None) == (token is None)
        assert callable(called)
        return list(results)

    mlir.register_lowering(p, rule)
    return lambda x: p.bind(x) + 1


@pytest.mark.oracle
@pytest.mark.parametrize("with_token", [False, True])
def test_emit_python_callback_in_a_rule_as_jaxs(with_token: bool) -> None:
    ours, theirs = _both(
        lambda api: _values_and_text(api, _callback_program(api, with_token=with_token), X)
    )
    _assert_same(ours, theirs)
    np.testing.assert_allclose(ours[0], 3 * X)


@pytest.mark.oracle
def test_emit_python_callback_checks_the_results_shapes_as_jax() -> None:
    def run(api: ModuleType) -> str:
        f = _callback_program(api, with_token=False, wrong_shape=True)
        with pytest.raises(Exception) as info:
            np.asarray(api.jit(f)(X))
        return str(info.value)

    ours, theirs = _both(run)
    want = "Incorrect output shape for return value #0: Expected: (3,), Actual: (4,)"
    assert want in ours
    assert want in theirs


# ---- lower_jaxpr_to_fun ----------------------------------------------------------------------


def _call_program(api: ModuleType) -> Callable[[Any], Any]:
    """A call primitive whose rule lowers its jaxpr as a private function and calls it."""
    mlir = _mod(api, "interpreters.mlir")
    func = _mod(api, "extend.mlir.dialects.func")
    p = _mod(api, "extend.core").Primitive("call_inner")
    p.def_abstract_eval(lambda x, *, jaxpr: jaxpr.out_avals[0])

    def rule(ctx: Any, x: Any, *, jaxpr: Any) -> list[Any]:
        fn = mlir.lower_jaxpr_to_fun(
            ctx.module_context, "inner", jaxpr, [], num_const_args=0, in_avals=jaxpr.in_avals
        )
        assert isinstance(fn, func.FuncOp)
        out_types = [mlir.aval_to_ir_type(ctx.module_context, a) for a in jaxpr.out_avals]
        callee = mlir.ir.FlatSymbolRefAttr.get(fn.name.value)
        return list(func.CallOp(out_types, callee, [x]).results)

    mlir.register_lowering(p, rule)
    first = api.make_jaxpr(lambda y: api.numpy.sin(y) * 2.0 + 1.0)(X)
    second = api.make_jaxpr(lambda y: api.numpy.cos(y) - y)(X)
    # Two equations of different params: JAX lowers equal equations once per module (a
    # cache Lamina does not have), so the same jaxpr twice would print one function.
    return lambda x: p.bind(p.bind(x, jaxpr=first), jaxpr=second)


@pytest.mark.oracle
def test_lower_jaxpr_to_fun_called_from_a_rule_as_jaxs() -> None:
    ours, theirs = _both(lambda api: _values_and_text(api, _call_program(api), X))
    _assert_same(ours, theirs)
    assert "func.func private @inner_0" in ours[1]
    first = np.sin(X) * 2.0 + 1.0
    np.testing.assert_allclose(ours[0], np.cos(first) - first, rtol=1e-6)


# ---- merge_mlir_modules ----------------------------------------------------------------------


@pytest.mark.oracle
def test_merge_mlir_modules_renames_apart_as_jax() -> None:
    # The same module twice: every symbol of the source (`@main`, `@inner`, `@inner_0`)
    # collides with the destination's (JAX's text, parsed in each API's context).
    text = jax.jit(_call_program(jax)).lower(X).as_text()

    def run(api: ModuleType) -> tuple[str, str]:
        mlir = _mod(api, "interpreters.mlir")
        with mlir.make_ir_context() as context:
            dst = mlir.ir.Module.parse(text, context)
            src = mlir.ir.Module.parse(text, context)
            name = mlir.merge_mlir_modules(dst, "callee", src)
            assert dst.operation.verify()
            return name, mlir.module_to_string(dst, enable_debug_info=False)

    ours, theirs = _both(run)
    assert ours == theirs
    assert ours[0] == "callee"
    assert "func.func private @callee(" in ours[1]
    assert "call @inner_0_0(" in ours[1]


# ---- lower_jaxpr_to_module and lowerable_effects ---------------------------------------------


def _lower_module(api: ModuleType, f: Callable[..., Any], *args: Any) -> Any:
    mlir = _mod(api, "interpreters.mlir")
    closed = api.make_jaxpr(f)(*args)
    return mlir.lower_jaxpr_to_module(
        "jit_f",
        closed,
        num_const_args=0,
        in_avals=closed.in_avals,
        ordered_effects=[],
        platforms=["cpu"],
        backend=None,
        axis_context=mlir.ShardingContext(1),
        donated_args=[False] * len(args),
        lowering_parameters=mlir.LoweringParameters(),
    )


@pytest.mark.oracle
def test_lower_jaxpr_to_module_as_jaxs() -> None:
    def run(api: ModuleType) -> tuple[str, list[str], tuple[Any, ...]]:
        mlir = _mod(api, "interpreters.mlir")
        result = _lower_module(api, lambda x, y: api.numpy.tanh(x) @ y + 2.0, X, Y)
        assert isinstance(result, mlir.LoweringResult)
        state = result.shape_poly_state
        poly = (state.dim_vars, state.uses_dim_vars, state.has_platform_index_argument)
        text = mlir.module_to_string(result.module, enable_debug_info=False)
        return text, list(result._fields), poly

    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.oracle
def test_lower_jaxpr_to_module_reports_host_callbacks_as_jax() -> None:
    def run(api: ModuleType) -> int:
        result = _lower_module(api, _callback_program(api, with_token=False), X)
        (callback,) = result.host_callbacks
        np.testing.assert_allclose(callback(X)[0], 3 * X - 1)
        return len(result.host_callbacks)

    assert _both(run) == (1, 1)


def _effectful_program(api: ModuleType) -> tuple[Callable[[Any], Any], type]:
    core = _mod(api, "extend.core")
    mlir = _mod(api, "interpreters.mlir")

    class LibraryEffect(core.Effect):  # type: ignore[misc,name-defined]  # per-API base
        def __repr__(self) -> str:
            return "LibraryEffect"

        def __eq__(self, other: object) -> bool:
            return type(other) is LibraryEffect

        def __hash__(self) -> int:
            return hash("LibraryEffect")

    p = core.Primitive("library_effect")
    p.def_effectful_abstract_eval(lambda x: (x, {LibraryEffect()}))
    mlir.register_lowering(p, lambda ctx, x: [x])
    return (lambda x: p.bind(x) * 2), LibraryEffect


@pytest.mark.oracle
def test_an_effect_outside_lowerable_effects_is_refused_until_added_as_in_jax() -> None:
    def run(api: ModuleType) -> tuple[str, str]:
        mlir = _mod(api, "interpreters.mlir")
        f, effect_type = _effectful_program(api)
        with pytest.raises(ValueError) as info:
            _lower_module(api, f, X)
        mlir.lowerable_effects.add_type(effect_type)
        result = _lower_module(api, f, X)
        return str(info.value), mlir.module_to_string(result.module, enable_debug_info=False)

    ours, theirs = _both(run)
    assert ours == theirs
    assert ours[0] == "Cannot lower jaxpr with effects: {LibraryEffect}"


@pytest.mark.oracle
def test_host_callback_effects_are_lowerable_as_in_jax() -> None:
    def run(api: ModuleType) -> list[bool]:
        mlir = _mod(api, "interpreters.mlir")
        effects = [
            api.make_jaxpr(lambda x: api.debug.print("{}", x))(X).effects,
            api.make_jaxpr(lambda x: api.experimental.io_callback(lambda a: a, X, x, ordered=True))(
                X
            ).effects,
        ]
        return [not mlir.lowerable_effects.filter_not_in(e) for e in effects]

    assert _both(run) == ([True, True], [True, True])


# ---- ir_tree_registry ------------------------------------------------------------------------


Point = collections.namedtuple("Point", "x y")


@pytest.mark.oracle
@pytest.mark.parametrize(
    "tree",
    [None, {"a": 1}, (1, [2, 3]), Point(1, (2, 3)), [], 5, ((), [None])],
    ids=repr,
)
def test_ir_tree_registry_flattens_as_jaxs(tree: Any) -> None:
    def run(api: ModuleType) -> tuple[list[Any], int, Any]:
        leaves, treedef = _mod(api, "interpreters.mlir").ir_tree_registry.flatten(tree)
        return leaves, treedef.num_leaves, treedef.unflatten([f"#{i}" for i in range(len(leaves))])

    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.oracle
def test_ir_tree_registry_flattens_op_results_to_a_list_as_jax() -> None:
    def run(api: ModuleType) -> tuple[int, str]:
        mlir, hlo = _mod(api, "interpreters.mlir"), _mod(api, "extend.mlir.dialects.stablehlo")
        with mlir.make_ir_context(), mlir.ir.Location.unknown():
            module = mlir.ir.Module.create()
            with mlir.ir.InsertionPoint(module.body):
                op = hlo.ConstantOp(mlir.ir.DenseElementsAttr.get(np.ones(2, np.float32)))
                leaves, treedef = mlir.ir_tree_registry.flatten([op.results, op.result])
                rebuilt = treedef.unflatten(leaves)
                return len(leaves), type(rebuilt[0]).__name__

    ours, theirs = _both(run)
    assert ours == theirs == (2, "list")


# ---- axis contexts and shape polymorphism state ----------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["SPMDAxisContext", "ShardingContext"])
def test_axis_contexts_have_jaxs_fields(name: str) -> None:
    def fields(api: ModuleType) -> list[tuple[str, Any]]:
        cls = getattr(_mod(api, "interpreters.mlir"), name)
        return [(f.name, f.default) for f in dataclasses.fields(cls)]

    ours, theirs = _both(fields)
    assert ours == theirs


@pytest.mark.oracle
def test_sharding_context_checks_its_devices_as_jax() -> None:
    def run(api: ModuleType) -> tuple[int, type]:
        mlir = _mod(api, "interpreters.mlir")
        devices = tuple(api.devices())
        ok = mlir.ShardingContext(len(devices), devices)
        with pytest.raises(AssertionError):
            mlir.ShardingContext(len(devices) + 1, devices)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ok.num_devices = 2
        return ok.num_devices, type(mlir.SPMDAxisContext(None).manual_axes)

    ours, theirs = _both(run)
    assert ours == theirs


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("dim_vars", "platforms"), [((), None), (("b", "n"), ("cpu",)), (("n",), ("cpu", "cuda"))]
)
def test_shape_poly_lowering_state_as_jaxs(
    dim_vars: tuple[str, ...], platforms: tuple[str, ...] | None
) -> None:
    def run(api: ModuleType) -> tuple[Any, ...]:
        s = _mod(api, "interpreters.mlir").ShapePolyLoweringState(dim_vars, platforms)
        return s.dim_vars, s.uses_dim_vars, s.has_platform_index_argument

    ours, theirs = _both(run)
    assert ours == theirs
