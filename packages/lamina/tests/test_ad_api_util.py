"""`lamina.api_util`, `lamina.ad` and `lamina.experimental.custom_partitioning` against JAX
0.10.2's: names, debug info, flattened functions, donation vectors, the `vjp` markers, and the
staged custom_partitioning equation (printed jaxprs, values, errors)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.api_util
import jax.experimental.custom_partitioning as jax_cp
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend import linear_util as jax_lu

import lamina
import lamina.ad
import lamina.api_util
import lamina.experimental.custom_partitioning as lamina_cp
import lamina.numpy as lnp
from lamina.extend import linear_util as lamina_lu

pytestmark = pytest.mark.oracle


def _public(module: Any) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


def test_lazy_modules_have_jax_names() -> None:
    assert _public(lamina.api_util) >= _public(jax.api_util)
    assert _public(lamina.ad) >= _public(jax.ad)
    assert _public(lamina_cp) >= _public(jax_cp)


def _f(x: Any, y: Any = 2, *, z: Any = 3, **kw: Any) -> Any:
    return x


CALLS: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    (_f, (1.0, {"a": [1, 2]}), {}, ()),
    (_f, (1.0,), {"z": (1, 2), "w": 3, "v": {"b": 1}}, ()),
    (_f, (1.0, 2.0), {}, (0,)),
    (_f, (1, 2, 3), {"q": 4}, (1,)),  # does not bind: `args[...]` names
    (lambda *a, **k: a, ((1, 2), 3), {"k": 1}, (-1,)),
    (functools.partial(_f, 1.0), ({"y": 2},), {}, ()),
    (print, (1, 2), {}, ()),
]


@pytest.mark.parametrize(("fun", "args", "kwargs", "static"), CALLS)
def test_debug_info(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], static: tuple[int, ...]
) -> None:
    want = jax.api_util.debug_info("jit", fun, args, kwargs, static_argnums=static)
    got = lamina.api_util.debug_info("jit", fun, args, kwargs, static_argnums=static)
    assert (got.traced_for, got.func_src_info, got.arg_names) == (
        want.traced_for,
        want.func_src_info,
        want.arg_names,
    )


def test_debug_info_static_argnames() -> None:
    args, kwargs = (1.0,), {"z": 2.0, "y": [3.0]}
    want = jax.api_util.debug_info("x", _f, args, kwargs, static_argnames=("z",))
    got = lamina.api_util.debug_info("x", _f, args, kwargs, static_argnames=("z",))
    assert got.arg_names == want.arg_names


def _pair_fn(a: Any, b: Any = 0.0, **kw: Any) -> Any:
    return {"s": (a[0] + b, kw), "t": [a[1]]}


@pytest.mark.parametrize("kwargs", [True, False])
def test_flatten_fun(kwargs: bool) -> None:
    args = ((1.0, 2.0), 3.0)
    outs = []
    for api, lu, tu in (
        (jax.api_util, jax_lu, jax.tree_util),
        (lamina.api_util, lamina_lu, lamina.tree_util),
    ):
        tree_in: Any = (args, {"c": 4.0}) if kwargs else args
        flat, in_tree = tu.tree_flatten(tree_in)
        flatten = api.flatten_fun if kwargs else api.flatten_fun_nokwargs
        fun, out_tree = flatten(lu.wrap_init(_pair_fn, debug_info=None), in_tree)
        out = fun.call_wrapped(*flat)
        outs.append(([float(x) for x in out], str(out_tree())))
    assert outs[0] == outs[1]


def _affine(a: Any, b: Any, c: Any) -> Any:
    return a * b + c


def test_argnums_partial() -> None:
    args = (2.0, 3, 4.0)
    want_f, want_dyn = jax.api_util.argnums_partial(
        jax_lu.wrap_init(_affine, debug_info=None),
        (0, -1),
        args,
    )
    got_f, got_dyn = lamina.api_util.argnums_partial(lamina_lu.wrap_init(_affine), (0, -1), args)
    assert got_dyn == want_dyn
    assert got_f.call_wrapped(*got_dyn) == want_f.call_wrapped(*want_dyn)
    assert got_f.call_wrapped(1.0, 1.0) == want_f.call_wrapped(1.0, 1.0)


def _error(call: Callable[[], Any]) -> tuple[type[BaseException], str]:
    with pytest.raises(Exception) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize(
    ("nums", "args"), [((0, 2), (1.0, [1], 2.0)), ((5,), (1.0,))], ids=["unhashable", "range"]
)
def test_argnums_partial_errors(nums: tuple[int, ...], args: tuple[Any, ...]) -> None:
    want = _error(
        lambda: jax.api_util.argnums_partial(
            jax_lu.wrap_init(_affine, debug_info=None),
            nums,
            args,
        )
    )
    got = _error(lambda: lamina.api_util.argnums_partial(lamina_lu.wrap_init(_affine), nums, args))
    assert got == want


def test_argnums_partial_unhashable_allowed() -> None:
    unhashable_ok, dyn = lamina.api_util.argnums_partial(
        lamina_lu.wrap_init(lambda a, b: a + b[0]), 0, (1.0, [2.0]), False
    )
    assert unhashable_ok.call_wrapped(*dyn) == 3.0


@pytest.mark.parametrize(
    ("donate", "names", "kws"), [((0,), ("z",), True), ((1,), (), True), ((), ("a", "z"), True)]
)
def test_donation_vector(donate: tuple[int, ...], names: tuple[str, ...], kws: bool) -> None:
    tree = ((1, (2, 3)), {"z": (1, 2), "a": 3})
    want = jax.api_util.donation_vector(donate, names, jax.tree_util.tree_structure(tree), kws)
    got = lamina.api_util.donation_vector(donate, names, lamina.tree_util.tree_structure(tree))
    assert got == want
    positional = ((1, 2), [3])
    want = jax.api_util.donation_vector((1,), (), jax.tree.structure(positional), False)
    got = lamina.api_util.donation_vector((1,), (), lamina.tree.structure(positional), False)
    assert got == want


@pytest.mark.parametrize(
    ("donate", "static"),
    [((3, 4), (0, 1)), ((0, 5), (1, 3, 7)), ((2,), ()), ((), (1,)), ((1,), (1,))],
)
def test_rebase_donate_argnums(donate: tuple[int, ...], static: tuple[int, ...]) -> None:
    def run(api: Any) -> Any:
        try:
            return api.rebase_donate_argnums(donate, static)
        except ValueError as e:
            return str(e)

    assert run(lamina.api_util) == run(jax.api_util)


@pytest.mark.parametrize("lists", [([1, 2], [3, 4]), ([1, 2], [1]), ([1], [1, 2], [3]), ()])
def test_safe_map(lists: tuple[list[int], ...]) -> None:
    def run(api: Any) -> Any:
        try:
            return api.safe_map(lambda *xs: sum(xs), *lists)
        except (ValueError, TypeError) as e:
            return type(e), str(e)

    assert run(lamina.api_util) == run(jax.api_util)


def test_shaped_abstractify_and_flatten_axes() -> None:
    jax_api_util: Any = jax.api_util  # its helpers are untyped
    for x in (1.0, np.ones((2, 3), np.int16), True):
        aval = lamina.api_util.shaped_abstractify(x)
        assert aval.str_short() == jax_api_util.shaped_abstractify(x).str_short()
    tree = ((1, 2), {"a": 3})
    want = jax_api_util.flatten_axes("vmap in_axes", jax.tree.structure(tree), (0, {"a": None}))
    got = lamina.api_util.flatten_axes(
        "vmap in_axes", lamina.tree.structure(tree), (0, {"a": None})
    )
    assert got == want


@pytest.mark.parametrize("name", ["DontWant", "DidntWant", "GradRef", "GradValue"])
def test_ad_markers(name: str) -> None:
    mine, theirs = getattr(lamina.ad, name)(), getattr(jax.ad, name)()
    assert repr(mine) == repr(theirs)
    assert mine == getattr(lamina.ad, name)() and hash(mine) == hash(getattr(lamina.ad, name)())
    assert len(lamina.tree.leaves(mine)) == len(jax.tree.leaves(theirs))
    assert str(lamina.tree.structure(mine)) == str(jax.tree.structure(theirs))


def _partition(*args: Any) -> Any:
    return None


def _staged(cp: Any, np_: Any, **partition: Any) -> Any:
    def fun(x: Any, y: Any) -> Any:
        return {"s": np_.sin(x) * 2, "p": x * y[0]}

    f = cp.custom_partitioning(fun)
    f.def_partition(partition=_partition, **partition)
    return f


def _with_static(cp: Any, np_: Any) -> Any:
    def g(n: int, x: Any) -> Any:
        return np_.cos(x) + n

    f = cp.custom_partitioning(g, static_argnums=(0,))
    f.def_partition(_partition, sharding_rule="i j -> i j")
    return f


RULES: list[dict[str, Any]] = [
    {"sharding_rule": "i, i -> i, i"},
    {"sharding_rule": "..., (a b) -> ... a", "b": 2, "reduction_factors": ("a",)},
    {},
]


@pytest.mark.parametrize("partition", RULES)
def test_custom_partitioning_jaxpr_and_values(partition: dict[str, Any]) -> None:
    jf, lf = _staged(jax_cp, jnp, **partition), _staged(lamina_cp, lnp, **partition)
    x, y = np.float32(0.5), (np.float32(3.0),)
    assert str(lamina.make_jaxpr(lf)(x, y)) == str(jax.make_jaxpr(jf)(x, y))
    want = jf(x, y)
    for got in (lf(x, y), lamina.jit(lf)(x, y), lf(x, y=y)):
        np.testing.assert_allclose(got["s"], want["s"], rtol=1e-6)
        np.testing.assert_allclose(got["p"], want["p"], rtol=1e-6)


def test_custom_partitioning_static_argnums() -> None:
    jf, lf = _with_static(jax_cp, jnp), _with_static(lamina_cp, lnp)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert str(lamina.make_jaxpr(lf, static_argnums=0)(3, x)) == str(
        jax.make_jaxpr(jf, static_argnums=0)(3, x)
    )
    np.testing.assert_allclose(lamina.jit(lf, static_argnums=0)(3, x), jf(3, x), rtol=1e-6)


def test_custom_partitioning_has_no_autodiff_or_batching_rule() -> None:
    jf, lf = _with_static(jax_cp, jnp), _with_static(lamina_cp, lnp)
    x = np.ones((2, 2), np.float32)
    want = _error(lambda: jax.jvp(functools.partial(jf, 1), (x,), (x,)))
    assert _error(lambda: lamina.jvp(functools.partial(lf, 1), (x,), (x,))) == want
    want = _error(lambda: jax.vmap(functools.partial(jf, 1))(x[None]))
    assert _error(lambda: lamina.vmap(functools.partial(lf, 1))(x[None])) == want


def _raise_or_str(make: Callable[[], Any]) -> tuple[str, str]:
    try:
        return "ok", str(make())
    except (ValueError, TypeError) as e:
        return type(e).__name__, str(e)


def test_sharding_rules_from_strings() -> None:
    from jax._src.custom_partitioning_sharding_rule import str_to_sdy_sharding_rule as jax_rule

    from lamina.experimental._sdy_sharding_rule import str_to_sdy_sharding_rule as lamina_rule

    cases: list[tuple[str, dict[str, Any]]] = [
        ("i j, j k -> i k", {}),
        ("... i, (j k) -> ...2 i j", {"k": 2}),
        ("i j -> ", {"reduction_factors": ("j",), "need_replication_factors": ("i",)}),
        ("i j", {}),
        ("i, (k) -> i", {}),
        ("1i -> i", {}),
        ("i -> (a b)", {}),
        ("i -> i", {"i": 2}),
        ("i . -> i", {}),
        ("i ((a b)) -> i", {}),
        ("i -> i", {"permutation_factors": ("i", "i")}),
        ("i ... -> i", {}),
        ("i$ -> i", {}),
    ]
    for rule, extra in cases:
        want = _raise_or_str(lambda: jax_rule(rule, **extra))  # noqa: B023
        got = _raise_or_str(lambda: lamina_rule(rule, **extra))  # noqa: B023
        assert got == want, rule


def test_mappings_and_factors() -> None:
    for api in (jax_cp, lamina_cp):
        assert api.BATCHING == "…"
    builders: list[Callable[[Any], Any]] = [
        lambda m: m.CompoundFactor("a", "b"),
        lambda m: m.CompoundFactor("a"),
        lambda m: m.CompoundFactor("a", m.BATCHING),
        lambda m: m.ArrayMapping(m.BATCHING, m.CompoundFactor("x", "y"), "z"),
        lambda m: m.ArrayMapping("z", m.BATCHING),
        lambda m: m.ArrayMapping("z", 1),
        lambda m: m.SdyShardingRule((m.ArrayMapping("a"),), (m.ArrayMapping("a"),), a=2),
        lambda m: m.SdyShardingRule(
            (m.ArrayMapping(m.CompoundFactor("a", "b")),), (m.ArrayMapping("a"),), b=3
        ),
    ]
    for build in builders:
        assert _raise_or_str(lambda: build(lamina_cp)) == _raise_or_str(  # noqa: B023
            lambda: build(jax_cp)  # noqa: B023
        )


def test_def_partition_errors() -> None:
    for extra in ({"sharding_rule": None, "k": 2}, {"reduction_factors": ("i",)}):
        lf = _staged(lamina_cp, lnp)
        jf = _staged(jax_cp, jnp)
        assert _error(lambda: lf.def_partition(_partition, **extra)) == _error(  # noqa: B023
            lambda: jf.def_partition(_partition, **extra)  # noqa: B023
        )
    # GSPMD propagation callbacks without a Shardy rule: JAX (Shardy on) refuses at the call.
    lf, jf = _staged(lamina_cp, lnp), _staged(jax_cp, jnp)
    lf.def_partition(_partition, infer_sharding_from_operands=_partition)
    jf.def_partition(_partition, infer_sharding_from_operands=_partition)
    args = (np.float32(1.0), (np.float32(2.0),))
    assert _error(lambda: lf(*args)) == _error(lambda: jf(*args))


def test_import_lamina_leaves_them_unloaded() -> None:
    import subprocess
    import sys

    modules = ("lamina.ad", "lamina.api_util", "lamina.experimental.custom_partitioning")
    code = f"import sys, lamina; print([m for m in {modules!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
