"""Printed jaxprs over meshes read back, on lamina-core alone (issue 40): `shard_map` bodies
typed with the manual axes they vary over (`f32[4]{V:i}`), types split over Explicit axes
(`f32[8@x,4]`), meshes, specs and shardings in params, strings printed with spaces, and the
registries upper layers fill; malformed forms give located errors.

Meshes are made over stand-in devices (core needs only their ids; JAX's devices when the
process has 8, as `shard_map_harness.py` does) and put in context while a text is read, so
its printed `Mesh(...)` reads back as that very mesh.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

import hypothesis
import numpy as np
import pytest
from hypothesis import strategies as st

import lamina_core as lc
from lamina_core import lax
from lamina_core import numpy as jnp
from lamina_core.callbacks import debug_print
from lamina_core.ir import (
    AxisType,
    ClosedJaxpr,
    JaxprSyntaxError,
    Mesh,
    NamedSharding,
    P,
    ShapedArray,
    elided_constants,
    manual_mesh,
    parse,
    parse_type,
    register_type_reader,
    register_value_reader,
    set_mesh,
)
from lamina_core.sharding import _jaxpr_io as sharding_io
from lamina_core.sharding import shard_map
from lamina_core.testing import reference_evaluator

f32 = np.float32


class StandIn:
    """A device as a `Mesh` needs one: an id."""

    def __init__(self, i: int) -> None:
        self.id = i


def _devices() -> list[Any]:
    """JAX's devices when the process has 8 (the runtime, if loaded, runs on them), else
    stand-ins."""
    jax = sys.modules.get("jax")
    if jax is not None and jax.device_count() >= 8:
        return list(jax.devices())
    return [StandIn(i) for i in range(8)]


STAND_INS = isinstance(_devices()[0], StandIn)


def _mesh(shape: tuple[int, ...], names: tuple[str, ...], explicit: bool = False) -> Mesh:
    devices = np.empty(int(np.prod(shape)), dtype=object)
    devices[:] = _devices()[: devices.size]
    types = (AxisType.Explicit if explicit else AxisType.Auto,) * len(names)
    return Mesh(devices.reshape(shape), names, types)


M1 = _mesh((4,), ("i",))
M2 = _mesh((2, 4), ("y", "x"))  # mesh order is not sorted order: `{V:(y,x)}`
EX = _mesh((2, 4), ("x", "y"), explicit=True)
A = np.linspace(-1.0, 1.0, 32, dtype=f32).reshape(8, 4)
B = np.linspace(0.5, 2.0, 64, dtype=f32).reshape(8, 8)


def _smap(f: Callable[..., Any], mesh: Mesh, ins: Any, outs: Any, vma: bool = True) -> Any:
    return shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs, check_vma=vma)


def _collectives(b: Any) -> Any:
    perm = [(j, (j + 1) % 4) for j in range(4)]
    shifted = lax.ppermute(b, "i", perm) * lax.axis_index("i")
    return lax.all_gather(shifted, "i", tiled=True), lax.psum_scatter(b, "i", tiled=True)


def _vma_loss(w: Any, a: Any) -> Any:
    local = _smap(
        lambda w, a: lax.psum(jnp.sum(jnp.sin(a @ w) * jnp.cos(w[0, 0])), "i"),
        M1,
        (P(), P("i")),
        P(),
    )
    return local(w, a)


W = np.linspace(-0.5, 0.5, 8, dtype=f32).reshape(4, 2)
EXPLICIT = ShapedArray((8, 4), np.dtype(f32), mesh=EX.abstract_mesh, spec=("x", "y"))

CASES: dict[str, tuple[Mesh, Callable[..., Any], tuple[Any, ...]]] = {
    "psum_checked": (M1, _smap(lambda b: lax.psum(b * 2.0, "i"), M1, P("i"), P()), (A,)),
    "psum_unchecked": (M1, _smap(lambda b: lax.psum(b, "i"), M1, P("i"), P(), False), (A,)),
    "two_axes_in_mesh_order": (
        M2,
        _smap(lambda b: lax.psum(b * 2, "x") + lax.axis_index("y"), M2, P("x", "y"), P(None, "y")),
        (B,),
    ),
    "axes_tuple_spec": (M2, _smap(lambda b: b * 2, M2, P(("x", "y")), P(("x", "y"))), (B[0],)),
    "collectives": (M1, _smap(_collectives, M1, P("i"), (P("i"), P("i"))), (B.reshape(16, 4),)),
    "replicated_operand_pvary": (
        M1,
        _smap(lambda a, b: a * 2.0 + b, M1, (P("i"), P()), P("i")),
        (A, A[0]),
    ),
    "jit_in_body": (M1, _smap(lambda b: lc.jit(jnp.tanh)(b) + 1.0, M1, P("i"), P("i")), (A,)),
    "grad_through_body": (M1, lc.grad(_vma_loss), (W, A)),
    "vjp_through_body": (
        M1,
        lambda w, a: lc.vjp(lambda w: _vma_loss(w, a), w)[1](f32(1.5)),
        (W, A),
    ),
    "explicit_types": (EX, lambda v: (jnp.sin(v).sum(0), v.T * 2.0), (EXPLICIT,)),
    "explicit_reshard": (
        EX,
        lambda v: lax.reshard_traced(v, NamedSharding(EX.abstract_mesh, P("y", None))) * 2,
        (EXPLICIT,),
    ),
}


def _traced(name: str) -> tuple[Mesh, ClosedJaxpr, tuple[Any, ...]]:
    mesh, f, args = CASES[name]
    return mesh, lc.make_jaxpr(f)(*args), args


def _read(text: str, closed: ClosedJaxpr, mesh: Mesh) -> ClosedJaxpr:
    with set_mesh(mesh):
        return parse(text, elided_constants(closed))


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_round_trip_is_exact(name: str) -> None:
    mesh, closed, _ = _traced(name)
    text = str(closed)
    assert str(_read(text, closed, mesh)) == text


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith("explicit")))
def test_parsed_program_computes_the_same_values(name: str) -> None:
    if STAND_INS and "lamina_runtime" in sys.modules:
        pytest.skip("the runtime runs shard_map on devices: this process has too few")
    mesh, closed, args = _traced(name)
    parsed = _read(str(closed), closed, mesh)
    got = reference_evaluator(parsed, args)
    want = reference_evaluator(closed, args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_the_cases_print_the_forms_they_are_meant_to_cover() -> None:
    assert "{V:(y,x)}" in str(_traced("two_axes_in_mesh_order")[1])
    assert "f32[8@x,4@y]" in str(_traced("explicit_types")[1])
    text = str(_traced("grad_through_body")[1])
    assert "let jaxpr = " in text and "jaxpr=jaxpr" in text  # a shared body, read in scope


def test_a_printed_mesh_reads_back_as_the_mesh_in_context() -> None:
    mesh, closed, _ = _traced("psum_checked")
    parsed = _read(str(closed), closed, mesh)
    (eqn,) = parsed.jaxpr.eqns
    assert eqn.params["mesh"] is M1
    assert eqn.params["in_specs"] == (P("i"),) and eqn.params["newly_manual_axes"] == {"i"}
    (body_in,) = eqn.params["jaxpr"].invars
    (want,) = closed.jaxpr.eqns[0].params["jaxpr"].invars
    assert body_in.aval == want.aval  # shape, vma and the manual mesh
    assert body_in.aval.mesh == manual_mesh(M1, {"i"}) and body_in.aval.vma == {"i"}


def test_explicit_types_take_the_mesh_in_context() -> None:
    mesh, closed, _ = _traced("explicit_types")
    parsed = _read(str(closed), closed, mesh)
    assert parsed.jaxpr.invars[0].aval == EXPLICIT


def test_specs_read_back_with_their_axes() -> None:
    mesh, closed, _ = _traced("axes_tuple_spec")
    (eqn,) = _read(str(closed), closed, mesh).jaxpr.eqns
    assert eqn.params["in_specs"] == (P(("x", "y")),) == eqn.params["out_specs"]
    assert eqn.params["mesh"] is M2


def test_strings_with_spaces_read_back() -> None:
    def f(x: Any) -> Any:
        debug_print("x is {} and {y}", x, y=x * 2.0)
        return x

    closed = lc.make_jaxpr(f)(A[0])
    text = str(closed)
    assert "fmt=x is {} and {y}" in text
    assert str(parse(text)) == text
    body = "{ lambda ; c:f32[]. let  in (c,) }"
    one_line = f"{{ lambda ; a:f32[]. let b:f32[] = jit[name=my fun jaxpr={body}] a in (b,) }}"
    parsed = parse(one_line)
    assert parsed.jaxpr.eqns[0].params["name"] == "my fun"
    assert str(parse(str(parsed))) == str(parsed)


def test_parse_type_reads_every_printed_form() -> None:
    assert parse_type("~f32[]") == ShapedArray((), np.dtype(f32), True)
    assert parse_type("f32[3]{V:(i,j)}").vma == {"i", "j"}  # type: ignore[attr-defined]
    with set_mesh(EX):
        assert parse_type("f32[8@(x,y),4]").spec == (("x", "y"), None)  # type: ignore[attr-defined]
    with pytest.raises(JaxprSyntaxError, match="unknown dtype 'float32'"):
        parse_type("float32[3]")  # long names are params' (`ty=float32[3]`), not binders'


_TOY: dict[str, Any] = {}


def _toy_reader(text: str) -> ShapedArray:
    if not text.startswith("toy[") or not text.endswith("]"):
        raise ValueError("expected toy[n]")
    inner = parse_type(f"i8{text[3:]}")
    assert isinstance(inner, ShapedArray)
    return inner


def test_a_registered_type_reads_through_its_reader() -> None:
    if "toy" not in _TOY:
        register_type_reader("toy", _toy_reader)
        _TOY["toy"] = True
    assert parse_type("toy[2,3]") == ShapedArray((2, 3), np.dtype(np.int8))
    e = _error("{ lambda ; a:toy{2}. let  in (a,) }")
    assert "cannot read the type 'toy{2}': expected toy[n]" in str(e) and e.column == 14
    with pytest.raises(ValueError, match="already registered"):
        register_type_reader("toy", lambda t: _toy_reader(t))
    with pytest.raises(ValueError, match="a dtype's name"):
        register_type_reader("f32", _toy_reader)
    with pytest.raises(ValueError, match="already registered"):
        register_value_reader("Mesh", lambda form: None)


def _error(text: str, mesh: Mesh | None = None) -> JaxprSyntaxError:
    context = set_mesh(mesh) if mesh is not None else contextlib.nullcontext()
    with context, pytest.raises(JaxprSyntaxError) as info:
        parse(text)
    return info.value


_BODY = (
    "{{ lambda ; a:f32[8]. let\n"
    "    b:f32[8] = shard_map[\n"
    "      check_vma=True\n"
    "      in_specs=(P('i',),)\n"
    "      jaxpr={{ lambda ; c:{body_type}. let  in (c,) }}\n"
    "      mesh={mesh}\n"
    "      newly_manual_axes=frozenset({{{manual}}})\n"
    "      out_specs=(P('i',),)\n"
    "    ] a\n"
    "  in (b,) }}"
)


def _body(
    body_type: str = "f32[2]{V:i}",
    mesh: str = "Mesh('i': 4, axis_types=(Auto,))",
    manual: str = "'i'",
) -> str:
    return _BODY.format(body_type=body_type, mesh=mesh, manual=manual)


def test_the_malformed_body_fixture_is_well_formed() -> None:
    with set_mesh(M1):
        assert str(parse(_body())) == _body()


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("{ lambda ; a:f32[3]{V:}. let  in (a,) }", (1, 23), "a manual mesh axis name after 'V:'"),
        ("{ lambda ; a:f32[3]{W:i}. let  in (a,) }", (1, 21), "expected 'V:'"),
        ("{ lambda ; a:f32[3]{V:(i,}. let  in (a,) }", (1, 26), "manual mesh axis name"),
        ("{ lambda ; a:f32[3]{V:i. let  in (a,) }", (1, 24), "'}' closing the manual mesh axes"),
        ("{ lambda ; a:f32[8@]. let  in (a,) }", (1, 20), "a mesh axis name after '@'"),
        ("{ lambda ; a:f32[8@z]. let  in (a,) }", (1, 14), "unknown mesh axis name(s) z"),
        ("{ lambda ; a:f32[8@(x,]. let  in (a,) }", (1, 23), "mesh axis name in '@(...)'"),
        ("{ lambda ; a:~toyz{f32[]}. let  in (a,) }", (1, 15), "unknown dtype 'toyz'"),
        (_body("f32[2]{V:k}"), (5, 33), "unknown manual mesh axis 'k' in a type"),
        (_body(manual="'k'"), (3, 7), "newly_manual_axes names k"),
        (_body(mesh="Mesh('i': x)"), (6, 12), "the size of mesh axis 'i' must be an integer"),
        (_body(mesh="Mesh('i': 4, axis_types=(Sideways,))"), (6, 12), "unknown axis type"),
        (_body(mesh="Mesh('i': 4"), (7, 7), "expected ',' or ')' in Mesh(...)"),
        (_body(mesh="Mesh('i': 4, spin=1)"), (6, 12), "unexpected spin="),
        (_body(mesh="Mesh('i': 8)"), (6, 12), "needs 8 devices, there are 4"),
    ],
)
def test_malformed_forms_give_located_errors(
    text: str, where: tuple[int, int], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sharding_io, "_device_sources", [lambda: list(M1.devices.flat)])
    with set_mesh(M1):
        e = _error(text)
    assert message in e.message, e
    assert (e.line, e.column) == where, e


def test_a_device_mesh_without_devices_says_how_to_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sharding_io, "_device_sources", [])
    e = _error(_body(), _mesh((2,), ("j",)))
    assert (e.line, e.column) == (6, 12)
    assert "no devices to read Mesh('i': 4) over: parse under `set_mesh(mesh)`" in e.message


def test_a_device_mesh_reads_over_the_installed_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    devices = [StandIn(10 + i) for i in range(6)]
    monkeypatch.setattr(sharding_io, "_device_sources", [lambda: devices])
    parsed = parse(_body())
    mesh = parsed.jaxpr.eqns[0].params["mesh"]
    assert isinstance(mesh, Mesh) and mesh.axis_names == ("i",)
    assert [d.id for d in mesh.devices.flat] == [10, 11, 12, 13]
    assert str(parsed) == _body()


_FUZZ = [str(_traced(n)[1]) for n in ("two_axes_in_mesh_order", "grad_through_body")]


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(st.integers(0, len(_FUZZ) - 1), st.data())
def test_dropping_a_token_gives_a_located_error_or_a_program(source: int, data: Any) -> None:
    text = _FUZZ[source]
    pieces = text.split(" ")
    k = data.draw(st.integers(0, len(pieces) - 1))
    edited = " ".join(pieces[:k] + pieces[k + 1 :])
    with set_mesh(M2 if source == 0 else M1):
        try:
            parsed = parse(edited)
        except JaxprSyntaxError as e:
            where: tuple[int, int] = (e.line, e.column)
        else:
            where = (1, 1) if str(parsed) else (0, 0)
    assert min(where) >= 1
