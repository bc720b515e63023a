"""Leftovers of issues 36 and 37 against JAX 0.10.2, byte for byte: each equation's name
stack as `pretty_print(name_stack=True)` prints it (named scopes, `named_call`, and the
`jvp`/`vmap`/`transpose` transformations wrapping them, relative to the jaxpr the equation is
in), and `print_effects=True` in color; HLO module headers of donating sharded programs;
`args_info` of hi-typed arguments.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import lamina

pytestmark = pytest.mark.oracle

X = np.ones(3, np.float32)
XS = np.ones((2, 3), np.float32)


def _scoped(api: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        with api.named_scope("outer"):
            y = api.numpy.sin(x)
            with api.named_scope("inner"):
                z = y * 2.0
        return api.jit(lambda a: a + 1.0)(z) + x

    return f


def _with_jit_and_cond(api: Any) -> Callable[[Any], Any]:
    def in_jit(a: Any) -> Any:
        with api.named_scope("in_jit"):
            return api.numpy.sin(a) * 2.0

    g = api.jit(in_jit)

    def f(x: Any) -> Any:
        with api.named_scope("outer"):
            y = g(x)
            z = api.lax.cond(x.sum() > 0, lambda: api.numpy.cos(y), lambda: y)
        return z.sum()

    return f


def _with_scan(api: Any) -> Callable[[Any], Any]:
    def h(x: Any) -> Any:
        with api.named_scope("s"):
            c = api.lax.scan(lambda c, e: (c * e, api.numpy.sin(c)), x[0], x)
            w = api.lax.stop_gradient(
                api.lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x[0])
            )
        return c[0] + w

    return h


def _rematted(api: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        with api.named_scope("outer"):
            y = api.checkpoint(lambda a: api.numpy.sin(a) * 2)(x)

            def g(a: Any) -> Any:
                with api.named_scope("inner"):
                    return api.numpy.cos(a)

            return api.checkpoint(g)(y).sum()

    return f


def _custom_rules(api: Any) -> Callable[[Any], Any]:
    cj = api.custom_jvp(api.numpy.sin)

    def rule(p: Any, t: Any) -> Any:
        with api.named_scope("rule"):
            return cj(p[0]), 2 * t[0] * p[0]

    cj.defjvp(rule)

    cv = api.custom_vjp(api.numpy.sin)
    cv.defvjp(lambda x: (api.numpy.sin(x), x), lambda r, g: (g * r,))

    def f(x: Any) -> Any:
        with api.named_scope("outer"):
            return cj(x).sum() + cv(x).sum()

    return f


def _under_scope(api: Any, transform: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        with api.named_scope("top"):
            return transform(x)

    return f


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "scopes": lambda api: api.make_jaxpr(_scoped(api))(X),
    "grad": lambda api: api.make_jaxpr(api.grad(lambda x: _scoped(api)(x).sum()))(X),
    "vmap": lambda api: api.make_jaxpr(api.vmap(_scoped(api)))(XS),
    "jvp": lambda api: api.make_jaxpr(lambda x: api.jvp(_scoped(api), (x,), (x,)))(X),
    "named_call": lambda api: api.make_jaxpr(api.named_call(_scoped(api), name="nc"))(X),
    "jit_cond_grad": lambda api: api.make_jaxpr(api.grad(_with_jit_and_cond(api)))(X),
    "jit_cond_vmap": lambda api: api.make_jaxpr(api.vmap(_with_jit_and_cond(api)))(XS),
    "jacfwd": lambda api: api.make_jaxpr(api.jacfwd(_with_jit_and_cond(api)))(X),
    "scan_grad": lambda api: api.make_jaxpr(api.grad(_with_scan(api)))(X),
    "scan_vmap_grad": lambda api: api.make_jaxpr(api.vmap(api.grad(_with_scan(api))))(XS),
    "linearize": lambda api: api.make_jaxpr(lambda x: api.linearize(_with_scan(api), x)[1](x))(X),
    # JAX's remat names its recomputation `rematted_computation` and, under linearization,
    # its equation (as the tangent equations of a custom_jvp rule) twice over: see
    # `tangents_named_under_whole_stack`.
    "remat_grad": lambda api: api.make_jaxpr(api.grad(_rematted(api)))(X),
    "remat_vmap_grad": lambda api: api.make_jaxpr(api.vmap(api.grad(_rematted(api))))(XS),
    "remat_linearize": lambda api: api.make_jaxpr(lambda x: api.linearize(_rematted(api), x)[1](x))(
        X
    ),
    "remat_grad_in_scope": lambda api: api.make_jaxpr(_under_scope(api, api.grad(_rematted(api))))(
        X
    ),
    "remat_grad_grad": lambda api: api.make_jaxpr(api.grad(api.grad(_rematted(api))))(
        np.float32(1.0)
    ),
    "custom_grad": lambda api: api.make_jaxpr(api.grad(_custom_rules(api)))(X),
    "custom_vmap_grad": lambda api: api.make_jaxpr(api.vmap(api.grad(_custom_rules(api))))(XS),
    "custom_linearize": lambda api: api.make_jaxpr(
        lambda x: api.linearize(_custom_rules(api), x)[1](x)
    )(X),
    "custom_grad_in_scope": lambda api: api.make_jaxpr(
        _under_scope(api, api.grad(_custom_rules(api)))
    )(X),
    "linear_transpose": lambda api: api.make_jaxpr(
        api.linear_transpose(lambda t: api.named_call(api.numpy.negative, name="nn")(t) + t, X)
    )(X),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_name_stacks_print_as_jax(name: str) -> None:
    theirs, ours = PROGRAMS[name](jax), PROGRAMS[name](lamina)
    for options in ({"name_stack": True}, {"name_stack": True, "use_color": True}):
        assert ours.pretty_print(**options) == theirs.pretty_print(**options)
    assert str(ours) == str(theirs)


def test_scope_opened_outside_make_jaxpr_is_not_recorded_as_jax() -> None:
    texts = []
    for api in (jax, lamina):
        with api.named_scope("outside"):
            made = api.make_jaxpr(_with_jit_and_cond(api))(X)
        texts.append(made.pretty_print(name_stack=True))
    assert texts[0] == texts[1]
    assert "outside" not in texts[1] and "[outer]" in texts[1]


def _effectful(api: Any) -> list[Any]:
    def printing(x: Any) -> Any:
        api.debug.print("x={}", x)
        return api.jit(lambda a: a * 2)(x)

    def calling_back(x: Any) -> Any:
        out = api.ShapeDtypeStruct((3,), np.float32)
        y = api.experimental.io_callback(lambda a: a, out, x, ordered=True)
        return api.jit(lambda a: api.experimental.io_callback(np.sin, out, a, ordered=True))(y)

    def one_branch_prints(p: Any, x: Any) -> Any:
        def loud(a: Any) -> Any:
            api.debug.print("a={}", a)
            return a + 1

        return api.lax.cond(p, loud, lambda a: a * 2, x)

    def one_of_three_calls_back(i: Any, x: Any) -> Any:
        out = api.ShapeDtypeStruct((3,), np.float32)
        branches = [
            lambda a: a,
            lambda a: api.experimental.io_callback(np.sin, out, a, ordered=True),
            lambda a: api.numpy.cos(a),
        ]
        return api.lax.switch(i, branches, x)

    return [
        api.make_jaxpr(printing)(X),
        api.make_jaxpr(calling_back)(X),
        # Every branch is typed with the effects of all (an effect-free one included).
        api.make_jaxpr(one_branch_prints)(True, X),
        api.make_jaxpr(one_of_three_calls_back)(1, X),
    ]


def test_effects_print_in_color_as_jax() -> None:
    for theirs, ours in zip(_effectful(jax), _effectful(lamina), strict=True):
        for options in (
            {"print_effects": True},
            {"print_effects": True, "use_color": True},
            {"print_effects": True, "use_color": True, "name_stack": True},
        ):
            assert ours.pretty_print(**options) == theirs.pretty_print(**options)
            assert ours.jaxpr.pretty_print(**options) == theirs.jaxpr.pretty_print(**options)


def _donating(api: Any) -> list[Any]:
    P = api.sharding.PartitionSpec
    mesh = api.sharding.Mesh(np.array(api.devices()).reshape(4, 2), ("x", "y"))
    split = api.sharding.NamedSharding(mesh, P("x", "y"))
    whole = api.sharding.NamedSharding(mesh, P())
    x = np.ones((8, 4), np.float32)

    def f(a: Any, b: Any) -> Any:
        return a @ b.T, b * 2

    return [
        api.jit(f, donate_argnums=1).lower(x, x),
        api.jit(f, in_shardings=(split, whole), donate_argnums=1).lower(x, x),
        api.jit(
            f, in_shardings=(split, whole), out_shardings=(split, whole), donate_argnums=1
        ).lower(x, x),
        api.jit(f, out_shardings=(split, None), donate_argnums=1).lower(x, x),
        api.jit(f, out_shardings=(None, split), donate_argnums=1).lower(x, x),
        api.jit(f, donate_argnums=1).lower(x, api.device_put(x, split)),
    ]


def test_hlo_module_header_of_donating_sharded_programs_as_jax() -> None:
    """Over several devices, an output whose sharding is left to XLA makes donated inputs
    XLA's buffer donors (`buffer_donor=`), not aliases chosen by the lowering."""
    theirs, ours = _donating(jax), _donating(lamina)
    headers = [
        [low.as_text(dialect="hlo").splitlines()[0] for low in lowered]
        for lowered in (theirs, ours)
    ]
    assert headers[1] == headers[0]
    assert sum("buffer_donor={ (1, {}) }" in h for h in headers[1]) == 4
    # XLA aliases a donor when it compiles, as JAX's.
    compiled = ours[1].compile().as_text().splitlines()[0]
    assert "input_output_alias={ {1}: (1, {}, may-alias) }" in compiled


def test_compiled_header_of_sharded_programs_as_jax() -> None:
    """XLA is told which parameters and outputs it may place as it chooses (those the caller
    gave no sharding), as JAX's jit tells it: the compiled module's header and the placements
    are JAX's. (One device has nothing to place: Lamina does not say it.)"""
    theirs, ours = _donating(jax)[1:], _donating(lamina)[1:]
    for mine, jaxs in zip(ours, theirs, strict=True):
        mine_c, jaxs_c = mine.compile(), jaxs.compile()
        assert mine_c.as_text().splitlines()[0] == jaxs_c.as_text().splitlines()[0]
        assert repr(mine_c.output_shardings) == repr(jaxs_c.output_shardings)
        # Where XLA chose an input's placement JAX reports a GSPMDSharding: compare placements.
        for a, b in zip(mine_c.input_shardings[0], jaxs_c.input_shardings[0], strict=True):
            assert _placed((8, 4), a) == _placed((8, 4), b)


def _placed(shape: tuple[int, ...], sharding: Any) -> dict[int, Any]:
    return {d.id: str(i) for d, i in sharding.devices_indices_map(shape).items()}


def _hi_stages(api: Any) -> list[str]:
    """A jitted function of a hi-typed argument (a quantized array made of two arrays) and an
    array, lowered and compiled: what its stages say of their arguments."""
    hijax = importlib.import_module(f"{api.__name__}.experimental.hijax")
    int8, float32 = np.dtype("int8"), np.dtype("float32")

    @dataclasses.dataclass(frozen=True)
    class QArray:
        qvalue: Any
        scale: Any

    @dataclasses.dataclass(frozen=True)
    class QArrayTy(hijax.HiType):  # type: ignore[misc, name-defined]
        shape: tuple[int, ...]

        def lo_ty(self) -> list[Any]:
            return [
                hijax.ShapedArray(self.shape, int8),
                hijax.ShapedArray(self.shape[:-1], float32),
            ]

        def lower_val(self, q: QArray) -> list[Any]:
            return [q.qvalue, q.scale]

        def raise_val(self, qvalue: Any, scale: Any) -> QArray:
            return QArray(qvalue, scale)

        def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
            return f"q8[{','.join(map(str, self.shape))}]"

    hijax.register_hitype(QArray, lambda q: QArrayTy(q.qvalue.shape))
    q = QArray(np.ones((2, 3), int8), np.ones((2,), float32))
    jitted = api.jit(lambda q, x: (q, x * 2), donate_argnums=1)
    traced = jitted.trace(q, X)
    lowered = jitted.lower(q, X)
    compiled = lowered.compile()
    return [
        repr(traced.args_info),
        str(traced.in_tree),
        *(
            text
            for stage in (lowered, compiled)
            for text in (
                repr(stage.args_info),
                str(stage.in_tree),
                repr(stage.in_avals),
                repr(stage.donate_argnums),
            )
        ),
    ]


def test_args_info_of_a_hi_typed_argument_as_jax() -> None:
    """Lowered and compiled, each argument of a program with hi-typed arguments is the list
    of the arrays it is made of; traced, it is its hi type."""
    ours = _hi_stages(lamina)
    assert ours == _hi_stages(jax)
    assert "[ArgInfo(_aval=ShapedArray(int8[2,3])" in ours[2]


SORTED = np.array([-np.inf, -1.0, -0.0, 2.0, 2.0, 5.0, np.nan], np.float32)
QUERIES = np.array([[np.nan, 0.0], [2.0, -np.inf], [7.0, -0.0]], np.float32)


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_searchsorted_prints_and_computes_as_jax(method: str) -> None:
    for side in ("left", "right"):
        args: list[tuple[Any, Any]] = [
            (SORTED, QUERIES),
            (np.array([1, 3, 3, 9], np.int32), np.int32(3)),
            (
                np.array([1 + 1j, 1 + 2j, 3 + 0j], np.complex64),
                np.array([1 + 2j, 0j], np.complex64),
            ),
        ]
        for a, v in args:
            texts = [
                str(api.make_jaxpr(lambda a, v, api=api, side=side: api.numpy.searchsorted(
                    a, v, side=side, method=method))(a, v))
                for api in (jax, lamina)
            ]  # fmt: skip
            assert texts[1] == texts[0], (side, a.dtype)
            theirs = jax.numpy.searchsorted(a, v, side=side, method=method)
            ours = lamina.numpy.searchsorted(a, v, side=side, method=method)
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
            assert ours.dtype == theirs.dtype


def test_searchsorted_of_an_empty_array_and_digitize_as_jax() -> None:
    for api in (jax, lamina):
        assert api.numpy.searchsorted(np.zeros(0, np.float32), QUERIES).tolist() == [[0, 0]] * 3
    for right in (False, True):
        texts = [
            str(
                api.make_jaxpr(
                    lambda x, bins, api=api, right=right: api.numpy.digitize(x, bins, right)
                )(QUERIES, SORTED[1:6])
            )
            for api in (jax, lamina)
        ]
        assert texts[1] == texts[0]


def _ragged_transposed(api: Any) -> Any:
    """The linear transpose of `ragged_all_to_all` (in its operand and output buffer) inside
    a `shard_map` over two devices, traced."""
    P = api.sharding.PartitionSpec
    mesh = api.sharding.Mesh(np.array(api.devices()[:2]), ("x",))

    def body(op: Any, out: Any, *offsets_and_sizes: Any) -> Any:
        def exchange(o: Any, u: Any) -> Any:
            return api.lax.ragged_all_to_all(o, u, *offsets_and_sizes, axis_name="x")

        return api.linear_transpose(exchange, op, out)(op)

    g = api.shard_map(body, mesh=mesh, in_specs=(P("x"),) * 6, out_specs=(P("x"), P("x")))
    offsets, sizes = np.array([0, 2, 0, 2], np.int32), np.array([2, 2, 2, 2], np.int32)
    rows = np.ones((8, 3), np.float32)
    return api.make_jaxpr(g)(rows, rows * 0, offsets, sizes, offsets, sizes)


def test_ragged_all_to_all_transposes_as_jax() -> None:
    ours = str(_ragged_transposed(lamina))
    assert ours == str(_ragged_transposed(jax))
    assert ours.count("ragged_all_to_all[") == 1 and "cumsum" in ours


def _scoped_locations(api: Any, fun: Callable[[Any], Any], x: Any) -> set[str]:
    text = api.jit(fun).lower(x).as_text(debug_info=True)
    return {n for n in re.findall(r'loc\("([^"]*)"\(#', text) if "outer" in n}


@pytest.mark.parametrize("transform", ["none", "grad", "vmap_grad", "grad_checkpoint"])
def test_op_locations_carry_name_stacks_as_jax(transform: str) -> None:
    """Each op's location names the scopes and transformations its equation was traced under
    (`jit(f)/transpose(jvp(outer))/mul`), as JAX's; control-flow bodies nest below them."""

    def program(api: Any) -> tuple[Callable[[Any], Any], Any]:
        def f(x: Any) -> Any:
            with api.named_scope("outer"):
                y = api.numpy.sin(x)
                with api.named_scope("inner"):
                    z = y * 2
                z = api.lax.cond(z.sum() > 0, api.numpy.cos, lambda a: a, z)
            return (z + 1).sum()

        return {
            "none": (f, X),
            "grad": (api.grad(f), X),
            "vmap_grad": (api.vmap(api.grad(f)), XS),
            "grad_checkpoint": (api.grad(api.checkpoint(f)), X),
        }[transform]

    theirs, ours = (_scoped_locations(api, *program(api)) for api in (jax, lamina))
    assert ours == theirs
    assert theirs  # the program has scoped ops
