"""Printed jaxprs read back: exact text round trips, the same values, located errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import hypothesis
import numpy as np
import pytest
from hypothesis import strategies as st

import lamina_core as lc
from lamina_core import lax, nn, random
from lamina_core import numpy as jnp
from lamina_core.ir import (
    ClosedJaxpr,
    Jaxpr,
    JaxprJSONError,
    JaxprSyntaxError,
    elided_constants,
    from_json,
    parse,
    to_json,
)
from lamina_core.testing import reference_evaluator

f32 = np.float32
X = np.linspace(-2.0, 3.0, 12, dtype=f32).reshape(3, 4)
IDX = np.arange(6, dtype=np.int32)
C = (X + 1j * X).astype(np.complex64)
TABLE = np.linspace(0.0, 1.0, 16, dtype=f32)


def _sum_sin(x: Any) -> Any:
    return jnp.sum(jnp.sin(x) * 2.0, axis=0)


def _big_body(x: Any) -> Any:
    for _ in range(12):
        x = jnp.cos(x) * 0.5
    return x


def _scan_body(c: Any, y: Any) -> tuple[Any, Any]:
    return c + y, c * y


def _while(x: Any) -> Any:
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))


def _loss(x: Any) -> Any:
    return jnp.sum(jnp.tanh(x) * lc.jit(jnp.exp)(x))


def _key_bits(seed: Any) -> Any:
    return random.uniform(random.key(seed), (3,))


def _split_normal(seed: Any) -> Any:
    return random.normal(random.split(random.key(seed))[1], (3,))


@lc.custom_jvp
def _twice_sin(x: Any) -> Any:
    return jnp.sin(x)


@_twice_sin.defjvp
def _twice_sin_jvp(primals: Any, tangents: Any) -> Any:
    return _twice_sin(primals[0]), tangents[0] * 2


@lc.custom_vjp
def _vjp_sin(x: Any) -> Any:
    return jnp.sin(x)


def _vjp_sin_fwd(x: Any) -> Any:
    return jnp.sin(x), x


def _vjp_sin_bwd(res: Any, g: Any) -> Any:
    return (g * res,)


_vjp_sin.defvjp(_vjp_sin_fwd, _vjp_sin_bwd)


def _complex_normal(seed: Any) -> Any:
    return random.normal(random.key(seed), (3,), dtype=np.complex64)


def _remat_scan(x: Any) -> Any:
    body = lc.checkpoint(lambda c, y: (jnp.sin(c * y), c))
    return lax.scan(body, x[0], x)[0].sum()


CORPUS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "elementwise": (lambda x, y: jnp.exp(x) * y - jnp.log1p(jnp.abs(y)), (X, X)),
    "reduction": (_sum_sin, (X,)),
    "reductions_many": (lambda x: (jnp.max(x, axis=1), jnp.argmin(x, axis=0), x.mean()), (X,)),
    "dot_general": (lambda x: x @ x.T, (X,)),
    "batched_dot": (lc.vmap(lambda v: jnp.dot(v, v)), (X,)),
    "broadcast_reshape_slice": (lambda x: x[1:, ::2].reshape(-1)[None] + x[0, :2].sum(), (X,)),
    "transpose_concat": (lambda x: jnp.concatenate([x.T, x.T * 2], axis=1), (X,)),
    "elided_constant": (lambda x: x * TABLE.reshape(4, 4)[:3] + np.arange(4, dtype=f32), (X,)),
    "literals_inf_nan": (lambda x: jnp.where(x > 0, x, -jnp.inf) + x * np.nan, (X,)),
    "literal_negative_zero": (lambda x: f32(-0.0) + x * 0.1, (X,)),
    "integer_literals": (lambda i: (i * 3 - 1) // 2 % 4, (IDX,)),
    "bool_literals": (lambda x: jnp.logical_and(x > 0, True), (X,)),
    "weak_types": (lambda x: x * 2 + 1.5, (f32(3.0),)),
    "casts": (lambda i: i.astype(f32) / 3.0 + i.astype(bool), (IDX,)),
    "unused_outputs": (lambda x: (jnp.sin(x), jnp.cos(x))[0], (X,)),
    "jit_nested": (lambda x: lc.jit(lambda y: lc.jit(jnp.sin)(y) * 3)(x), (X,)),
    "jit_shared_let": (lambda x: jnp.where(x > 0, x, 0.0) + jnp.where(x > 1, x, 2.0), (X,)),
    "jit_big_body": (lc.jit(_big_body), (X,)),
    "cond": (lambda x: lax.cond(x.sum() > 0, lambda y: y + 1, lambda y: y - 1, x), (X,)),
    "switch": (
        lambda x: lax.switch(1, [lambda y: y, lambda y: jnp.sin(y), lambda y: -y], x),
        (X,),
    ),
    "while": (_while, (X,)),
    "fori_loop": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + i, x), (X,)),
    "scan": (lambda x: lax.scan(_scan_body, x[0], x), (X,)),
    "grad": (lc.grad(lambda x: jnp.sum(jnp.tanh(x))), (X,)),
    "grad_through_jit": (lc.grad(_loss), (X,)),
    "jvp": (lambda x, t: lc.jvp(_loss, (x,), (t,)), (X, X)),
    "vmap_of_grad": (lc.vmap(lc.grad(lambda v: jnp.sum(jnp.sin(v) ** 2))), (X,)),
    "grad_of_scan": (lc.grad(lambda x: lax.scan(_scan_body, x[0], x)[0].sum()), (X,)),
    "grad_of_cond": (lc.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)), (f32(0.5),)),
    "sort_cumsum": (lambda x: (jnp.sort(x, axis=1), jnp.cumsum(x, axis=0)), (X,)),
    "random_key": (_key_bits, (np.uint32(7),)),
    "random_split_normal": (_split_normal, (np.uint32(3),)),
    "gather": (lambda x, i: x[i % 3], (X, IDX)),
    "scatter": (lambda x: x.at[1].set(0.0).at[:, 2].add(1.0), (X,)),
    "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i[0], 0), (2, 2)), (X, IDX)),
    "iota_argmax": (lambda x: jnp.argmax(x, axis=1) + jnp.arange(3), (X,)),
    "complex_literals": (lambda c: c * (1 + 2j) + jnp.conj(c), (C,)),
    "conv": (lambda x: lax.conv(x[None, None], x[None, None, :2, :2], (1, 1), "SAME"), (X,)),
    "clamp_pad": (lambda x: jnp.clip(jnp.pad(x, 1), -1, 1), (X,)),
    "softmax": (nn.softmax, (X,)),
    "logsumexp": (lambda x: nn.logsumexp(x, axis=1), (X,)),
    "linalg_norm": (lambda x: jnp.linalg.norm(x @ x.T), (X,)),
    "jacfwd": (lc.jacfwd(lambda x: jnp.sin(x) * x), (X[0],)),
    "hessian": (lc.hessian(lambda x: jnp.sum(jnp.sin(x) ** 3)), (X[0],)),
    "checkpoint_grad": (
        lc.grad(lambda x: lc.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x).sum()),
        (X,),
    ),
    "remat_scan_grad": (lc.grad(_remat_scan), (X,)),
    "sort_two_operands": (lambda x: lax.sort((x, x * 2), num_keys=1), (X,)),
    "reduce_precision": (lambda x: lax.reduce_precision(x, 5, 10), (X,)),
    "bfloat16": (lambda x: x.astype(jnp.bfloat16) * 0.1, (X,)),
    "relu_grad": (lc.grad(lambda x: jnp.sum(nn.relu(x))), (X,)),
    "custom_jvp": (_twice_sin, (X,)),
    "custom_jvp_grad": (lc.grad(lambda x: _twice_sin(x).sum()), (X,)),
    "custom_vjp": (_vjp_sin, (X,)),
    "custom_vjp_grad": (lc.grad(lambda x: _vjp_sin(x).sum()), (X,)),
    "grad_of_jit_reads_underscore": (lc.grad(lc.jit(lambda y: jnp.sin(y) * y)), (f32(0.5),)),
    "shared_jaxpr_used_before_defined": (_complex_normal, (np.uint32(5),)),
}

LOSSY_PARAMS = frozenset({"custom_jvp_call", "custom_vjp_call"})
"""Calls whose rule functions and pytree structures the text does not show: their other
params and `call_jaxpr` read back; they print and evaluate, not differentiate."""


def _same_structure(a: Jaxpr, b: Jaxpr) -> None:
    assert len(a.eqns) == len(b.eqns)
    for ea, eb in zip(a.eqns, b.eqns, strict=True):
        assert ea.primitive is eb.primitive
        if ea.primitive.name in LOSSY_PARAMS:
            _same_param(ea.params["call_jaxpr"], eb.params["call_jaxpr"], "call_jaxpr")
            continue
        assert set(ea.params) == set(eb.params), ea.primitive
        for key, va in ea.params.items():
            _same_param(va, eb.params[key], f"{ea.primitive}[{key}]")


def _same_param(va: Any, vb: Any, where: str) -> None:
    if isinstance(va, ClosedJaxpr):
        assert isinstance(vb, ClosedJaxpr), where
        _same_structure(va.jaxpr, vb.jaxpr)
    elif isinstance(va, Jaxpr):
        assert isinstance(vb, Jaxpr), where
        _same_structure(va, vb)
    elif type(va) is tuple:
        assert type(vb) is tuple and len(va) == len(vb), where
        for x, y in zip(va, vb, strict=True):
            _same_param(x, y, where)
    else:
        assert type(va) is type(vb) and va == vb, where


def _traced(name: str) -> tuple[ClosedJaxpr, tuple[Any, ...]]:
    f, args = CORPUS[name]
    return lc.make_jaxpr(f)(*args), args


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_text_round_trip_is_exact(name: str) -> None:
    closed, _ = _traced(name)
    text = str(closed)
    parsed = parse(text, elided_constants(closed))
    assert str(parsed) == text
    _same_structure(closed.jaxpr, parsed.jaxpr)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_parsed_program_computes_the_same_values(name: str) -> None:
    closed, args = _traced(name)
    parsed = parse(str(closed), elided_constants(closed))
    want = reference_evaluator(closed, args)
    got = reference_evaluator(parsed, args)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype.kind == "V":  # keys: compare their bits
            g, w = g.view(np.uint8), w.view(np.uint8)
        np.testing.assert_array_equal(g, w)


def test_the_corpus_has_the_layouts_it_is_meant_to_cover() -> None:
    # A callee's binder printed `_` after its caller's dropped output, and read.
    assert "in (_, " in str(_traced("grad_of_jit_reads_underscore")[0])
    # A shared jaxpr used by an earlier one (`let _normal` uses `_normal_real`, defined next).
    text = str(_traced("shared_jaxpr_used_before_defined")[0])
    assert text.index("let _normal = ") < text.index("let _normal_real = ")


def test_elided_constants_are_in_print_order() -> None:
    a, b = np.arange(3, dtype=f32), np.arange(5, dtype=f32)
    closed = lc.make_jaxpr(lambda x, y: (x * a, y + b))(a, b)
    got = elided_constants(closed)
    assert [c.shape for c in got] == [(3,), (5,)]
    assert str(parse(str(closed), got)) == str(closed)


def test_a_shared_jaxpr_used_before_its_definition_takes_its_constants_in_print_order() -> None:
    text = (
        "let a = { lambda ; b:f32[3]. let c:f32[3] = jit[name=d jaxpr=d] b in (c,) } in\n"
        "let d = { lambda ; e:f32[3]. let f:f32[3] = add e [...]:f32[3] in (f,) } in\n"
        "{ lambda ; g:f32[3]. let\n"
        "    h:f32[3] = add g [...]:f32[3]\n"
        "    i:f32[3] = jit[name=a jaxpr=a] h\n"
        "    j:f32[3] = jit[name=a jaxpr=a] i\n"
        "  in (j,) }"
    )
    ones, tens = np.ones(3, f32), np.full(3, 10, f32)
    parsed = parse(text, [ones, tens])
    np.testing.assert_array_equal(reference_evaluator(parsed, [np.zeros(3, f32)])[0], 12)
    assert str(parse(str(parsed), elided_constants(parsed))) == str(parsed)


def _error(text: str, consts: Any = None) -> JaxprSyntaxError:
    with pytest.raises(JaxprSyntaxError) as info:
        parse(text, consts)
    return info.value


def test_unknown_primitive_is_named_with_its_place() -> None:
    e = _error("{ lambda ; a:f32[]. let\n    b:f32[] = frobnicate a\n  in (b,) }")
    assert (e.line, e.column) == (2, 15)
    assert "unknown primitive 'frobnicate'" in str(e)
    assert str(e).startswith("line 2, column 15: ")


def test_unbound_variable_is_named() -> None:
    e = _error("{ lambda ; a:f32[]. let b:f32[] = sin c in (b,) }")
    assert (e.line, e.column) == (1, 39)
    assert "unbound variable 'c'" in str(e)


def test_bad_type_is_named() -> None:
    e = _error("{ lambda ; a:q32[]. let  in (a,) }")
    assert "unknown dtype 'q32'" in str(e) and e.column == 14


def test_type_mismatch_is_named() -> None:
    e = _error("{ lambda ; a:f32[3]. let b:f32[4] = sin a in (b,) }")
    assert "type mismatch: 'sin' of these operands gives f32[3], the text says f32[4]" in str(e)
    assert e.column == 26


def test_a_variable_bound_twice_is_an_error() -> None:
    e = _error("{ lambda ; a:f32[]. let a:f32[] = sin a in (a,) }")
    assert "variable 'a' is bound twice" in str(e) and e.column == 25


def test_an_equation_reads_names_bound_before_it_only() -> None:
    assert "unbound variable 'b'" in str(
        _error("{ lambda ; a:f32[]. let b:f32[] = sin b in (b,) }")
    )


def test_truncated_text_says_what_was_expected() -> None:
    e = _error("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,")
    assert "the end of the text" in str(e)


def test_missing_constants_name_the_first_missing_one() -> None:
    closed, _ = _traced("elided_constant")
    text = str(closed)
    e = _error(text)
    assert "no value for [...]:f32[3,4], elided constant number 1" in str(e)
    e = _error(text, elided_constants(closed)[:1])
    assert "elided constant number 2" in str(e) and "consts has 1" in str(e)


def test_too_many_constants_are_reported() -> None:
    closed, _ = _traced("elided_constant")
    consts = [*elided_constants(closed), np.zeros(3, f32)]
    assert "consts has 3 values but the text elides 2" in str(_error(str(closed), consts))


def test_a_bad_param_gives_a_located_error() -> None:
    text = "{ lambda ; a:f32[2]. let b:f32[2] = dot_general[dimension_numbers=3] a a in (b,) }"
    assert "bad equation for 'dot_general'" in str(_error(text))


_FUZZ_SOURCES = [str(_traced(name)[0]) for name in ("jit_shared_let", "scan", "grad", "cond")]


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(st.integers(0, len(_FUZZ_SOURCES) - 1), st.data())
def test_dropping_a_token_gives_a_located_error_or_a_program(source: int, data: Any) -> None:
    text = _FUZZ_SOURCES[source]
    pieces = text.split(" ")
    k = data.draw(st.integers(0, len(pieces) - 1))
    edited = " ".join(pieces[:k] + pieces[k + 1 :])
    try:
        parsed = parse(edited)
    except JaxprSyntaxError as e:
        message = str(e)
    else:
        message = "line " if str(parsed) else ""
    assert message.startswith("line ")


# --- the JSON form --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_json_round_trip_is_exact_and_computes_the_same_values(name: str) -> None:
    closed, args = _traced(name)
    document = to_json(closed)
    loaded = from_json(document)
    assert str(loaded) == str(closed)
    _same_structure(closed.jaxpr, loaded.jaxpr)
    assert to_json(loaded) == document
    for g, w in zip(
        reference_evaluator(loaded, args), reference_evaluator(closed, args), strict=True
    ):
        g, w = np.asarray(g), np.asarray(w)
        if w.dtype.kind == "V":
            g, w = g.view(np.uint8), w.view(np.uint8)
        np.testing.assert_array_equal(g, w)


def test_json_holds_the_constants_bit_for_bit() -> None:
    odd = np.array([np.nan, -0.0, np.inf, 1e-45], f32)
    closed = lc.make_jaxpr(lambda x: (x * odd, (x > 0) * np.arange(4, dtype=np.int8)))(odd)
    doc = json.loads(to_json(closed))
    assert doc["format"] == "lamina.jaxpr" and doc["version"] == 1
    assert [c["dtype"] for c in doc["constants"]] == ["f32", "i8"]
    got = elided_constants(from_json(to_json(closed)))
    assert got[0].tobytes() == odd.tobytes()
    assert got[1].dtype == np.int8


def test_json_lists_equations_structurally() -> None:
    closed, _ = _traced("scan")
    doc = json.loads(to_json(closed))
    scan = doc["program"]["eqns"][-1]
    assert scan["primitive"] == "scan"
    assert scan["params"]["length"] == "3"
    body = doc["jaxprs"][scan["params"]["jaxpr"]]
    assert [e["primitive"] for e in body["eqns"]] == ["add", "mul"]
    assert scan["outvars"] == [["d", "f32[4]"], ["e", "f32[3,4]"]]


def _json_error(doc: Any) -> JaxprJSONError:
    with pytest.raises(JaxprJSONError) as info:
        from_json(doc if isinstance(doc, str) else json.dumps(doc))
    return info.value


def _doc(name: str = "scan") -> Any:
    return json.loads(to_json(_traced(name)[0]))


def test_json_errors_name_the_place_in_the_document() -> None:
    assert _json_error("{").path == ""
    assert "not JSON: line 1, column 2" in str(_json_error("{"))
    doc = _doc()
    doc["version"] = 2
    assert str(_json_error(doc)) == "version: this reader reads version 1, found 2"
    doc = _doc()
    doc["program"]["eqns"][1]["primitive"] = "frobnicate"
    e = _json_error(doc)
    assert e.path == "program.eqns[1]" and "unknown primitive 'frobnicate'" in e.message
    doc = _doc()
    doc["program"]["eqns"][0]["outvars"][0][1] = "f32[9,4]"
    e = _json_error(doc)
    assert e.path == "program.eqns[0]" and "type mismatch" in e.message
    doc = _doc()
    doc["jaxprs"]["jaxpr"]["eqns"][0]["invars"][1] = "zz"
    e = _json_error(doc)
    assert e.path == "jaxprs.jaxpr.eqns[0]" and "unbound variable 'zz'" in e.message
    doc = _doc()
    del doc["program"]["invars"]
    assert str(_json_error(doc)) == "program: missing key 'invars'"
    doc = _doc()
    doc["program"]["eqns"][0]["invars"] = [7]
    assert str(_json_error(doc)) == (
        "program.eqns[0].invars[0]: expected a name or an object, found int"
    )


def test_json_constant_errors() -> None:
    doc = _doc("elided_constant")
    doc["constants"][1]["data"] = "AAAA"
    assert str(_json_error(doc)) == ("constants[1].data: 3 bytes for f32[4], which takes 16")
    doc = _doc("elided_constant")
    doc["program"]["eqns"][0]["invars"][1]["const"] = 5
    assert "program.eqns[0].invars[1].const: expected an index into 'constants'" in str(
        _json_error(doc)
    )
    doc = _doc("elided_constant")
    doc["constants"][0]["dtype"] = "q7"
    assert str(_json_error(doc)) == "constants[0].dtype: unknown dtype 'q7'"


def test_json_text_smuggled_into_a_param_is_refused() -> None:
    doc = _doc()
    # A param value that closes the bracket and adds an operand reads as another program.
    doc["program"]["eqns"][1]["params"]["dimensions"] = "(0,)] b"
    assert "program.eqns[1]" in str(_json_error(doc))
    doc = _doc()
    doc["program"]["invars"][0][0] = "a:f32[3] ; b"
    assert "is not a variable name" in str(_json_error(doc))


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document, the root first."""
    out = [path]
    if isinstance(node, dict):
        for key, child in node.items():
            out += _paths(child, (*path, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            out += _paths(child, (*path, index))
    return out


_JSON_SOURCES = [json.loads(to_json(_traced(n)[0])) for n in ("jit_shared_let", "scan", "grad")]
_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 40),
    st.text(max_size=8),
    st.sampled_from(["f32[3]", "f32[3,4]", "a", "_", "jaxpr", "(0,)", "[...]", "{"]),
    st.just([]),
    st.just({}),
)


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(st.integers(0, len(_JSON_SOURCES) - 1), st.data())
def test_an_edited_json_document_gives_a_located_error_or_a_program(source: int, data: Any) -> None:
    doc = json.loads(json.dumps(_JSON_SOURCES[source]))
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = data.draw(_JUNK)
    try:
        loaded = from_json(json.dumps(doc))
    except JaxprJSONError as e:
        message = e.message
    else:  # an edit that still spells a program: it must be a well-formed one
        message = str(loaded)
    assert message
