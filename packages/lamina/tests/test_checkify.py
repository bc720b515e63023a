"""`lamina.experimental.checkify` against JAX 0.10.2's `jax.experimental.checkify`: each program
runs under both, and the error's message (`err.get()`), its exception class, what
`err.throw()` raises and the outputs agree; so do printed jaxprs of `make_jaxpr(checkify(f))`
(up to the check codes, process-wide counters that differ with what each library traced
before)."""

from __future__ import annotations

import functools
import re
import traceback
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax._src import config as jax_config
from jax.experimental import checkify as jax_checkify

import lamina
import lamina.numpy as ljnp
from lamina.experimental import checkify as lamina_checkify

pytestmark = pytest.mark.oracle


class Api(NamedTuple):
    """One library's names: `jax`, `jax.numpy` and `checkify`."""

    lib: Any
    np: Any
    ck: Any


JAX = Api(jax, jjnp, jax_checkify)
LAMINA = Api(lamina, ljnp, lamina_checkify)

Program = Callable[[Api], tuple[Callable[..., Any], tuple[Any, ...]]]
"""A case: given a library, the function to call and its arguments."""


@pytest.fixture(autouse=True)
def _literal_constants() -> Iterator[None]:
    # Lamina stages constants as literals: JAX's jaxprs match with its simplified form.
    with jax_config.use_simplified_jaxpr_constants(True):
        yield


def _raised(fn: Callable[[], Any]) -> tuple[str, str] | None:
    try:
        fn()
    except Exception as e:  # the class and message are compared with JAX's
        return type(e).__name__, str(e)
    return None


def _outcome(api: Api, program: Program) -> tuple[Any, ...]:
    """What checking `program` gives: message, exception class, what throw raises, outputs."""
    fun, args = program(api)
    # The library's arrays: `checkify` runs `f` on its arguments as they are, and a NumPy
    # comparison is no pred (a test below checks that both libraries refuse it).
    err, out = fun(*(api.np.asarray(x) for x in args))
    assert isinstance(err, api.ck.Error)
    exc = err.get_exception()
    leaves = [np.asarray(x) for x in api.lib.tree_util.tree_leaves(out)]
    return err.get(), type(exc).__name__, _raised(err.throw), leaves


def _assert_same_outcome(program: Program) -> None:
    want, got = _outcome(JAX, program), _outcome(LAMINA, program)
    assert got[:3] == want[:3]
    assert len(got[3]) == len(want[3])
    for g, w in zip(got[3], want[3], strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


# --- programs ------------------------------------------------------------------------------------

F32 = np.float32


def _user_check(a: Api) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        a.ck.check(x > 5, "x must be > 5, got {x} (next {})", x + 1, x=x)
        return x * 2

    return f


def _many_checks(a: Api) -> Callable[[Any, Any], Any]:
    """A user check, a NaN (log), an out-of-bounds index and a division: one of each category."""

    def f(x: Any, i: Any) -> Any:
        a.ck.check(i < 3, "i is {}", i)
        y = a.np.log(x)[i]
        return y, i // (i - 1)

    return f


def _cond(a: Api) -> Callable[[Any], Any]:
    def negative(x: Any) -> Any:
        a.ck.check(x > -5, "too negative: {}", x)
        return a.np.sin(x)

    return lambda x: a.lib.lax.cond(x > 0, a.np.log, negative, x)


def _scan(a: Api) -> Callable[[Any], Any]:
    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        a.ck.check(carry < 6, "carry {} at x {}", carry, x)
        return carry + x, a.np.log(x - 1)

    return lambda xs: a.lib.lax.scan(body, F32(0), xs)


def _while(a: Api) -> Callable[[Any], Any]:
    def cond(c: tuple[Any, Any]) -> Any:
        a.ck.check(c[0] < 10, "cond saw {}", c[0])
        return c[1] < 5

    def body(c: tuple[Any, Any]) -> tuple[Any, Any]:
        a.ck.check(c[0] > -1, "body saw {}", c[0])
        return a.np.sqrt(c[0]) * 3, c[1] + 1

    return lambda x: a.lib.lax.while_loop(cond, body, (x, 0))


def _custom_jvp(a: Api) -> Callable[[Any], Any]:
    def fun(x: Any) -> Any:
        a.ck.check(x > 0, "custom_jvp needs x > 0, got {}", x)
        return a.np.sin(x)

    f = a.lib.custom_jvp(fun)
    f.defjvp(lambda p, t: (f(p[0]), a.np.log(p[0]) * t[0]))
    return f  # type: ignore[no-any-return]  # the library's custom_jvp object


def _custom_vjp(a: Api) -> Callable[[Any], Any]:
    def fun(x: Any) -> Any:
        a.ck.check(x > 0, "custom_vjp needs x > 0, got {}", x)
        return a.np.sin(x)

    f = a.lib.custom_vjp(fun)
    f.defvjp(lambda x: (f(x), x), lambda r, ct: (ct * a.np.log(r),))
    return f  # type: ignore[no-any-return]  # the library's custom_vjp object


def _batched_check(a: Api) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        a.ck.check(x < 2, "bad {}", x)
        return a.np.log(x)

    return f


def _three_payloads(a: Api) -> Callable[[Any, Any], Any]:
    """User checks whose payloads differ: one error effect each, ordered as JAX orders them."""

    def f(x: Any, i: Any) -> Any:
        a.ck.check(x > 2, "no payload")
        a.ck.check(x > 1, "int and vector {} {}", i, a.np.stack([x, x]))
        a.ck.check(x > 0, "float {}", x)
        return x

    return f


def _shard_map(a: Api) -> Callable[[Any], Any]:
    mesh = a.lib.sharding.Mesh(np.array(a.lib.devices()[:2]), ("i",))
    spec = a.lib.P("i")
    return a.lib.shard_map(a.np.log, mesh=mesh, in_specs=spec, out_specs=spec)  # type: ignore[no-any-return]  # the library's function


def _constant_check(a: Api) -> Callable[[Any], Any]:
    """A check of values computed from constants (JAX has tracers of them, Lamina NumPy)."""

    def f(x: Any) -> Any:
        a.ck.check(a.np.int32(1) > 3, "constants {} {}", a.np.float32(2) * 3, a.np.arange(2))
        return x * 2

    return f


def _sets(a: Api, name: str) -> frozenset[Any]:
    sets: frozenset[Any] = getattr(a.ck, name)
    return sets


ARANGE = np.arange(4, dtype=np.float32)
PROGRAMS: dict[str, Program] = {
    "check_fails": lambda a: (a.ck.checkify(_user_check(a)), (F32(3),)),
    "check_passes": lambda a: (a.ck.checkify(_user_check(a)), (F32(7),)),
    "check_pytree_args": lambda a: (
        a.ck.checkify(lambda x: a.ck.check(x < 0, "{} then {y}", [x, x * 2], y={"k": x})),
        (F32(2),),
    ),
    "nan": lambda a: (a.ck.checkify(a.np.log, errors=a.ck.nan_checks), (F32(-1),)),
    "nan_not_enabled": lambda a: (a.ck.checkify(a.np.log), (F32(-1),)),
    "nan_vector": lambda a: (a.ck.checkify(a.np.sqrt, errors=a.ck.nan_checks), (ARANGE - 2,)),
    "div_int": lambda a: (
        a.ck.checkify(lambda x, y: x // y, errors=a.ck.div_checks),
        (np.int32(3), np.int32(0)),
    ),
    "div_float_is_no_error": lambda a: (
        a.ck.checkify(lambda x, y: x / y, errors=a.ck.div_checks),
        (F32(3), F32(0)),
    ),
    "index": lambda a: (a.ck.checkify(lambda x, i: x[i], errors=a.ck.index_checks), (ARANGE, 7)),
    "index_negative": lambda a: (
        a.ck.checkify(lambda x, i: x[i], errors=a.ck.index_checks),
        (ARANGE, -9),
    ),
    "index_gather_2d": lambda a: (
        a.ck.checkify(lambda x, i: x[i], errors=a.ck.index_checks),
        (np.arange(12.0).reshape(3, 4), np.array([[1, 2], [5, 0]])),
    ),
    "index_dynamic_slice": lambda a: (
        a.ck.checkify(
            lambda x, i: a.lib.lax.dynamic_slice(x, (i,), (2,)), errors=a.ck.index_checks
        ),
        (ARANGE, 3),
    ),
    "index_dynamic_update_slice": lambda a: (
        a.ck.checkify(
            lambda x, i: a.lib.lax.dynamic_update_slice(x, a.np.ones(2, "float32"), (i,)),
            errors=a.ck.index_checks,
        ),
        (ARANGE, 3),
    ),
    "index_scatter": lambda a: (
        a.ck.checkify(lambda x, i: a.np.asarray(x).at[i].add(1.0), errors=a.ck.index_checks),
        (ARANGE, 9),
    ),
    "float_checks": lambda a: (
        a.ck.checkify(lambda x, i: (a.np.log(x), i // i), errors=a.ck.float_checks),
        (F32(2), np.int32(0)),
    ),
    "automatic_drops_user_checks": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.automatic_checks),
        (ARANGE + 1, np.int32(5)),
    ),
    "all_first_failure_wins": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.all_checks),
        (ARANGE - 1, np.int32(5)),
    ),
    "all_nan_before_division": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.all_checks),
        (ARANGE - 1, np.int32(1)),
    ),
    "all_passes": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.all_checks),
        (ARANGE + 1, np.int32(2)),
    ),
    "user_or_nan": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.user_checks | a.ck.nan_checks),
        (ARANGE - 1, np.int32(1)),
    ),
    "all_minus_user_and_nan": lambda a: (
        a.ck.checkify(_many_checks(a), errors=a.ck.all_checks - a.ck.user_checks - a.ck.nan_checks),
        (ARANGE - 1, np.int32(1)),
    ),
    "three_payloads_last_fails": lambda a: (
        a.ck.checkify(_three_payloads(a)),
        (F32(1.5), np.int32(4)),
    ),
    "three_payloads_first_fails": lambda a: (
        a.ck.checkify(_three_payloads(a)),
        (F32(-1), np.int32(4)),
    ),
    "shard_map": lambda a: (a.ck.checkify(_shard_map(a), errors=a.ck.nan_checks), (ARANGE - 2,)),
    "constant_pred": lambda a: (a.ck.checkify(_constant_check(a)), (F32(1),)),
    "checkify_of_jit": lambda a: (a.ck.checkify(a.lib.jit(_user_check(a))), (F32(3),)),
    "jit_of_checkify": lambda a: (a.lib.jit(a.ck.checkify(_user_check(a))), (F32(3),)),
    "jit_of_checkify_all": lambda a: (
        a.lib.jit(a.ck.checkify(_many_checks(a), errors=a.ck.all_checks)),
        (ARANGE - 1, np.int32(1)),
    ),
    "checkify_of_grad": lambda a: (
        a.ck.checkify(a.lib.grad(lambda x: a.np.sqrt(x) * a.np.sin(x)), errors=a.ck.all_checks),
        (F32(-1),),
    ),
    "checkify_of_grad_user_check": lambda a: (
        a.ck.checkify(a.lib.grad(_user_check(a))),
        (F32(3),),
    ),
    "checkify_of_vmap_nan": lambda a: (
        a.ck.checkify(a.lib.vmap(a.np.log), errors=a.ck.nan_checks),
        (ARANGE - 1,),
    ),
    "checkify_of_vmap_index": lambda a: (
        a.ck.checkify(a.lib.vmap(lambda x, i: x[i], (None, 0)), errors=a.ck.index_checks),
        (ARANGE, np.array([0, 5, 2, 6])),
    ),
    "vmap_of_checkify": lambda a: (
        a.lib.vmap(a.ck.checkify(_batched_check(a), errors=a.ck.all_checks)),
        (ARANGE - 1,),
    ),
    "vmap_of_checkify_passes": lambda a: (
        a.lib.vmap(a.ck.checkify(_batched_check(a), errors=a.ck.all_checks)),
        (ARANGE / 2 + 0.5,),
    ),
    "jit_of_vmap_of_checkify": lambda a: (
        a.lib.jit(a.lib.vmap(a.ck.checkify(_batched_check(a)))),
        (ARANGE,),
    ),
    "cond_user_check": lambda a: (a.ck.checkify(_cond(a), errors=a.ck.all_checks), (F32(-7),)),
    "cond_passes": lambda a: (a.ck.checkify(_cond(a), errors=a.ck.all_checks), (F32(2),)),
    "scan": lambda a: (a.ck.checkify(_scan(a), errors=a.ck.all_checks), (ARANGE + 1,)),
    "scan_nan_first": lambda a: (a.ck.checkify(_scan(a), errors=a.ck.all_checks), (ARANGE,)),
    "scan_user_only": lambda a: (a.ck.checkify(_scan(a)), (ARANGE,)),
    "while_cond_check": lambda a: (a.ck.checkify(_while(a), errors=a.ck.all_checks), (F32(50),)),
    "while_body_check": lambda a: (a.ck.checkify(_while(a), errors=a.ck.all_checks), (F32(-3),)),
    "while_passes": lambda a: (a.ck.checkify(_while(a), errors=a.ck.all_checks), (F32(2),)),
    "custom_jvp": lambda a: (a.ck.checkify(_custom_jvp(a), errors=a.ck.all_checks), (F32(-1),)),
    "grad_of_custom_jvp": lambda a: (
        a.ck.checkify(a.lib.grad(_custom_jvp(a)), errors=a.ck.all_checks),
        (F32(-1),),
    ),
    "custom_vjp": lambda a: (a.ck.checkify(_custom_vjp(a), errors=a.ck.all_checks), (F32(-1),)),
    "grad_of_custom_vjp": lambda a: (
        a.ck.checkify(a.lib.grad(_custom_vjp(a)), errors=a.ck.all_checks),
        (F32(-1),),
    ),
    "grad_of_custom_vjp_passes": lambda a: (
        a.ck.checkify(a.lib.grad(_custom_vjp(a)), errors=a.ck.all_checks),
        (F32(2),),
    ),
    "remat": lambda a: (
        a.ck.checkify(a.lib.checkpoint(_user_check(a)), errors=a.ck.all_checks),
        (F32(1),),
    ),
    "check_error_of_inner_checkify": lambda a: (
        a.ck.checkify(a.lib.jit(lambda x: a.ck.check_error(a.ck.checkify(_user_check(a))(x)[0]))),
        (F32(1),),
    ),
    "debug_check": lambda a: (
        a.ck.checkify(lambda x: a.ck.debug_check(x < 0, "debug {}", x)),
        (F32(1),),
    ),
}


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_checkified_program_reports_what_jax_reports(case: str) -> None:
    _assert_same_outcome(PROGRAMS[case])


def _numbered_codes(text: str) -> str:
    """`text` with each check code renumbered by first appearance (codes are global counters)."""
    codes: dict[str, str] = {}

    def renumber(m: re.Match[str]) -> str:
        return m[1] + codes.setdefault(m[2], f"CODE{len(codes)}") + m[3]

    return re.sub(r"(select_n \S+ )(\d+)(:i32\[\])", renumber, text)


# Lamina computes on constants under a trace where JAX stages them: not the same jaxpr.
@pytest.mark.parametrize("case", sorted(set(PROGRAMS) - {"constant_pred"}))
def test_printed_jaxpr_of_checkify_matches_jax(case: str) -> None:
    texts = []
    for api in (JAX, LAMINA):
        fun, args = PROGRAMS[case](api)
        jaxpr = api.lib.make_jaxpr(fun)(*(api.np.asarray(x) for x in args))
        texts.append(_numbered_codes(str(jaxpr)))
    assert texts[1] == texts[0]


STAGED_CHECKS: dict[str, Callable[[Api], Callable[[Any], Any]]] = {
    "check": _user_check,
    "jit": lambda a: a.lib.jit(_user_check(a)),
    "grad": lambda a: a.lib.grad(_user_check(a)),
    "vmap": lambda a: a.lib.vmap(_batched_check(a)),
    "check_error": lambda a: (
        lambda x: a.ck.check_error(
            a.ck.checkify(_many_checks(a), errors=a.ck.all_checks)(x, x[0].astype("int32"))[0]
        )
    ),
}


@pytest.mark.parametrize("case", sorted(STAGED_CHECKS))
def test_printed_jaxpr_of_unfunctionalized_check_matches_jax(case: str) -> None:
    texts = []
    for api in (JAX, LAMINA):
        x = api.np.arange(3.0) if case in ("vmap", "check_error") else api.np.float32(1)
        texts.append(_numbered_codes(str(api.lib.make_jaxpr(STAGED_CHECKS[case](api))(x))))
    assert texts[1] == texts[0]


def _nan_site(a: Api) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        y = a.np.sin(x)
        return a.np.log(y)  # the NaN's site

    return f


RAISING: dict[str, Callable[[Api], Any]] = {
    "throw": lambda a: a.ck.checkify(_user_check(a))(a.np.float32(1))[0].throw(),
    "throw_after_jit": lambda a: a.lib.jit(a.ck.checkify(_user_check(a)))(F32(1))[0].throw(),
    "throw_nan": lambda a: a.ck.checkify(_nan_site(a), errors=a.ck.nan_checks)(F32(-1))[0].throw(),
    "eager_check": lambda a: _user_check(a)(a.np.float32(1)),
}


@pytest.mark.parametrize("case", sorted(RAISING))
def test_cause_of_failed_check_points_at_its_line(case: str) -> None:
    sites = []
    for api in (JAX, LAMINA):
        with pytest.raises(api.ck.JaxRuntimeError) as info:
            RAISING[case](api)
        assert isinstance(info.value, ValueError)
        cause = info.value.__cause__
        assert cause is not None
        frame = traceback.extract_tb(cause.__traceback__)[-1]
        sites.append((str(info.value), type(cause).__name__, frame.name, frame.line))
    assert sites[1] == sites[0]


OUTSIDE_CHECKIFY: dict[str, Callable[[Api], Any]] = {
    "eager_fails": lambda a: _user_check(a)(a.np.float32(1)),
    "eager_passes": lambda a: float(_user_check(a)(a.np.float32(7))),
    "python_bool_pred": lambda a: a.ck.check(False, "plain {}", a.np.ones(2)),
    "jit_fails_to_compile": lambda a: a.lib.jit(_user_check(a))(F32(7)),
    "grad_checks_primal": lambda a: a.lib.grad(_user_check(a))(a.np.float32(1)),
    "vmap_reduces_batch": lambda a: a.lib.vmap(_batched_check(a))(a.np.arange(4.0)),
    "debug_check_eager": lambda a: a.ck.debug_check(a.np.float32(1) < 0, "never"),
    "debug_check_jit": lambda a: a.lib.jit(lambda x: a.ck.debug_check(x < 0, "never"))(F32(1)),
    "pred_not_scalar": lambda a: a.ck.check(a.np.ones(3) > 0, "m"),
    "pred_not_bool": lambda a: a.ck.check(a.np.int32(1), "m"),
    "fmt_arg_not_array": lambda a: a.ck.check(a.np.float32(1) > 0, "m {}", "s"),
    "check_error_eager": lambda a: a.ck.check_error(
        a.ck.checkify(_user_check(a))(a.np.float32(2))[0]
    ),
    "check_error_passes": lambda a: a.ck.check_error(
        a.ck.checkify(_user_check(a))(a.np.float32(9))[0]
    ),
    "check_error_batched": lambda a: a.ck.check_error(
        a.lib.vmap(a.ck.checkify(_batched_check(a)))(a.np.arange(4.0))[0]
    ),
    "grad_constant_pred": lambda a: a.lib.grad(_constant_check(a))(a.np.float32(1)),
    "check_error_not_an_error": lambda a: a.ck.check_error(3),
    "check_error_under_jit": lambda a: a.lib.jit(
        lambda x: a.ck.check_error(a.ck.checkify(_user_check(a))(x)[0])
    )(F32(1)),
}


def _append_result(out: list[Any], fn: Callable[[Api], Any], api: Api) -> None:
    out.append(fn(api))


@pytest.mark.parametrize("case", sorted(OUTSIDE_CHECKIFY))
def test_check_outside_checkify_behaves_as_jax(case: str) -> None:
    results = []
    for api in (JAX, LAMINA):
        out: list[Any] = []
        raised = _raised(functools.partial(_append_result, out, OUTSIDE_CHECKIFY[case], api))
        results.append((raised, [None if x is None else np.asarray(x).tolist() for x in out]))
    assert results[1] == results[0]


SET_EXPRESSIONS: dict[str, Callable[[Api], frozenset[Any]]] = {
    name: functools.partial(_sets, name=name)
    for name in (
        "user_checks",
        "nan_checks",
        "index_checks",
        "div_checks",
        "float_checks",
        "automatic_checks",
        "all_checks",
    )
}
SET_EXPRESSIONS.update(
    {
        "user|nan": lambda a: a.ck.user_checks | a.ck.nan_checks,
        "all-user": lambda a: a.ck.all_checks - a.ck.user_checks,
        "automatic-float": lambda a: a.ck.automatic_checks - a.ck.float_checks,
        "float&div": lambda a: a.ck.float_checks & a.ck.div_checks,
    }
)


@pytest.mark.parametrize("expr", sorted(SET_EXPRESSIONS))
def test_error_sets_match_jax(expr: str) -> None:
    want, got = (SET_EXPRESSIONS[expr](api) for api in (JAX, LAMINA))
    assert type(got) is type(want) is frozenset
    assert sorted(e.__name__ for e in got) == sorted(e.__name__ for e in want)


def test_public_names_are_jax_names() -> None:
    jax_names = {n for n in dir(jax_checkify) if not n.startswith("_")}
    assert sorted(lamina_checkify.__all__) == sorted(jax_names)


@pytest.mark.parametrize("passes", [False, True])
def test_error_is_a_pytree_through_jit(passes: bool) -> None:
    gets, leaf_counts = [], []
    for api in (JAX, LAMINA):
        err, _ = api.ck.checkify(_many_checks(api), errors=api.ck.all_checks)(
            api.np.asarray(ARANGE + (2 if passes else -1)), api.np.int32(1)
        )
        leaves, tree = api.lib.tree_util.tree_flatten(err)
        leaf_counts.append(len(leaves))
        # an Error argument and result of jit, rebuilt from its leaves on the way
        unflatten = api.lib.tree_util.tree_unflatten
        rebuilt = api.lib.jit(lambda e, t=tree, u=unflatten: u(t, e))(leaves)
        through = api.lib.jit(lambda e: e)(rebuilt)
        assert isinstance(through, api.ck.Error)
        gets.append((through.get(), str(through), _raised(through.throw)))
    assert leaf_counts[1] == leaf_counts[0]
    assert gets[1] == gets[0]
