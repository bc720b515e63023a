"""Eager calls of the `jnp` functions JAX jits run as one cached XLA executable in Lamina too:
the value is JAX's, the function is traced once, and from the second call on the call goes
through the runtime's jit dispatcher rather than tracing again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp
from lamina_core.jit import Jitted
from lamina_core.numpy import _signal

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

_X = np.array([-np.inf, -2.5, -1.0, 0.0, np.nan, 0.5, 1.0, 3.0, np.inf], np.float32)
_M = np.arange(16, dtype=np.float32).reshape(4, 4) - 5.0

Call = Callable[[Any, Any], Any]

CASES: list[tuple[str, str, Call, Any]] = [
    ("nan_to_num", "nan_to_num", lambda n, x: n.nan_to_num(x), _X),
    ("isclose", "isclose", lambda n, x: n.isclose(x, x[::-1], equal_nan=True), _X),
    ("allclose", "allclose", lambda n, x: n.allclose(x, x + 1e-9), _M),
    ("diff", "diff", lambda n, x: n.diff(x, axis=0), _M),
    ("tril", "tril", lambda n, x: n.tril(x, -1), _M),
    ("triu", "triu", lambda n, x: n.triu(x), _M),
    ("diagonal", "diagonal", lambda n, x: n.diagonal(x, 1), _M),
    ("kron", "kron", lambda n, x: n.kron(x[:2], x[:2, :2]), _M),
    ("rot90", "rot90", lambda n, x: n.rot90(x), _M),
    ("count_nonzero", "count_nonzero", lambda n, x: n.count_nonzero(x, axis=0), _M),
]


@pytest.mark.parametrize(("name", "call", "x"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_eager_call_is_jaxs_value_and_traces_once(name: str, call: Call, x: Any) -> None:
    jitted = getattr(lnp, name)
    assert isinstance(jitted, Jitted)
    device_x = lamina.device_put(x)
    want = np.asarray(call(jnp, x))
    before = len(jitted._cache)
    results = [np.asarray(call(lnp, device_x)) for _ in range(3)]
    for got in results:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # At most one new trace for this signature (none if an earlier test made it), and the
    # dispatcher serves the repeated calls.
    assert len(jitted._cache) - before in (0, 1)
    assert jitted._toplevel is not None


def test_interp_eager_matches_jax_and_reuses_its_jit() -> None:
    x = lamina.device_put(np.linspace(-4.0, 4.0, 13, dtype=np.float32))
    xp = np.linspace(-3.0, 3.0, 6, dtype=np.float32)
    want = np.asarray(jnp.interp(np.asarray(x), xp, xp * 2))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(lnp.interp(x, xp, xp * 2)), want, rtol=1e-6)
    jitted = _signal._interp_jits[("left", "right", "period")]
    assert jitted._toplevel is not None
