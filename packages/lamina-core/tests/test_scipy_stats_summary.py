"""`truncnorm`, `mode`, `rankdata` and `sem` of `lamina_core.scipy.stats` against
`jax.scipy.stats`: printed jaxprs (where the shared jnp functions they use print as JAX's),
values, float64, gradients against JAX and finite differences, and JAX's errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import lamina_core
import lamina_core.scipy
from lamina_core.testing import Oracle, check_ad, sweep

pytestmark = pytest.mark.oracle

Program = Callable[[ModuleType, ModuleType], Callable[..., Any]]


def stats_of(jnp: ModuleType) -> Any:
    if jnp is lamina_core.numpy:
        return lamina_core.scipy.stats
    import jax.scipy.stats

    return jax.scipy.stats


def calling(path: str, **kwargs: Any) -> Program:
    def make(jnp: ModuleType, lax: ModuleType) -> Callable[..., Any]:
        f = stats_of(jnp)
        for part in path.split("."):
            f = getattr(f, part)
        return lambda *args: f(*args, **kwargs)

    return make


@contextlib.contextmanager
def x64() -> Iterator[None]:
    import jax

    with lamina_core.config(jax_enable_x64=True), jax.enable_x64(True):
        yield


def check(oracle: Oracle, prog: Program, *args: Any, printed: bool = True) -> None:
    import jax
    from jax._src import config as jax_config

    closed = lamina_core.make_jaxpr(prog(lamina_core.numpy, lamina_core.lax))(*args)
    if printed:
        with jax_config.use_simplified_jaxpr_constants(True):
            theirs = jax.make_jaxpr(prog(oracle.jnp, oracle.lax))(*args)
        assert str(closed) == str(theirs), f"\n--- lamina ---\n{closed}\n--- jax ---\n{theirs}"
    got = oracle.evaluate(closed, list(args))
    want = jax.tree_util.tree_leaves(oracle.jit(prog(oracle.jnp, oracle.lax))(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


f32 = np.float32
X = np.array([-np.inf, -3.0, -1.0, -0.25, 0.0, 0.3, 0.5, 1.0, 2.5, 8.0, np.inf, np.nan], f32)
# Intervals around 0, in the right and left tails, far in a tail, and empty (a >= b).
A = np.array([-1.0, 0.5, -10.0, 3.0, 1.0], f32)[:, None]
B = np.array([1.0, 2.0, -8.0, 5.0, 1.0], f32)[:, None]
LOC, SCALE = f32(0.25), f32(1.5)

TRUNCNORM: list[tuple[str, tuple[Any, ...]]] = [
    ("logpdf", (X, A, B, LOC, SCALE)),
    # XLA's fused exp of a select of nan gives garbage (JAX's pdf where a >= b under jit).
    ("pdf", (X, A[:4], B[:4], LOC, SCALE)),
    ("logcdf", (X, A, B, LOC, SCALE)),
    ("cdf", (X, A, B, LOC, SCALE)),
    ("logsf", (X, A, B, LOC, SCALE)),
    ("sf", (X, A, B)),
]


@pytest.mark.parametrize(("fn", "args"), sweep(TRUNCNORM, [f"truncnorm.{f}" for f, _ in TRUNCNORM]))
def test_truncnorm(oracle: Oracle, fn: str, args: Any) -> None:
    check(oracle, calling(f"truncnorm.{fn}"), *args)


@pytest.mark.slow
def test_truncnorm_float64(oracle: Oracle) -> None:
    with x64():
        for fn in ("logpdf", "logcdf", "logsf"):
            check(oracle, calling(f"truncnorm.{fn}"), *(np.float64(a) for a in (X, A, B)))


@pytest.mark.parametrize(
    "fn", ["logpdf", *(pytest.param(f, marks=pytest.mark.slow) for f in ("logcdf", "sf"))]
)
def test_truncnorm_grad(oracle: Oracle, fn: str) -> None:
    args = (0.3, -1.0, 2.0, 0.1, 1.5)
    prog = calling(f"truncnorm.{fn}")
    check_ad(oracle, prog, *(f32(a) for a in args), kinds=("grad",), printed=False, order=0)
    with x64():
        check_ad(oracle, prog, *(np.float64(a) for a in args), kinds=(), order=1)


SAMPLE = np.array([[1, 2, 2, 3], [3, 3, 1, 1], [0, 5, 5, 5]], f32)
WITH_NANS = np.where(SAMPLE > 4, np.nan, SAMPLE)
TIES = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0], f32)

# (program, argument, printed as JAX's): `mode` stages the shared `jnp.unique`, the `min`,
# `max` and `average` ranks `jnp.nonzero(size=...)`, `sem(nan_policy='omit')` `jnp.nanstd`,
# which Lamina stages in other (equivalent) equations.
SUMMARY: list[tuple[str, Program, Any, bool]] = [
    ("rankdata_dense", calling("rankdata", method="dense"), TIES, True),
    ("rankdata_ordinal", calling("rankdata", method="ordinal"), TIES, True),
    ("rankdata_average", calling("rankdata"), TIES, False),
    ("rankdata_min", calling("rankdata", method="min"), TIES, False),
    ("rankdata_max", calling("rankdata", method="max"), TIES, False),
    ("rankdata_axis", calling("rankdata", axis=1), SAMPLE, False),
    ("rankdata_nan", calling("rankdata"), np.array([1.0, np.nan, 0.0], f32), False),
    ("rankdata_ints", calling("rankdata", method="dense"), np.array([2, 7, 2, 1]), True),
    ("sem", calling("sem"), SAMPLE, True),
    ("sem_all", calling("sem", axis=None, ddof=2, keepdims=True), SAMPLE, True),
    ("sem_ints", calling("sem", axis=1), np.arange(12).reshape(3, 4), True),
    ("sem_omit", calling("sem", axis=1, nan_policy="omit"), WITH_NANS, False),
    ("mode", calling("mode"), SAMPLE, False),
    ("mode_axis", calling("mode", axis=1, keepdims=True), SAMPLE, False),
    ("mode_all", calling("mode", axis=None), SAMPLE, False),
    ("mode_all_keepdims", calling("mode", axis=None, keepdims=True), SAMPLE, False),
    ("mode_scalar", calling("mode"), f32(3.0), False),
    ("mode_ints", calling("mode", axis=-1), np.array([[1, 1, 2], [3, 2, 2]]), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "prog", "arg", "printed"), sweep(SUMMARY, [s[0] for s in SUMMARY])
)
def test_summary(oracle: Oracle, name: str, prog: Program, arg: Any, printed: bool) -> None:
    check(oracle, prog, arg, printed=printed)


def test_sem_grad(oracle: Oracle) -> None:
    check_ad(oracle, calling("sem"), SAMPLE, kinds=("grad",), printed=False, order=0)


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("mode_policy", lambda s: s.mode(SAMPLE, nan_policy="skip")),
    ("mode_omit", lambda s: s.mode(SAMPLE, nan_policy="omit")),
    ("mode_raise", lambda s: s.mode(SAMPLE, nan_policy="raise")),
    ("mode_axis", lambda s: s.mode(SAMPLE, axis=2)),
    ("mode_list", lambda s: s.mode([1, 2])),
    ("rankdata_method", lambda s: s.rankdata(TIES, "median")),
    ("rankdata_raise", lambda s: s.rankdata(TIES, nan_policy="raise")),
    ("sem_policy", lambda s: s.sem(SAMPLE, nan_policy="raise")),
    ("truncnorm_list", lambda s: s.truncnorm.logpdf([0.0], -1.0, 1.0)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Callable[[Any], Any]) -> None:
    import jax.scipy.stats

    kind, message = _raised(lambda: call(jax.scipy.stats))
    with pytest.raises(kind) as info:
        call(lamina_core.scipy.stats)
    assert str(info.value) == message
