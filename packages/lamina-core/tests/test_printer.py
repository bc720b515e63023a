"""The jaxpr printer: layout, naming, sharing and settings (golden texts are JAX 0.10.2's)."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pytest

import lamina_core as lc
from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.ir import _pp as pp
from lamina_core.ir import _pretty
from lamina_core.ir._avals import AbstractValue, ShapedArray
from lamina_core.ir._effects import Effect

f32 = np.float32


def golden(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# A cond-like primitive whose only param is a tuple of jaxprs, to exercise sharing.
test_cond_p = lc.Primitive("cond")


@lc.abstract_eval_rules.register(test_cond_p)
def _test_cond_abstract_eval(
    index: AbstractValue, *args: AbstractValue, branches: tuple[lc.ClosedJaxpr, ...]
) -> AbstractValue:
    return branches[0].out_avals[0]


def _sins(n: int) -> Any:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = jnp.sin(x)
        return x

    return f


def test_two_equations_print_on_one_line() -> None:
    text = str(lc.make_jaxpr(lambda x: jnp.cos(jnp.sin(x)))(f32(1)))
    assert text == "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = cos b in (c,) }"


def test_empty_jaxprs_print_two_spaces_after_let() -> None:
    assert str(lc.make_jaxpr(lambda: ())()) == "{ lambda ; . let  in () }"
    assert str(lc.make_jaxpr(lambda x: x)(f32(1))) == "{ lambda ; a:f32[]. let  in (a,) }"


def test_names_go_past_z_to_ba() -> None:
    text = str(lc.make_jaxpr(_sins(27))(f32(1)))
    assert "    z:f32[] = sin y\n    ba:f32[] = sin z\n    bb:f32[] = sin ba\n" in text


def test_print_shapes_false_drops_binder_types() -> None:
    closed = lc.make_jaxpr(lambda x, y: (x + y, x * y))(f32(1), f32(2))
    assert closed.pretty_print(print_shapes=False) == (
        "{ lambda ; a b. let c = add a b; d = mul a b in (c, d) }"
    )


def test_unused_top_level_outputs_print_as_underscore() -> None:
    closed = lc.make_jaxpr(lambda x, y: (jnp.sin(x), jnp.cos(x))[0])(f32(1), f32(2))
    assert (
        str(closed) == "{ lambda ; a:f32[] b:f32[]. let c:f32[] = sin a; _:f32[] = cos a in (c,) }"
    )


def test_a_group_of_exactly_eighty_columns_stays_flat() -> None:
    doc = pp.group(pp.concat([pp.text("a" * 40), pp.brk(), pp.text("b" * 39)]))
    assert pp.format_doc(pp.concat([doc, pp.text(" }")])) == "a" * 40 + " " + "b" * 39 + " }"
    wider = pp.group(pp.concat([pp.text("a" * 40), pp.brk(), pp.text("b" * 40)]))
    assert pp.format_doc(wider) == "a" * 40 + "\n" + "b" * 40


def test_separator_groups_fill_lines() -> None:
    docs = [pp.text(f"v{i:02d}") for i in range(30)]
    line = pp.nest(4, pp.group(pp.join(pp.group(pp.brk()), docs)))
    out = pp.format_doc(line, width=20)
    # A separator is measured alone, so a line may run one name past the width, as JAX's.
    assert out.splitlines()[0] == "v00 v01 v02 v03 v04 v05"
    assert out.splitlines()[1] == "    v06 v07 v08 v09 v10"
    assert all(len(row) <= 23 for row in out.splitlines())


def test_eleven_equation_branch_is_shared_and_named_jaxpr() -> None:
    big = lc.make_jaxpr(_sins(11))(f32(1))
    small = lc.make_jaxpr(lambda x: x)(f32(1))

    def outer(p: Any, x: Any) -> Any:
        index = lax.convert_element_type(p, jnp.int32)
        return test_cond_p.bind(index, x, branches=(small, big))

    text = str(lc.make_jaxpr(outer)(np.bool_(True), f32(1)))
    assert text == golden("""
        let jaxpr = { lambda ; a:f32[]. let
            b:f32[] = sin a
            c:f32[] = sin b
            d:f32[] = sin c
            e:f32[] = sin d
            f:f32[] = sin e
            g:f32[] = sin f
            h:f32[] = sin g
            i:f32[] = sin h
            j:f32[] = sin i
            k:f32[] = sin j
            l:f32[] = sin k
          in (l,) } in
        { lambda ; m:bool[] n:f32[]. let
            o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] m
            p:f32[] = cond[branches=({ lambda ; q:f32[]. let  in (q,) } jaxpr)] o n
          in (p,) }""")


def test_branches_break_one_per_line_when_long() -> None:
    minus = lc.make_jaxpr(lambda x: x - 3.0)(1.0)
    plus = lc.make_jaxpr(lambda x: x + 3.0)(1.0)

    def outer(x: Any) -> Any:
        index = lax.convert_element_type(x >= 0.0, jnp.int32)
        return test_cond_p.bind(index, x, branches=(minus, plus))

    assert str(lc.make_jaxpr(outer)(1.0)) == golden("""
        { lambda ; a:f32[]. let
            b:bool[] = ge a 0.0:f32[]
            c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
            d:f32[] = cond[
              branches=(
                { lambda ; e:f32[]. let f:f32[] = sub e 3.0:f32[] in (f,) }
                { lambda ; g:f32[]. let h:f32[] = add g 3.0:f32[] in (h,) }
              )
            ] c a
          in (d,) }""")


def test_shared_jaxpr_used_twice_gets_numbered_names() -> None:
    one = lc.make_jaxpr(lambda x: x + 1.0)(f32(1))

    def outer(x: Any) -> Any:
        index = lax.convert_element_type(x > 0.0, jnp.int32)
        y = test_cond_p.bind(index, x, branches=(one, one))
        return test_cond_p.bind(index, y, branches=(one, one))

    text = str(lc.make_jaxpr(outer)(f32(1)))
    assert text.startswith(
        "let jaxpr = { lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) } in\n"
    )
    assert "cond[branches=(jaxpr jaxpr)]" in text


class _Read(Effect):
    def __str__(self) -> str:
        return "Read<x>"


def test_print_effects_appends_the_effect_set() -> None:
    jaxpr = lc.make_jaxpr(lambda x: x)(f32(1)).jaxpr.replace(effects=frozenset({_Read()}))
    assert (
        jaxpr.pretty_print(print_effects=True) == "{ lambda ; a:f32[]. let  in (a,) : { Read<x> } }"
    )


def test_source_info_annotations_align_in_one_column() -> None:
    def f(x: Any) -> Any:
        y = jnp.sin(x)
        return y * 2.0

    text = lc.make_jaxpr(f)(np.ones(3, f32)).pretty_print(source_info=True)
    lines = text.splitlines()
    first = f.__code__.co_firstlineno
    assert lines[0].startswith("{ lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b")
    assert lines[0].endswith(f" # {__file__}:{first + 1}:12 ({f.__qualname__})")
    assert lines[1].endswith(f" # {__file__}:{first + 2}:15 ({f.__qualname__})")
    assert lines[0].index(" # ") == lines[1].index(" # ")
    assert not lines[1][: lines[1].index(" # ")].strip()


@pytest.mark.parametrize(
    ("value", "dtype", "text"),
    [
        (3.0, np.float32, "3.0:f32[]"),
        (np.float32(0.1), np.float32, "0.10000000149011612:f32[]"),
        (2, np.uint8, "2:u8[]"),
        (True, np.bool_, "True:bool[]"),
    ],
)
def test_scalar_literals_print_value_and_type(value: Any, dtype: Any, text: str) -> None:
    aval = ShapedArray((), np.dtype(dtype))
    assert _pretty.literal_text(lc.Literal(value, aval)) == text


def test_array_literals_print_as_ellipsis() -> None:
    lit = lc.Literal(np.ones(16, f32), ShapedArray((16,), np.dtype(f32)))
    assert _pretty.literal_text(lit) == "[...]:f32[16]"


def test_eqn_repr_names_outputs_first() -> None:
    eqn = lc.make_jaxpr(jnp.sin)(f32(1)).eqns[0]
    assert repr(eqn) == "a:f32[] = sin b"
