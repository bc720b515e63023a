"""Printing and tracing options against JAX 0.10.2 (issue 36 item 4), byte for byte:
`pretty_print(use_color=, source_info=, name_stack=, print_effects=)` of jaxprs and closed
jaxprs, `str` as `pretty_print()`, the document engine's colors and annotation column (random
documents through both engines), `make_jaxpr(axis_env=, return_shape=)` and its name,
`ShapeDtypeStruct.like`/`update`, and pytree equality errors.
"""

from __future__ import annotations

import random
from typing import Any

import jax
import numpy as np
import pytest
from jax._src import pretty_printer as jpp
from jax._src import tree_util as jtu

import lamina
import lamina.numpy as lnp
from lamina_core.ir import pp as lpp
from lamina_core.tree import equality_errors

pytestmark = pytest.mark.oracle


def program(api: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        z = api.numpy.sin(x) * y + 1.0
        w = api.lax.cond(x[0] > 0, lambda: z, lambda: -z)
        return api.jit(lambda a: a * 2)(w)

    return api.make_jaxpr(f)(np.ones(3, np.float32), 2.0)


OPTIONS = [
    {},
    {"use_color": False},
    {"use_color": True},
    {"name_stack": True},
    {"print_effects": True},
    {"use_color": True, "name_stack": True, "print_effects": True},
    {"print_shapes": False, "use_color": True},
    {"width": 40, "use_color": True},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_pretty_print_options_print_as_jax(options: dict[str, Any]) -> None:
    theirs, ours = program(jax), program(lamina)
    assert ours.pretty_print(**options) == theirs.pretty_print(**options)
    assert ours.jaxpr.pretty_print(**options) == theirs.jaxpr.pretty_print(**options)


def test_str_is_pretty_print_as_jax() -> None:
    ours = program(lamina)
    assert str(ours) == ours.pretty_print() == str(ours.jaxpr) == repr(ours)
    assert str(ours) == str(program(jax))


def test_source_info_annotations_print_as_jax() -> None:
    def f(x: Any) -> Any:
        return x * 2.0 + 1.0

    texts = [
        api.make_jaxpr(f)(np.ones(3, np.float32)).pretty_print(source_info=True, use_color=c)
        for c in (False, True)
        for api in (jax, lamina)
    ]
    assert texts[0] == texts[1] and texts[2] == texts[3]


def test_refs_print_green_as_jax() -> None:
    def f(api: Any) -> Any:
        def g(x: Any) -> Any:
            r = api.new_ref(x)
            r[...] += 1.0
            r[0] = 2.0
            return r[...] + r[1]

        return api.make_jaxpr(g)(np.ones(3, np.float32)).pretty_print(use_color=True)

    assert f(lamina) == f(jax)


def _random_docs(rng: random.Random, depth: int = 0) -> tuple[Any, Any]:
    """The same random document for JAX's engine and Lamina's."""
    kind = rng.randrange(8 if depth < 4 else 3)
    if kind == 0:
        s, note = rng.choice(["", "a", "bb", "ccc dd"]), rng.choice([None, None, "n", "note2"])
        return jpp.text(s, annotation=note), lpp.text(s, note)
    if kind == 1:
        s = rng.choice([" ", "", "; "])
        return jpp.brk(s), lpp.brk(s)
    if kind == 2:
        return jpp.nil(), lpp.NIL
    if kind == 3:
        kids = [_random_docs(rng, depth + 1) for _ in range(rng.randrange(4))]
        return jpp.concat([a for a, _ in kids]), lpp.concat([b for _, b in kids])
    if kind == 4:
        n = rng.randrange(4)
        a, b = _random_docs(rng, depth + 1)
        return jpp.nest(n, a), lpp.nest(n, b)
    if kind == 5:
        a, b = _random_docs(rng, depth + 1)
        return jpp.group(a), lpp.group(b)
    fg = rng.choice([None, "BLUE", "GREEN", "MAGENTA", "RESET"])
    bg = rng.choice([None, None, "RED"])
    it = rng.choice([None, "DIM", "BRIGHT", "NORMAL"])
    a, b = _random_docs(rng, depth + 1)

    def pick(enum: Any, name: str | None) -> Any:
        return None if name is None else getattr(enum, name)

    return (
        jpp.color(a, pick(jpp.Color, fg), pick(jpp.Color, bg), pick(jpp.Intensity, it)),
        lpp.color(b, pick(lpp.Color, fg), pick(lpp.Color, bg), pick(lpp.Intensity, it)),
    )


@pytest.mark.parametrize("seed", range(0, 1500, 100))
def test_document_engine_lays_out_and_colors_as_jax(seed: int) -> None:
    for s in range(seed, seed + 100):
        rng = random.Random(s)
        theirs, ours = _random_docs(rng)
        width = rng.choice([3, 10, 80])
        for color in (False, True):
            assert lpp.format_doc(ours, width, color) == theirs.format(
                width=width, use_color=color
            ), (s, width, color)


def test_make_jaxpr_axis_env_and_return_shape_as_jax() -> None:
    def f(x: Any, api: Any) -> Any:
        return api.lax.psum(x, "i") * api.lax.axis_index("i")

    got = [
        api.make_jaxpr(lambda x, api=api: f(x, api), axis_env=[("i", 4)], return_shape=True)(
            np.ones(3, np.float32)
        )
        for api in (jax, lamina)
    ]
    assert str(got[1][0]) == str(got[0][0])
    assert repr(got[1][1]) == repr(got[0][1])
    positional = lamina.make_jaxpr(lambda x: lamina.lax.psum(x, "j"), (), [("j", 2)])(1.0)
    assert "psum[axes=('j',)" in str(positional)


def test_make_jaxpr_is_named_as_jax() -> None:
    def my_fun(x: Any) -> Any:
        return x

    for api in (jax, lamina):
        made = api.make_jaxpr(my_fun)
        assert made.__name__ == "make_jaxpr(my_fun)"
        assert made.__qualname__.startswith("make_jaxpr(test_make_jaxpr_is_named_as_jax.")


def test_make_jaxpr_of_a_non_array_is_jax_error() -> None:
    messages = []
    for api in (jax, lamina):
        with pytest.raises(TypeError) as caught:
            api.make_jaxpr(lambda x: x)(object())
        messages.append(str(caught.value).split(" at 0x")[1].split(">", 1)[1])
    assert messages[0] == messages[1]


def _structs(api: Any) -> list[str]:
    s = api.ShapeDtypeStruct((2, 3), np.float32)
    return [
        repr(s.update(shape=(4,))),
        repr(s.update(dtype=np.int32, weak_type=True)),
        repr(s.update()),
        repr(api.ShapeDtypeStruct.like(api.numpy.ones((2,), np.int32))),
        repr(api.ShapeDtypeStruct.like(np.ones(3))),
        repr(api.ShapeDtypeStruct.like(2.0)),
        repr(api.ShapeDtypeStruct.like(s)),
        repr(api.ShapeDtypeStruct.like(api.ShapeDtypeStruct((), np.int8, weak_type=True))),
        repr(api.ShapeDtypeStruct((5,), np.float64)),
        str((s.size, s.ndim, len(s), s.format)),
        str(s == api.ShapeDtypeStruct([2, 3], "float32")),
        str(hash(s) == hash(api.ShapeDtypeStruct((2, 3), np.float32))),
    ]


def test_shape_dtype_struct_like_and_update_as_jax() -> None:
    assert _structs(lamina) == _structs(jax)


def test_shape_dtype_struct_like_of_a_tracer_as_jax() -> None:
    seen = []
    for api in (jax, lamina):
        api.make_jaxpr(lambda x, api=api: seen.append(repr(api.ShapeDtypeStruct.like(x))))(
            np.ones(2, np.float32)
        )
    assert seen[0] == seen[1]


def test_shape_dtype_struct_errors_as_jax() -> None:
    def makers(api: Any) -> list[Any]:
        spec = api.sharding.PartitionSpec("x")
        return [
            lambda: api.ShapeDtypeStruct((2,), None),
            lambda: len(api.ShapeDtypeStruct((), np.float32)),
            lambda: api.ShapeDtypeStruct((2,), np.float32, sharding=spec).sharding,
        ]

    messages = []
    for api in (jax, lamina):
        for make in makers(api):
            with pytest.raises((ValueError, TypeError)) as caught:
                make()
            messages.append(f"{caught.type.__name__}: {caught.value}")
    assert messages[:3] == messages[3:]


TREES = [
    ((1, 2), (1, 2, 3)),
    ([1], (1,)),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    ({"a": 1}, {"a": 1, "b": 2}),
    ({"a": [1, (2, 3)], "b": None}, {"a": [1, (2, [3])], "b": None}),
    ((1, {"x": 1}), (1, {"x": 1, "y": 2})),
    ((None,), (1,)),
]


@pytest.mark.parametrize("trees", TREES, ids=str)
def test_equality_errors_as_jax(trees: tuple[Any, Any]) -> None:
    theirs = [(jax.tree_util.keystr(p), *rest) for p, *rest in jtu.equality_errors(*trees)]
    ours = [(lamina.tree_util.keystr(p), *rest) for p, *rest in equality_errors(*trees)]
    assert ours == theirs


def test_jit_equation_prints_as_jax_in_color() -> None:
    f = lambda x: lnp.sum(x)  # noqa: E731
    g = lambda x: jax.numpy.sum(x)  # noqa: E731
    ours = lamina.make_jaxpr(lamina.jit(f))(np.ones(3, np.float32)).pretty_print(use_color=True)
    theirs_jaxpr: Any = jax.make_jaxpr(jax.jit(g))(np.ones(3, np.float32))
    theirs = theirs_jaxpr.pretty_print(use_color=True)
    assert ours == theirs


def test_ipython_display_is_colored_as_jax() -> None:
    shown: list[str] = []

    class FakePrinter:
        def text(self, s: str) -> None:
            shown.append(s)

    for closed in (program(jax), program(lamina)):
        closed._repr_pretty_(FakePrinter(), False)
        closed.jaxpr._repr_pretty_(FakePrinter(), False)
    assert shown[:2] == shown[2:]
    assert "\x1b[34;1mlambda" in shown[2]
