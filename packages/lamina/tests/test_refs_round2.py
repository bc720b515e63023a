"""Refs, round 2, against JAX 0.10.2: `ShapeDtypeStruct(..., is_ref=True)` for tracing and
lowering functions of Refs, sharded Refs, freeing and freezing, the dead-code elimination of
Ref equations, aliased Refs under `vmap`, and `device=` of the array creators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import pytest
from jax._src.interpreters import partial_eval as jax_pe

import lamina
from lamina.interpreters import partial_eval as lamina_pe

pytestmark = pytest.mark.oracle

BOTH = pytest.mark.parametrize("L", [jax, lamina], ids=["jax", "lamina"])


def _outcome(thunk: Callable[[], Any]) -> tuple[str, str]:
    """What `thunk` gives: its result's text, or its error's class and message."""
    try:
        return ("ok", str(thunk()))
    except Exception as e:  # the error is the result compared
        return (type(e).__name__, str(e))


def _same(thunk: Callable[[Any], Any]) -> tuple[str, str]:
    """`thunk` run with JAX and with Lamina: the same text, or the same error."""
    expected, got = _outcome(lambda: thunk(jax)), _outcome(lambda: thunk(lamina))
    assert got == expected
    return got


# --- ShapeDtypeStruct(..., is_ref=True) --------------------------------------------------------


def _accumulate(r: Any, x: Any) -> Any:
    r[...] += x
    return r[0]


def _ref_struct(L: Any, n: int = 3, **kw: Any) -> Any:
    return L.ShapeDtypeStruct((n,), L.numpy.float32, is_ref=True, **kw)


def test_is_ref_struct_repr_type_and_equality() -> None:
    _same(lambda L: repr(_ref_struct(L)))
    _same(lambda L: str(L.typeof(_ref_struct(L))))
    _same(lambda L: repr(_ref_struct(L).update(is_ref=False)))
    s = _ref_struct(lamina)
    assert s == _ref_struct(lamina) and hash(s) == hash(_ref_struct(lamina))
    assert s != s.update(is_ref=False)


def test_is_ref_struct_traces_lowers_and_evaluates_shapes() -> None:
    def x(L: Any) -> Any:
        return L.ShapeDtypeStruct((3,), L.numpy.float32)

    _same(lambda L: L.jit(_accumulate).trace(_ref_struct(L), x(L)).jaxpr)
    _same(lambda L: L.make_jaxpr(_accumulate)(_ref_struct(L), x(L)))
    _same(lambda L: L.eval_shape(_accumulate, _ref_struct(L), x(L)))
    _same(lambda L: L.jit(_accumulate).trace(_ref_struct(L), x(L)).in_avals)
    _same(lambda L: L.jit(_accumulate).lower(_ref_struct(L), x(L)).in_avals)
    _same(lambda L: L.jit(_accumulate).lower(_ref_struct(L), x(L)).compile().in_avals)


@BOTH
def test_is_ref_struct_lowering_signature(L: Any) -> None:
    def f(r: Any, x: Any) -> Any:
        r[...] += x
        return {"a": x, "b": x * 2}

    def signature(L: Any) -> str:
        x = L.ShapeDtypeStruct((3,), L.numpy.float32)
        text: str = L.jit(f).lower(_ref_struct(L), x).as_text()
        return next(line for line in text.splitlines() if "func.func public @main" in line)

    line = _same(signature)[1]
    assert "tf.aliasing_output = 2" in line and 'jax.result_info = ""' in line
    r = L.new_ref(L.numpy.zeros(3))
    x = L.ShapeDtypeStruct((3,), L.numpy.float32)
    out = L.jit(f).lower(_ref_struct(L), x).compile()(r, L.numpy.ones(3))
    assert out["b"].tolist() == [2.0] * 3 and r[...].tolist() == [1.0] * 3


# --- sharded Refs ------------------------------------------------------------------------------


def _sharded_ref(L: Any) -> Any:
    mesh = L.make_mesh((8,), ("x",))
    sharding = L.sharding.NamedSharding(mesh, L.P("x"))
    return L.new_ref(L.device_put(L.numpy.arange(8.0), sharding))


def test_ref_sharding() -> None:
    _same(lambda L: L.new_ref(L.numpy.arange(3.0)).sharding)
    _same(lambda L: _sharded_ref(L).sharding)
    _same(lambda L: L.typeof(_sharded_ref(L)))
    _same(lambda L: L.make_jaxpr(lambda r: r[...])(_sharded_ref(L)))


def test_sharded_ref_reads_and_writes_keep_the_sharding() -> None:
    def read(L: Any) -> Any:
        r = _sharded_ref(L)
        return (r[...].sharding, r[:].sharding, r.sharding, r[...].tolist())

    def jitted(L: Any) -> Any:
        r = _sharded_ref(L)

        def bump(r: Any) -> Any:
            r[...] = r[...] + 1.0
            return r[...] * 2.0

        y = L.jit(bump)(r)
        return (y.sharding, r.sharding, y.tolist(), r[...].tolist())

    _same(read)
    _same(jitted)


def test_sharded_ref_indexing_errors() -> None:
    def sliced(L: Any) -> Any:
        return _sharded_ref(L)[1:3]

    def by_int(L: Any) -> Any:
        mesh = L.make_mesh((8,), ("x",))
        s = _ref_struct(L, 8, sharding=L.sharding.NamedSharding(mesh, L.P("x")))
        return L.jit(_accumulate).trace(s, L.ShapeDtypeStruct((8,), L.numpy.float32)).jaxpr

    assert _same(sliced)[0] == "ValueError"
    assert _same(by_int)[0] == "TypeError"


def test_sharded_is_ref_struct_traces() -> None:
    def f(L: Any) -> Any:
        mesh = L.make_mesh((8,), ("x",))
        s = _ref_struct(L, 8, sharding=L.sharding.NamedSharding(mesh, L.P("x")))

        def g(r: Any) -> Any:
            r[...] = r[...] * 2.0
            return r[:]

        return (repr(s), L.jit(g).trace(s).jaxpr)

    _same(f)


# --- freeing and freezing ----------------------------------------------------------------------


def _read_after_freeze(L: Any) -> Any:
    r = L.new_ref(1.0)
    a = L.freeze(r)
    return r[...] + a


def _read_after_free(L: Any) -> Any:
    r = L.new_ref(1.0)
    L.free_ref(r)
    return r[...]


@pytest.mark.parametrize("f", [_read_after_freeze, _read_after_free])
def test_use_after_free_under_jit(f: Callable[[Any], Any]) -> None:
    assert _same(lambda L: L.make_jaxpr(lambda: f(L))())[0] == "ok"
    assert _same(lambda L: L.jit(lambda: f(L))())[0] == "ValueError"


def _freeze_twice(L: Any) -> Any:
    r = L.new_ref(1.0)
    return L.freeze(r) + L.freeze(r)


def _free_twice(L: Any) -> Any:
    r = L.new_ref(1.0)
    L.free_ref(r)
    L.free_ref(r)
    return 1.0


@pytest.mark.parametrize(("f", "name"), [(_freeze_twice, "freeze"), (_free_twice, "free_ref")])
def test_twice_under_jit(f: Callable[[Any], Any], name: str) -> None:
    # JAX's jaxprs are Lamina's; compiling them JAX fails inside its discharge (a KeyError
    # naming an object id): Lamina raises the ValueError JAX gives a read after a free.
    _same(lambda L: L.make_jaxpr(lambda: f(L))())
    with pytest.raises(KeyError):
        jax.jit(lambda: f(jax))()
    with pytest.raises(ValueError, match=f"^`{name}` must be called on `Ref` types: ~float32"):
        lamina.jit(lambda: f(lamina))()


@pytest.mark.parametrize(
    "use", [lambda r: r[...], lambda r: lamina.freeze(r), lambda r: lamina.free_ref(r)]
)
@pytest.mark.parametrize("consume", [lamina.freeze, lamina.free_ref])
def test_eager_use_after_consumed(consume: Callable[[Any], Any], use: Callable[[Any], Any]) -> None:
    # The seed's rule (JAX 0.10.2 does not invalidate eagerly: it reads the old value).
    r = lamina.new_ref(lamina.numpy.arange(3.0))
    consume(r)
    with pytest.raises(ValueError, match="was frozen or freed"):
        use(r)


def test_free_ref_is_public() -> None:
    assert lamina.free_ref is lamina.ref.free_ref
    assert jax.free_ref is jax.ref.free_ref
    assert lamina.free_ref(lamina.new_ref(1.0)) == jax.free_ref(jax.new_ref(1.0)) == ()


# --- dead-code elimination -------------------------------------------------------------------


def _written_only(L: Any, x: Any) -> Any:
    r = L.new_ref(x)
    r[...] = x * 2
    r[0] += 1.0
    return x + 1


def _read_unused(L: Any, x: Any) -> Any:
    r = L.new_ref(x)
    r[...] = x * 2
    r[...]
    return x + 1


def _frozen_unused(L: Any, x: Any) -> Any:
    r = L.new_ref(x)
    r[...] = x * 2
    L.freeze(r)
    return x


def _freed(L: Any, x: Any) -> Any:
    r = L.new_ref(x)
    L.free_ref(r)
    return x


def _made_unused(L: Any, x: Any) -> Any:
    L.new_ref(x)
    return x * 2


def _read_one(L: Any, x: Any) -> Any:
    r = L.new_ref(x)
    r[...] = x * 2
    return r[1]


@pytest.mark.parametrize(
    "f", [_written_only, _read_unused, _frozen_unused, _freed, _made_unused, _read_one]
)
@pytest.mark.parametrize("used", [True, False])
def test_dce_of_ref_equations(f: Callable[[Any, Any], Any], used: bool) -> None:
    def dce(L: Any) -> Any:
        pe = jax_pe if L is jax else lamina_pe
        closed = L.make_jaxpr(lambda x: f(L, x))(L.numpy.ones(3))
        trimmed, used_inputs = pe.dce_jaxpr(closed.jaxpr, [used])
        return (trimmed, used_inputs)

    _same(dce)
    _same(lambda L: L.jit(lambda x: f(L, x)).trace(L.numpy.ones(3)).jaxpr)
    _same(lambda L: L.jit(lambda x: f(L, x))(L.numpy.ones(3)))


# --- vmap of aliased Refs --------------------------------------------------------------------


def _add_into(a: Any, b: Any) -> None:
    a[...] += b[...]


@pytest.mark.parametrize("wrap", ["vmap", "jit_vmap"])
def test_vmap_of_aliased_refs(wrap: str) -> None:
    def f(L: Any) -> Any:
        r = L.new_ref(L.numpy.ones((2, 3)))
        g = L.vmap(_add_into)
        return (L.jit(g) if wrap == "jit_vmap" else g)(r, r)

    assert _same(f)[0] == "ValueError"


def test_vmap_of_aliased_refs_unmapped_is_not_checked() -> None:
    def f(L: Any) -> Any:
        r = L.new_ref(L.numpy.ones((2, 3)))
        s = L.new_ref(L.numpy.ones((2, 3)))
        L.vmap(_add_into)(r, s)
        return r

    _same(f)


# --- device= of the array creators -----------------------------------------------------------

_CREATORS = [
    ("zeros", lambda L: ((8,),)),
    ("ones", lambda L: ((8,),)),
    ("empty", lambda L: ((8,),)),
    ("full", lambda L: ((8,), 3.0)),
    ("zeros_like", lambda L: (L.numpy.arange(8.0),)),
    (
        "ones_like",
        lambda L: (
            L.numpy.arange(
                8,
            ),
        ),
    ),
    ("full_like", lambda L: (L.numpy.arange(8.0), 2.0)),
    ("empty_like", lambda L: (L.numpy.arange(8.0),)),
]


def _target(L: Any, kind: str) -> Any:
    if kind == "device":
        return L.devices()[1]
    return L.sharding.NamedSharding(L.make_mesh((8,), ("x",)), L.P("x"))


@pytest.mark.parametrize("kind", ["device", "sharding"])
@pytest.mark.parametrize(("name", "args"), _CREATORS, ids=[c[0] for c in _CREATORS])
def test_creators_place_on_device(name: str, args: Callable[[Any], Any], kind: str) -> None:
    def eager(L: Any) -> Any:
        y = getattr(L.numpy, name)(*args(L), device=_target(L, kind))
        return (y.sharding, L.typeof(y), y.tolist())

    def jitted(L: Any) -> Any:  # under a trace `device` is ignored, as JAX's
        f = L.jit(lambda: getattr(L.numpy, name)(*args(L), device=_target(L, kind)))
        return (f().sharding, L.typeof(f()), L.make_jaxpr(f)())

    _same(eager)
    _same(jitted)


def test_discarded_freeze_of_an_argument_under_jit() -> None:
    # The seed's err4: JAX 0.10.2 drops the dead `freeze` and accepts it; Lamina checks the
    # creation scope before dead-code elimination, as the seed documents.
    def err4(L: Any) -> Any:
        def f(x_ref: Any) -> None:
            L.freeze(x_ref)

        return L.jit(f)(L.new_ref(0.0))

    assert _outcome(lambda: err4(jax)) == ("ok", "None")
    with pytest.raises(ValueError, match="can only be frozen in the scope that created it"):
        err4(lamina)
