"""`lamina.jaxpr_io`: the public module over lamina-core's jaxpr parser."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lamina
import lamina.jaxpr_io as jaxpr_io
import lamina.numpy as jnp
from lamina_core.ir import JaxprSyntaxError, elided_constants, from_json, parse, to_json


def test_the_public_module_is_core_s_parser() -> None:
    assert jaxpr_io.parse is parse
    assert jaxpr_io.elided_constants is elided_constants
    assert jaxpr_io.JaxprSyntaxError is JaxprSyntaxError
    assert jaxpr_io.to_json is to_json and jaxpr_io.from_json is from_json


def test_a_program_printed_by_lamina_reads_back() -> None:
    closed = lamina.make_jaxpr(lambda x: jnp.sin(x) * 2.0 + np.arange(4.0, dtype=np.float32))(
        np.ones(4, np.float32)
    )
    text = str(closed)
    assert str(jaxpr_io.parse(text, jaxpr_io.elided_constants(closed))) == text


def _mlp(w: Any, x: Any) -> Any:
    return jnp.sum(jnp.tanh(x @ w) * np.arange(3.0, dtype=np.float32))


_W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
_X = np.linspace(0, 2, 8, dtype=np.float32).reshape(2, 4)


def _loaded(kind: str) -> tuple[Any, Any]:
    closed = lamina.make_jaxpr(_mlp)(_W, _X)
    if kind == "text":
        return closed, jaxpr_io.parse(str(closed), jaxpr_io.elided_constants(closed))
    return closed, jaxpr_io.from_json(jaxpr_io.to_json(closed))


@pytest.mark.parametrize("kind", ["text", "json"])
def test_a_program_read_back_is_a_first_class_program(kind: str) -> None:
    closed, loaded = _loaded(kind)
    f = jaxpr_io.jaxpr_as_fun(loaded)
    want = _mlp(_W, _X)
    np.testing.assert_allclose(lamina.jit(f)(_W, _X)[0], want, rtol=1e-6)
    grads = lamina.grad(lambda w: f(w, _X)[0])(_W)
    np.testing.assert_allclose(grads, lamina.grad(_mlp)(_W, _X), rtol=1e-6)
    batched = lamina.vmap(f, in_axes=(None, 0))(_W, _X[:, None])[0]
    np.testing.assert_allclose(batched, [_mlp(_W, row[None]) for row in _X], rtol=1e-6)
    lowered = lamina.jit(f).lower(_W, _X).as_text()
    assert lowered == lamina.jit(jaxpr_io.jaxpr_as_fun(closed)).lower(_W, _X).as_text()
    assert str(lamina.make_jaxpr(f)(_W, _X)) == str(closed)


def test_jaxpr_as_fun_names_a_wrong_argument() -> None:
    with pytest.raises(TypeError, match="expected a ClosedJaxpr, got function"):
        jaxpr_io.jaxpr_as_fun(_mlp)  # type: ignore[arg-type]
