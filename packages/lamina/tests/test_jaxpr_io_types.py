"""Printed jaxprs of sharded, Ref and hi-type programs read back (issue 40), on the runtime.

The sharded programs (`sharded_programs.py`, 8 devices) print meshes, specs and shardings in
their params and types varying over manual axes in their bodies; Explicit-axes programs print
types split over mesh axes, read under the mesh they were traced over (`set_mesh`). Ref
programs print `Ref{...}` types and `get`/`swap`/`addupdate` in their own forms; hi-type
programs print types by their own `str` and hi primitives by class name. Each text reads back
to a program that prints exactly as the original and computes the same values, eagerly and
under `jit`; malformed forms give located errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import lax
from lamina.experimental.hijax import HiType, VJPHiPrimitive, register_hitype
from lamina.sharding import AxisType, Mesh, NamedSharding, PartitionSpec
from lamina_core import jaxpr_as_fun
from lamina_core.ir import (
    ClosedJaxpr,
    JaxprJSONError,
    JaxprSyntaxError,
    ShapedArray,
    elided_constants,
    from_json,
    parse,
    register_type_reader,
    set_mesh,
    to_json,
)
from lamina_core.testing import load_test_module, reference_evaluator, skip_without_devices

skip_without_devices(8, len(lamina.devices()))

corpus = load_test_module(Path(__file__).parent, "sharded_programs")
SIDE = corpus.Side(lamina, jnp, lax, PartitionSpec, NamedSharding, Mesh)


def _leaves(x: Any) -> list[Any]:
    return list(lamina.tree_util.tree_leaves(x))


def _read(closed: ClosedJaxpr, mesh: Any = None) -> ClosedJaxpr:
    if mesh is None:
        return parse(str(closed), elided_constants(closed))
    with set_mesh(mesh):
        return parse(str(closed), elided_constants(closed))


def _mesh_of(args: Any) -> Any:
    """The mesh of the first argument placed on one (what a program over Explicit axes was
    traced over, and is read under)."""
    for a in _leaves(args):
        mesh = getattr(getattr(a, "sharding", None), "mesh", None)
        if mesh is not None:
            return mesh
    return None


# --- sharded programs ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(corpus.PROGRAMS))
def test_sharded_program_text_round_trip_is_exact(name: str) -> None:
    fun, args = corpus.PROGRAMS[name](SIDE)
    closed = lamina.make_jaxpr(fun)(*args)
    text = str(closed)
    assert str(_read(closed, _mesh_of(args) if "@" in text else None)) == text


RUN = [
    "check_vma_true_psum",
    "vma_collectives",
    "vma_pmean_2d",
    "vma_vjp_through_shard_map",
    "psum_2d_both_axes",
    "all_to_all_transpose",
    "pmap_out_axes_none",
    "with_sharding_constraint_in_jit",
    "jit_in_out_shardings",
    "dp_mlp_step",
    "make_mesh_explicit",
]
"""Programs also run: each shape of params and types once (the others compile the same)."""


@pytest.mark.parametrize("name", RUN)
def test_sharded_program_read_back_runs_under_jit_to_the_same_values(name: str) -> None:
    fun, args = corpus.PROGRAMS[name](SIDE)
    closed = lamina.make_jaxpr(fun)(*args)
    parsed = _read(closed, _mesh_of(args) if "@" in str(closed) else None)
    want = _leaves(fun(*args))
    got = lamina.jit(jaxpr_as_fun(parsed))(*_leaves(args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def _text(name: str) -> str:
    fun, args = corpus.PROGRAMS[name](SIDE)
    return str(lamina.make_jaxpr(fun)(*args))


def test_the_programs_run_print_the_forms_they_are_meant_to_cover() -> None:
    names = ("vma_pmean_2d", "jit_in_out_shardings", "dp_mlp_step", "make_mesh_explicit")
    texts = {n: _text(n) for n in names}
    assert "{V:(i,j)}" in texts["vma_pmean_2d"]
    assert "mesh=Mesh('i': 2, 'j': 4" in texts["vma_pmean_2d"]
    assert "in_shardings=(NamedSharding(mesh=Mesh(" in texts["jit_in_out_shardings"]
    assert "reshard 1.0:f32[]" in texts["dp_mlp_step"]
    assert re.search(r"f32\[\d+@data", texts["make_mesh_explicit"])


def test_a_device_mesh_reads_back_over_the_first_devices_or_the_mesh_in_context() -> None:
    fun, args = corpus.PROGRAMS["check_vma_true_psum"](SIDE)
    closed = lamina.make_jaxpr(fun)(*args)
    original = next(e for e in closed.jaxpr.eqns[0].params["jaxpr"].eqns).params["mesh"]
    parsed = _read(closed)
    mesh = parsed.jaxpr.eqns[0].params["jaxpr"].eqns[0].params["mesh"]
    assert mesh == original  # the corpus builds its meshes over the first devices, in order
    other = Mesh(np.array(lamina.devices()[4:8]), ("i",))
    with set_mesh(other):
        parsed = parse(str(closed), elided_constants(closed))
    assert parsed.jaxpr.eqns[0].params["jaxpr"].eqns[0].params["mesh"] is other


def test_a_jit_with_some_shardings_given_reads_back() -> None:
    mesh = Mesh(np.array(lamina.devices()[:4]), ("i",))
    f = lamina.jit(
        lambda a, b: (a * 2, b + 1),
        in_shardings=(NamedSharding(mesh, PartitionSpec("i")), None),
        out_shardings=(None, NamedSharding(mesh, PartitionSpec())),
        donate_argnums=(1,),
    )
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    closed = lamina.make_jaxpr(f)(x, x)
    text = str(closed)
    assert "UnspecifiedValue)" in text and "donated_invars=(False, True)" in text
    parsed = _read(closed)
    assert str(parsed) == text
    want, got = closed.jaxpr.eqns[0].params, parsed.jaxpr.eqns[0].params
    assert {k: v for k, v in got.items() if k != "jaxpr"} == {
        k: v for k, v in want.items() if k != "jaxpr"
    }
    np.testing.assert_array_equal(np.asarray(lamina.jit(jaxpr_as_fun(parsed))(x, x)[1]), x + 1)


EXPLICIT = lamina.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)


def _explicit_programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    a = lamina.device_put(
        np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4),
        NamedSharding(EXPLICIT, PartitionSpec("x", "y")),
    )
    b = lamina.device_put(
        np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4),
        NamedSharding(EXPLICIT, PartitionSpec(None, "y")),
    )
    return {
        "elementwise_and_reduce": (lambda v: (jnp.sin(v).sum(0), v.T * 2.0), (a,)),
        "grad_dot": (
            lamina.grad(lambda v, w: jnp.sum(jnp.tanh(v @ w)), argnums=(0, 1)),
            (lamina.device_put(a, NamedSharding(EXPLICIT, PartitionSpec("x"))), b),
        ),  # its transposed dot_general has an out_sharding the text hides
        "grad": (lamina.grad(lambda v: jnp.sum(jnp.tanh(v) ** 2)), (a,)),
        "reshard": (
            lambda v: lamina.sharding.reshard(v, NamedSharding(EXPLICIT, PartitionSpec("y"))),
            (a,),
        ),
        "shard_map_body": (
            lamina.shard_map(
                lambda b: b * 2.0,
                mesh=EXPLICIT,
                in_specs=PartitionSpec("x"),
                out_specs=PartitionSpec("x"),
                axis_names={"x"},
            ),
            (a,),
        ),
    }


@pytest.mark.parametrize("name", sorted(_explicit_programs()))
def test_explicit_types_read_back_under_their_mesh(name: str) -> None:
    fun, args = _explicit_programs()[name]
    closed = lamina.make_jaxpr(fun)(*args)
    text = str(closed)
    assert "@" in text
    parsed = _read(closed, EXPLICIT)
    assert str(parsed) == text
    for g, w in zip(lamina.jit(jaxpr_as_fun(parsed))(*args), _leaves(fun(*args)), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert g.sharding.spec == w.sharding.spec  # hidden out_sharding params: the types
    if "Mesh(" in text:  # the text prints the mesh its types are split over: it is enough
        assert str(parse(text, elided_constants(closed))) == text
        return
    with pytest.raises(JaxprSyntaxError, match=r"unknown mesh axis name\(s\) .*set_mesh"):
        parse(text, elided_constants(closed))  # no mesh in context: the sizes are not printed


# --- Refs ---------------------------------------------------------------------------------------

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _refs(a: Any) -> Any:
    r = lamina.new_ref(a)
    r[0] = r[1] * 2
    r[:, 1:3] += 1.0
    r[np.array([0, 2]), 1] = jnp.ones(2)
    v = r[...]
    old = lamina.ref.swap(r, (1, slice(None)), jnp.zeros(4))
    r[::2, 3] = old[:2]
    return v + lamina.freeze(r) + old


def _refs_traced_index(a: Any, i: Any) -> Any:
    r = lamina.new_ref(a)
    r[i] = r[i + 1] * 2
    r[...] += a
    lamina.ref.addupdate(r, (slice(None), 2), jnp.ones(3))
    return r[2, 3], lamina.freeze(r)


def _ref_argument(r: Any, a: Any) -> Any:
    r[...] = a * 2
    r[1:2] = a[:1] * 3
    return r[2, 3]


IDX, VAL = np.array([0, 2]), np.array([5.0, 6.0], np.float32)


@lamina.jit
def _index_arrays(a: Any) -> Any:
    r = lamina.new_ref(a)
    old = lamina.ref.swap(r, (IDX, 1), VAL)  # kept: its index `[...]` prints twice
    r[IDX, 2] = VAL * 2
    lamina.ref.addupdate(r, (IDX, 0), VAL)
    return lamina.freeze(r) + old.sum() + np.arange(4, dtype=np.float32)


def _after_a_shared_body(a: Any) -> Any:
    """The body is a shared `let` block: the constants after it start where it ends."""
    return _index_arrays(a) + np.full(4, 3.0, np.float32)


REFS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "index_arrays_in_a_shared_body": (_after_a_shared_body, (X,)),
    "get_swap_addupdate": (_refs, (X,)),
    "traced_index": (_refs_traced_index, (X, np.int32(1))),
    "grad": (lamina.grad(lambda a: jnp.sum(_refs(a))), (X,)),
    "jit": (lamina.jit(_refs), (X,)),
    "vmap": (lamina.vmap(lambda a: _refs_traced_index(a, 0)[1]), (np.stack([X, X + 1]),)),
}


@pytest.mark.parametrize("name", sorted(REFS))
def test_ref_program_reads_back_and_computes_the_same_values(name: str) -> None:
    fun, args = REFS[name]
    closed = lamina.make_jaxpr(fun)(*args)
    parsed = _read(closed)
    assert str(parsed) == str(closed)
    want = reference_evaluator(closed, list(args))
    for got in (reference_evaluator(parsed, list(args)), lamina.jit(jaxpr_as_fun(parsed))(*args)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_the_ref_programs_print_every_form() -> None:
    text = str(lamina.make_jaxpr(_refs)(X))
    forms = ["Ref{f32[3,4]} = new_ref", "<- b[1,:]", "b[0,:] <- ", ", b[1,:] <- b[1,:], "]
    for form in (*forms, "b[[...],", "b[:4:2,3]", "<- b[...]"):
        assert form in text, form
    assert "c[:,2] += " in str(lamina.make_jaxpr(_refs_traced_index)(X, np.int32(1)))


def test_a_ref_argument_reads_back() -> None:
    closed = lamina.make_jaxpr(_ref_argument)(lamina.new_ref(X), X)
    assert str(closed).startswith("{ lambda ; a:Ref{f32[3,4]} b:f32[3,4]. let")
    parsed = _read(closed)
    assert str(parsed) == str(closed)
    assert parsed.jaxpr.invars[0].aval == closed.jaxpr.invars[0].aval


_REF_PROGRAM = "{{ lambda ; a:Ref{{f32[3,4]}} b:f32[4] i:i32[]. let\n    {eqn}\n  in () }}"


@pytest.mark.parametrize(
    ("eqn", "message"),
    [
        ("c:f32[4] <- b[1,:]", "'b' is not a Ref"),
        ("c:f32[4] <- a[1]", "an index of a Ref of shape (3, 4) has 2 entries, got 1"),
        ("c:f32[4] <- a[1,x:]", "integer bounds"),
        ("c:f32[4] <- a[1,z]", "unbound variable 'z'"),
        ("c:f32[4] <- a[1.5,:]", "a literal of type i32[] is an integer, found '1.5'"),
        ("c:f32[4] <- a[b,:]", "a Ref index is an integer, got 'b' of type f32[4]"),
        ("c:f32[5] <- a[i,:]", "type mismatch: 'get' of these operands gives f32[4]"),
        ("c:f32[4], a[1,:] <- a[2,:], b", "a swap writes where it reads"),
        ("a[0,:] += c", "unbound variable 'c'"),
        ("a[0,:] <- b b", "unbound variable 'b b'"),
        ("a[0,:] <- 1.5:i32[]", "a literal of type i32[] is an integer, found '1.5'"),
        ("c:Ref{f32[}} <- a[...]", "in the type 'Ref{f32[}}'"),
    ],
)
def test_malformed_ref_equations_give_located_errors(eqn: str, message: str) -> None:
    with pytest.raises(JaxprSyntaxError) as info:
        parse(_REF_PROGRAM.format(eqn=eqn))
    assert message in info.value.message, info.value
    assert (info.value.line, info.value.column) == (2, 5)


# --- hi types -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scaled:
    """A value times a scale: one value in a jaxpr, two arrays below."""

    value: Any
    scale: Any


@dataclass(frozen=True)
class ScaledTy(HiType):
    shape: tuple[int, ...]

    def lo_ty(self) -> list[Any]:
        return [ShapedArray(self.shape, np.dtype("float32")), ShapedArray((), np.dtype("float32"))]

    def lower_val(self, s: Any) -> list[Any]:
        return [s.value, s.scale]

    def raise_val(self, *lo: Any) -> Scaled:
        return Scaled(*lo)

    def to_tangent_aval(self) -> ShapedArray:
        return ShapedArray(self.shape, np.dtype("float32"))

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        return f"scaled[{','.join(map(str, self.shape))}]"


register_hitype(Scaled, lambda s: ScaledTy(np.shape(s.value)))


def _read_scaled(text: str) -> ScaledTy:
    m = re.fullmatch(r"scaled\[([\d,]*)\]", text)
    if m is None:
        raise ValueError("expected scaled[dims]")
    return ScaledTy(tuple(int(d) for d in m[1].split(",") if d))


register_type_reader("scaled", _read_scaled)


class MakeScaled(VJPHiPrimitive):
    def __init__(self, x_aval: Any, *, by: float = 2.0) -> None:
        self.in_avals = (x_aval,)
        self.out_aval = ScaledTy(x_aval.shape)
        self.params = {"by": by}
        super().__init__()

    def expand(self, x: Any) -> Scaled:
        by = self.params["by"]
        return Scaled(x / by, jnp.float32(by))


class Unscale(VJPHiPrimitive):
    def __init__(self, s_aval: Any) -> None:
        self.in_avals = (s_aval,)
        self.out_aval = ShapedArray(s_aval.shape, np.dtype("float32"))
        self.params = {}
        super().__init__()

    def expand(self, s: Any) -> Any:
        return s.value * s.scale


def _hi(x: Any) -> Any:
    s = MakeScaled(lamina.typeof(x), by=4.0)(x)
    return Unscale(lamina.typeof(s))(s) + 1.0


def test_hi_types_and_primitives_read_back() -> None:
    closed = lamina.make_jaxpr(lamina.jit(_hi))(X)
    text = str(closed)
    assert "scaled[3,4] = call_hi_primitive[_prim=MakeScaled[{'by': 4.0}]]" in text
    assert "call_hi_primitive[_prim=Unscale[{}]]" in text
    parsed = _read(closed)
    assert str(parsed) == text
    np.testing.assert_array_equal(reference_evaluator(parsed, [X])[0], X + 1.0)
    np.testing.assert_array_equal(np.asarray(lamina.jit(jaxpr_as_fun(parsed))(X)[0]), X + 1.0)


def test_a_hi_type_takes_the_program_that_made_it() -> None:
    closed = lamina.make_jaxpr(lambda s: Unscale(lamina.typeof(s))(s))(Scaled(X, np.float32(3)))
    assert str(closed).startswith("{ lambda ; a:scaled[3,4]. let")
    parsed = _read(closed)
    assert parsed.jaxpr.invars[0].aval == ScaledTy((3, 4))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("Unscale[{}]", "Rescale[{}]"), "unknown hi primitive 'Rescale'"),
        (("MakeScaled[{'by': 4.0}]", "MakeScaled[{'to': 4.0}]"), "cannot make MakeScaled"),
        (("a:f32[3,4]", "a:scaled[3,4"), "cannot read the type 'scaled[3,4. let'"),
        (("scaled[3,4] =", "scaled{3} ="), "cannot read the type 'scaled{3}'"),
    ],
)
def test_malformed_hi_forms_give_located_errors(edit: tuple[str, str], message: str) -> None:
    text = str(lamina.make_jaxpr(_hi)(X)).replace(*edit)
    with pytest.raises(JaxprSyntaxError) as info:
        parse(text)
    assert message in str(info.value)


# --- constants that are not arrays, in the JSON form ---------------------------------------


def test_a_closed_over_ref_is_stored_by_value_and_read_back_as_a_new_ref() -> None:
    kept = lamina.new_ref(np.arange(3, dtype=np.float32))

    def scale(x: Any) -> None:
        kept[...] = kept[...] * x

    closed = lamina.make_jaxpr(lamina.jit(scale))(2.0)
    document = to_json(closed)
    assert '"kind": "ref"' in document
    loaded = from_json(document)
    assert str(loaded) == str(closed)
    (ref,) = loaded.consts
    assert ref is not kept
    lamina.jit(jaxpr_as_fun(loaded))(3.0)
    np.testing.assert_array_equal(ref[...], [0.0, 3.0, 6.0])
    np.testing.assert_array_equal(kept[...], [0.0, 1.0, 2.0])  # the original is untouched


def test_a_closed_over_hi_value_is_stored_as_its_type_and_lo_values() -> None:
    s = Scaled(X, np.float32(3))
    closed = lamina.make_jaxpr(lambda x: Unscale(lamina.typeof(s))(s) + x)(X)
    document = to_json(closed)
    assert '"kind": "hi", "meta": "scaled[3,4]"' in document
    loaded = from_json(document)
    assert str(loaded) == str(closed)
    (value,) = loaded.consts
    assert isinstance(value, Scaled)
    np.testing.assert_array_equal(value.value, X)
    np.testing.assert_array_equal(reference_evaluator(loaded, [X])[0], X * 3 + X)


def test_an_unknown_constant_kind_is_named() -> None:
    closed = lamina.make_jaxpr(lambda x: x * np.arange(3.0, dtype=np.float32))(np.ones(3))
    document = to_json(closed).replace(
        '{"dtype"', '{"kind": "blob", "meta": "", "parts": []}, {"x"'
    )
    with pytest.raises(JaxprJSONError, match=r"constants\[0\].kind: unknown constant kind 'blob'"):
        from_json(document)
