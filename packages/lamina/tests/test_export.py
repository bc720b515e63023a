"""`lamina.export` against `jax.export`: exported types, values eagerly, under jit and grad,
printed jaxprs and modules, errors (class and text), and serialization round trips."""

from __future__ import annotations

import collections
import functools
import re
import subprocess
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jaxlib.mlir import ir

import lamina
import lamina.numpy as ljnp
from lamina import export as lexport
from lamina_mlir import make_context

pytestmark = pytest.mark.oracle

F32 = np.float32

FIELDS = (
    *("fun_name", "in_tree", "out_tree", "in_avals", "out_avals", "in_shardings_hlo"),
    *("out_shardings_hlo", "nr_devices", "platforms", "ordered_effects", "unordered_effects"),
    *("disabled_safety_checks", "calling_convention_version", "module_kept_var_idx"),
    "uses_global_constants",
)


def _sin2(np_: ModuleType) -> Callable[..., Any]:
    return lambda x: np_.sin(x) * 2


def _unused(np_: ModuleType) -> Callable[..., Any]:
    return lambda x, y: x + 1.0


def _tree(np_: ModuleType) -> Callable[..., Any]:
    def f(a: Any, *, b: Any) -> Any:
        return {"sum": a[0] + b, "pair": (np_.cos(a[1]), a[0] * 3)}

    return f


def _int_arg(np_: ModuleType) -> Callable[..., Any]:
    return lambda x, i: (x * i, i)


def _dot(np_: ModuleType) -> Callable[..., Any]:
    return lambda a, b: np_.tanh(np_.dot(a, b)).sum(axis=0)


CASES: dict[
    str, tuple[Callable[[ModuleType], Callable[..., Any]], tuple[Any, ...], dict[str, Any]]
] = {
    "sin2": (_sin2, (np.linspace(0, 1, 6, dtype=F32).reshape(2, 3),), {}),
    "unused": (_unused, (np.ones(3, F32), np.ones(4, np.int32)), {}),
    "scalar": (_sin2, (1.5,), {}),
    "tree": (_tree, ((np.ones(3, F32), np.arange(3, dtype=F32)),), {"b": np.full(3, 2, F32)}),
    "int_arg": (_int_arg, (np.arange(3, dtype=F32), np.int32(3)), {}),
    "dot": (_dot, (np.ones((3, 4), F32) / 4, np.linspace(0, 1, 20, dtype=F32).reshape(4, 5)), {}),
}


def _both(name: str) -> tuple[Any, Any, tuple[Any, ...], dict[str, Any]]:
    make, args, kwargs = CASES[name]
    theirs: Any = jax.export.export(jax.jit(make(jjnp)))(*args, **kwargs)
    ours = lexport.export(lamina.jit(make(ljnp)))(*args, **kwargs)
    return theirs, ours, args, kwargs


def _close(a: Any, b: Any) -> None:
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = lamina.tree_util.tree_flatten(b)
    assert str(ta) == str(tb)
    for x, y in zip(la, lb, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_fields_are_jax_s(name: str) -> None:
    theirs, ours, _, _ = _both(name)
    for field in FIELDS:
        assert repr(getattr(ours, field)) == repr(getattr(theirs, field)), field
    assert str(ours) == str(theirs)
    their_mesh = jax.sharding.Mesh(jax.devices()[:1], ("a",))
    our_mesh = lamina.sharding.Mesh(lamina.devices()[:1], ("a",))
    assert ours.in_shardings_jax(our_mesh) == theirs.in_shardings_jax(their_mesh)
    assert ours.out_shardings_jax(our_mesh) == theirs.out_shardings_jax(their_mesh)
    assert ours.has_vjp() and theirs.has_vjp()
    vjp_theirs, vjp_ours = theirs.vjp(), ours.vjp()
    assert vjp_ours.fun_name == vjp_theirs.fun_name == "fun_vjp_jax"
    assert vjp_ours.module_kept_var_idx == vjp_theirs.module_kept_var_idx
    assert [(a.shape, a.dtype, a.weak_type) for a in vjp_ours.in_avals] == [
        (a.shape, a.dtype, a.weak_type) for a in vjp_theirs.in_avals
    ]
    assert [(a.shape, a.dtype) for a in vjp_ours.out_avals] == [
        (a.shape, a.dtype) for a in vjp_theirs.out_avals
    ]


def _module_ops(text: str) -> tuple[list[str], list[str]]:
    """The module's lines without locations, split into its constants (which JAX lowers
    first in a function, Lamina where first used) and the rest, in order."""
    with make_context():
        plain = str(ir.Module.parse(text).operation.get_asm(enable_debug_info=False))
    lines = plain.splitlines()
    constants = sorted(line.strip() for line in lines if "stablehlo.constant" in line)
    return constants, [line for line in lines if "stablehlo.constant" not in line]


@pytest.mark.parametrize("name", ["sin2", "unused", "tree", "dot"])
def test_the_module_is_jax_s_but_for_where_constants_are_placed(name: str) -> None:
    theirs, ours, _, _ = _both(name)
    assert _module_ops(ours.mlir_module()) == _module_ops(theirs.mlir_module())
    assert _module_ops(ours.vjp().mlir_module()) == _module_ops(theirs.vjp().mlir_module())
    assert "jax.uses_shape_polymorphism = false" in ours.mlir_module()


@pytest.mark.parametrize("name", sorted(CASES))
def test_calls_eagerly_under_jit_and_grad_give_jax_s_values(name: str) -> None:
    theirs, ours, args, kwargs = _both(name)
    _close(theirs.call(*args, **kwargs), ours.call(*args, **kwargs))
    _close(jax.jit(theirs.call)(*args, **kwargs), lamina.jit(ours.call)(*args, **kwargs))

    def loss(call: Callable[..., Any], tree: Any) -> Callable[..., Any]:
        def f(*a: Any) -> Any:
            leaves = tree.leaves(call(*a, **kwargs))
            return sum(x.sum() for x in leaves if x.dtype.kind == "f")

        return f

    floats = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    if floats:
        _close(
            jax.grad(loss(theirs.call, jax.tree), floats)(*args),
            lamina.grad(loss(ours.call, lamina.tree), floats)(*args),
        )


@pytest.mark.parametrize("name", ["sin2", "tree", "int_arg"])
def test_jaxprs_of_calls_and_their_gradients_print_as_jax_s(name: str) -> None:
    theirs, ours, args, kwargs = _both(name)
    assert str(lamina.make_jaxpr(ours.call)(*args, **kwargs)) == str(
        jax.make_jaxpr(theirs.call)(*args, **kwargs)
    )

    def grad_of(exp: Any, lib: Any) -> Any:
        return lib.grad(lambda x: lib.tree.leaves(exp.call(x, *args[1:], **kwargs))[0].sum())

    if name != "tree":
        assert str(lamina.make_jaxpr(grad_of(ours, lamina))(args[0])) == str(
            jax.make_jaxpr(grad_of(theirs, jax))(args[0])
        )


def test_second_order_gradients_go_through_the_vjp_of_the_vjp() -> None:
    f = lambda x: jjnp.sin(x) * x  # noqa: E731
    g = lambda x: ljnp.sin(x) * x  # noqa: E731
    x = np.linspace(0, 1, 5, dtype=F32)
    theirs: Any = jax.export.export(jax.jit(f))(x)
    ours = lexport.deserialize(lexport.export(lamina.jit(g))(x).serialize(vjp_order=2))
    expected = jax.grad(lambda y: jax.grad(lambda z: theirs.call(z).sum())(y).sum())(x)
    got = lamina.grad(lambda y: lamina.grad(lambda z: ours.call(z).sum())(y).sum())(x)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="No VJP is available"):
        ours.vjp().vjp().vjp()


def _error(fn: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        fn()
    except Exception as err:  # the class is what is compared
        return type(err), str(err)
    raise AssertionError("no error")


def test_wrong_calls_raise_jax_s_errors() -> None:
    x = np.ones((2, 3), F32)
    theirs: Any = jax.export.export(jax.jit(jjnp.sin))(x)
    ours = lexport.export(lamina.jit(ljnp.sin))(x)
    for bad in (
        lambda e: e.call(np.ones((2,), F32)),
        lambda e: e.call(np.ones((2, 3), np.int32)),
        lambda e: e.call(np.ones((2, 4), F32)),
        lambda e: e.call(x, x),
        lambda e: e.call([x]),
        lambda e: e.call(x=x),
    ):
        assert _error(functools.partial(bad, ours)) == _error(functools.partial(bad, theirs))
    assert _error(lambda: lamina.vmap(ours.call)(np.ones((4, 2, 3), F32))) == _error(
        lambda: jax.vmap(theirs.call)(np.ones((4, 2, 3), F32))
    )
    assert _error(lambda: lamina.jvp(ours.call, (x,), (x,))) == _error(
        lambda: jax.jvp(theirs.call, (x,), (x,))
    )


def test_exporting_what_cannot_be_exported_raises_jax_s_errors() -> None:
    def plain(x: Any) -> Any:
        return x

    kind, text = _error(lambda: lexport.export(plain))
    assert (kind, re.sub("0x[0-9a-f]+", "0x", text)) == (
        ValueError,
        "Function to be exported must be the result of `jit` but is: <function "
        "test_exporting_what_cannot_be_exported_raises_jax_s_errors.<locals>.plain at 0x>",
    )
    spec = np.ones(3, F32)

    def with_callback(lib: Any) -> Callable[..., Any]:
        return lambda x: lib.pure_callback(lambda y: y, lib.ShapeDtypeStruct((3,), F32), x)

    assert _error(lambda: lexport.export(lamina.jit(with_callback(lamina)))(spec)) == _error(
        lambda: jax.export.export(jax.jit(with_callback(jax)))(spec)
    )
    exported = lexport.deserialize(lexport.export(lamina.jit(ljnp.sin))(spec).serialize())
    assert _error(exported.vjp) == (ValueError, "No VJP is available")
    assert _error(lambda: exported.serialize(vjp_order=1)) == (
        ValueError,
        "serialization of an Exported that does not have vjps of high-enough order",
    )
    with pytest.raises(NotImplementedError, match="Refs"):
        lexport.export(lamina.jit(lambda r: r[...]))(lamina.new_ref(spec))


def test_a_function_exported_for_another_platform_refuses_to_run_here() -> None:
    x = np.ones(3, F32)
    theirs: Any = jax.export.export(jax.jit(jjnp.sin), platforms=("tpu",))(x)
    ours = lexport.export(lamina.jit(ljnp.sin), platforms=("tpu",))(x)
    assert ours.platforms == ("tpu",)
    assert _error(lambda: ours.call(x)) == _error(lambda: theirs.call(x))
    allowed = lexport.export(
        lamina.jit(ljnp.sin),
        platforms=("tpu",),
        disabled_checks=[lexport.DisabledSafetyCheck.platform()],
    )(x)
    np.testing.assert_allclose(allowed.call(x), np.sin(x), rtol=1e-6)


def test_a_multi_platform_export_takes_jax_s_platform_index() -> None:
    x = np.ones((2, 3), F32)
    theirs: Any = jax.export.export(jax.jit(jjnp.sin), platforms=("cpu", "tpu"))(x)
    ours = lexport.export(lamina.jit(ljnp.sin), platforms=("cpu", "tpu"))(x)
    for field in FIELDS:
        assert repr(getattr(ours, field)) == repr(getattr(theirs, field)), field
    main = [line for line in _module_ops(ours.mlir_module())[1] if "@main" in line]
    assert main == [line for line in _module_ops(theirs.mlir_module())[1] if "@main" in line]
    assert 'jax.global_constant = "_platform_index"' in main[0]
    for exported in (ours, lexport.deserialize(ours.serialize())):
        np.testing.assert_allclose(exported.call(x), np.sin(x), rtol=1e-6)
        np.testing.assert_allclose(lamina.jit(exported.call)(x), np.sin(x), rtol=1e-6)


def test_safety_checks_are_jax_s() -> None:
    for ours, theirs in (
        (lexport.DisabledSafetyCheck.platform(), jax.export.DisabledSafetyCheck.platform()),
        (
            lexport.DisabledSafetyCheck.custom_call("my_target"),
            jax.export.DisabledSafetyCheck.custom_call("my_target"),
        ),
    ):
        assert (str(ours), repr(ours), ours.is_custom_call()) == (
            str(theirs),
            repr(theirs),
            theirs.is_custom_call(),
        )
    assert lexport.DisabledSafetyCheck.platform() == lexport.DisabledSafetyCheck.platform()
    assert (
        lexport.minimum_supported_calling_convention_version,
        lexport.maximum_supported_calling_convention_version,
    ) == (
        jax.export.minimum_supported_calling_convention_version,
        jax.export.maximum_supported_calling_convention_version,
    )
    assert lexport.default_export_platform() == jax.export.default_export_platform()


def test_round_trip_through_another_process(tmp_path: Any) -> None:
    x = np.linspace(-1, 1, 8, dtype=F32)
    weights = np.linspace(0, 2, 8, dtype=F32)
    exported = lexport.export(lamina.jit(lambda v: ljnp.tanh(v * weights)))(x)
    path = tmp_path / "f.exported"
    path.write_bytes(exported.serialize(vjp_order=1))
    script = (
        "import sys, numpy as np, lamina\n"
        "e = lamina.export.deserialize(open(sys.argv[1], 'rb').read())\n"
        "x = np.linspace(-1, 1, 8, dtype=np.float32)\n"
        "print(np.asarray(e.call(x)).tolist())\n"
        "print(np.asarray(lamina.grad(lambda v: e.call(v).sum())(x)).tolist())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    )
    values, grads = (np.array(eval(line)) for line in run.stdout.splitlines())  # our own output
    np.testing.assert_allclose(values, np.tanh(x * weights), rtol=1e-6)
    np.testing.assert_allclose(grads, weights * (1 - np.tanh(x * weights) ** 2), rtol=1e-5)


class Pair(NamedTuple):
    first: Any
    second: Any


def test_namedtuple_and_ordered_dict_structures_round_trip() -> None:
    lexport.register_namedtuple_serialization(Pair, serialized_name="test_export.Pair")
    x = np.ones(2, F32)

    def f(p: Pair) -> Any:
        return collections.OrderedDict(b=p.first * 2, a=Pair(p.second, p.first))

    exported = lexport.export(lamina.jit(f))(Pair(x, x + 1))
    loaded = lexport.deserialize(exported.serialize())
    assert str(loaded.in_tree) == str(exported.in_tree)
    assert str(loaded.out_tree) == str(exported.out_tree)
    out = loaded.call(Pair(x, x + 1))
    assert type(out) is collections.OrderedDict and list(out) == ["b", "a"]
    assert type(out["a"]) is Pair
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        lexport.register_namedtuple_serialization(Pair, serialized_name="other")

    class Unregistered(NamedTuple):
        x: Any

    unregistered = lexport.export(lamina.jit(lambda t: t.x))(Unregistered(x))
    theirs: Any = jax.export.export(jax.jit(lambda t: t.x))(Unregistered(x))
    kind, text = _error(unregistered.serialize)
    # JAX's serializer needs flatbuffers, absent here: compare with its text for this class.
    assert kind is ValueError and text == (
        f"Cannot serialize PyTreeDef containing an unregistered type `{Unregistered}`. Use "
        "`export.register_pytree_node_serialization` or "
        "`export.register_namedtuple_serialization`."
    )
    assert str(unregistered.in_tree) == str(theirs.in_tree)


def test_dict_keys_must_be_strings_as_in_jax() -> None:
    exported = lexport.export(lamina.jit(lambda d: d[1]))({1: np.ones(2, F32)})
    assert _error(exported.serialize) == (
        TypeError,
        "Serialization is supported only for dictionaries with string keys. Found key 1 of "
        "type <class 'int'>.",
    )


def test_exported_modules_merge_into_a_caller_without_name_clashes() -> None:
    x = np.arange(12, dtype=F32).reshape(3, 4)
    # Both modules and the caller lower argmax as a private function named `argmax`.
    first = lexport.export(lamina.jit(lambda v: ljnp.argmax(v, axis=0)))(x)
    second = lexport.export(lamina.jit(lambda v: ljnp.argmax(v, axis=1) * 2))(x)
    both = lamina.jit(
        lambda v: (first.call(v), second.call(v), ljnp.argmax(v, axis=0), first.call(v))
    )
    outs = both(x)
    for got, want in zip(
        outs, (np.argmax(x, 0), np.argmax(x, 1) * 2, np.argmax(x, 0), np.argmax(x, 0)), strict=True
    ):
        np.testing.assert_array_equal(got, want)
    text = both.lower(x).as_text()
    # Each module merged once however often it is called.
    assert text.count('func.func private @"call_exported_<lambda>') == 2
    assert text.count('call @"call_exported_<lambda>') == 3
