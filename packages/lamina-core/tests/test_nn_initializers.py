"""`lamina_core.nn.initializers` against `jax.nn.initializers`: jaxprs and values, key for key."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core.nn import initializers

pytestmark = pytest.mark.oracle

Make = Callable[[ModuleType], Any]

CASES: list[tuple[str, Make, tuple[int, ...], Any]] = [
    ("zeros", lambda m: m.zeros, (3, 4), None),
    ("ones", lambda m: m.ones, (2,), np.int32),
    ("constant", lambda m: m.constant(3.0), (3, 4), None),
    ("constant_dtype", lambda m: m.constant(-1, dtype=np.float16), (2, 2), None),
    ("uniform", lambda m: m.uniform(), (3, 4), None),
    ("uniform_scale", lambda m: m.uniform(2.0), (5,), np.float16),
    ("normal", lambda m: m.normal(0.5), (3, 4, 5), None),
    ("truncated_normal", lambda m: m.truncated_normal(0.5, lower=-1.0), (3, 4), None),
    ("glorot_uniform", lambda m: m.glorot_uniform(), (3, 4, 5), None),
    ("glorot_normal", lambda m: m.glorot_normal(), (4, 6), None),
    ("xavier_uniform", lambda m: m.xavier_uniform(batch_axis=0), (2, 4, 6), None),
    ("lecun_uniform", lambda m: m.lecun_uniform(), (4, 6), None),
    ("lecun_normal", lambda m: m.lecun_normal(in_axis=0, out_axis=(1, 2)), (3, 4, 5), None),
    ("he_uniform", lambda m: m.he_uniform(), (4, 6), None),
    ("he_normal", lambda m: m.he_normal(), (4, 6), np.float16),
    ("kaiming_normal", lambda m: m.kaiming_normal(), (4, 6), None),
    ("fan_out_normal", lambda m: m.variance_scaling(2.0, "fan_out", "normal"), (4, 6), None),
    ("fan_geo_avg", lambda m: m.variance_scaling(0.5, "fan_geo_avg", "uniform"), (4, 6), None),
]


def _jax_init() -> ModuleType:
    module: ModuleType = pytest.importorskip("jax.nn.initializers")
    return module


def _diff(ours: str, theirs: str) -> str:
    return "\n".join(difflib.unified_diff(theirs.splitlines(), ours.splitlines(), lineterm=""))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_initializer_matches_jax(case: tuple[str, Make, tuple[int, ...], Any]) -> None:
    import jax

    _, make, shape, dtype = case
    theirs_mod = _jax_init()
    ours_init, theirs_init = make(initializers), make(theirs_mod)
    for seed in (0, 7):
        ours_key, theirs_key = lamina_core.random.key(seed), jax.random.key(seed)
        ours = lamina_core.make_jaxpr(lambda k: ours_init(k, shape, dtype))(ours_key)
        theirs = jax.make_jaxpr(lambda k: theirs_init(k, shape, dtype))(theirs_key)
        assert str(ours) == str(theirs), _diff(str(ours), str(theirs))
        got = np.asarray(ours_init(ours_key, shape, dtype))
        want = np.asarray(theirs_init(theirs_key, shape, dtype))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(
            got, want, rtol=2e-3 if got.dtype == np.float16 else 1e-5, atol=1e-6
        )


@pytest.mark.parametrize("distribution", ["uniform", "truncated_normal"])
def test_complex_variance_scaling_values(distribution: str) -> None:
    import jax

    theirs_mod = _jax_init()

    def make(m: Any) -> Any:
        return m.variance_scaling(1.0, "fan_in", distribution, dtype=np.complex64)

    got = np.asarray(make(initializers)(lamina_core.random.key(3), (4, 5)))
    want = np.asarray(make(theirs_mod)(jax.random.key(3), (4, 5)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


BAD: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("fans_1d", lambda m, k: m.glorot_uniform()(k, (3,))),
    ("mode", lambda m, k: m.variance_scaling(1.0, "fan_max", "normal")(k, (2, 2))),
    ("distribution", lambda m, k: m.variance_scaling(1.0, "fan_in", "cauchy")(k, (2, 2))),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_arguments_raise_as_jax(case: tuple[str, Callable[[Any, Any], Any]]) -> None:
    import jax

    bad = case[1]
    with pytest.raises(Exception) as want:
        bad(_jax_init(), jax.random.key(0))
    with pytest.raises(type(want.value), match=str(want.value)[:40]):
        bad(initializers, lamina_core.random.key(0))


def test_public_names_match_jax() -> None:
    theirs = {n for n in dir(_jax_init()) if not n.startswith("_")}
    assert set(initializers.__all__) == theirs
    assert isinstance(initializers.zeros, initializers.Initializer)
