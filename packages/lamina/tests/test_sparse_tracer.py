"""`sparsify` against `jax.experimental.sparse.sparsify`, both ways (`use_tracer=False`, which
evaluates a jaxpr, and `use_tracer=True`, a `SparseTracer` per value), on BCOO and BCSR
operands: values, the kind of the result (sparse format, `nse`), printed jaxprs of the
sparsified function, `repr` of a `SparseTracer`, and JAX's errors where it refuses."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import jax
import jax.experimental.sparse as _jsparse
import numpy as np
import pytest

import lamina
import lamina.experimental.sparse as lsparse

pytestmark = pytest.mark.oracle
jsparse: Any = _jsparse  # JAX's sparse API is untyped

M = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]], np.float32)
V = np.array([1.0, 2.0, 3.0], np.float32)
W = np.array([0.5, -1.0], np.float32)

Api = Any


def _api(lib: Any, sparse: Any) -> Api:
    return SimpleNamespace(jax=lib, jnp=lib.numpy, lax=lib.lax, sparse=sparse)


LAMINA, JAX = _api(lamina, lsparse), _api(jax, jsparse)


def _times_two(x: Any) -> Any:
    return 2 * x


def _custom_jvp_double(api: Api) -> Any:
    double = api.jax.custom_jvp(_times_two)
    double.defjvp(lambda p, t: (2 * p[0], 5 * t[0]))
    return double


def _custom_vjp_double(api: Api) -> Any:
    double = api.jax.custom_vjp(_times_two)
    double.defvjp(lambda x: (2 * x, None), lambda r, g: (g,))
    return double


Case = Callable[[Api, Any, Any], Any]

# Each case gets the API, the sparse matrix and the dense vector `V`.
BCOO_CASES: dict[str, Case] = {
    "sin_matvec": lambda a, m, v: a.jnp.sin(m) @ v,
    "scaled_transpose": lambda a, m, v: 2 * m.T,
    "vecmat": lambda a, m, v: a.jnp.asarray(W) @ m,
    "sum": lambda a, m, v: m.sum(),
    "sum_axis": lambda a, m, v: m.sum(1),
    "pytree_out": lambda a, m, v: (m, 3.0, {"v": v}),
    "identity": lambda a, m, v: m,
    "dense_only": lambda a, m, v: a.jnp.cos(v) * 2,
    "add_same": lambda a, m, v: m + m,
    "mul_dense": lambda a, m, v: m * v,
    "div": lambda a, m, v: m / 2.0,
    "square_neg": lambda a, m, v: -(m**2),
    "add_dense": lambda a, m, v: m + a.jnp.ones((2, 3)),
    "astype": lambda a, m, v: m.astype(a.jnp.int32),
    "reshape": lambda a, m, v: m.reshape(3, 2),
    "stack": lambda a, m, v: a.jnp.stack([m, m]),
    "concat": lambda a, m, v: a.jnp.concatenate([m, m]),
    "index": lambda a, m, v: m[1],
    "gather": lambda a, m, v: m[a.jnp.array([1, 0])],
    "todense": lambda a, m, v: a.sparse.todense(m) + 1,
    "jit": lambda a, m, v: a.jax.jit(lambda x, y: x @ y)(m, v),
    "cond": lambda a, m, v: a.lax.cond(True, lambda x: x, lambda x: 2 * x, m),
    "while": lambda a, m, v: a.lax.while_loop(lambda c: False, lambda c: c, m),
    "custom_jvp": lambda a, m, v: _custom_jvp_double(a)(m),
    "custom_jvp_dense": lambda a, m, v: _custom_jvp_double(a)(v),
}
# JAX's interpreter fails on a dense custom_jvp call (KeyError 'subfuns', a JAX bug).
_TRACER_ONLY = {"custom_jvp_dense"}
# JAX's `jnp.add` is an inlined `jit`, whose sparse rule gives each operand its own index
# buffers: under JAX's tracer, `m + m` concatenates them (nse doubles). Lamina's `jnp` binds
# `add` itself, so the operands keep sharing their indices: same values, fewer entries.
_SHARED_INDICES = {"add_same"}

BCSR_CASES: dict[str, Case] = {
    "sin": lambda a, m, v: a.jnp.sin(m),
    "matvec": lambda a, m, v: m @ v,
    "pow": lambda a, m, v: m**2,
    "neg": lambda a, m, v: -m,
    "astype": lambda a, m, v: m.astype(a.jnp.int32),
    "todense": lambda a, m, v: a.sparse.todense(m),
    "identity": lambda a, m, v: m,
    "broadcast": lambda a, m, v: a.lax.broadcast_in_dim(m, (2, 2, 3), (1, 2)),
    "concat": lambda a, m, v: a.jnp.concatenate([m, m]),
    "stack": lambda a, m, v: a.jnp.stack([m, m]),
}
# Where JAX's tracer path fails with an internal error (its BCOO rules applied to a BCSR
# operand), Lamina's tracer uses the BCSR rule; these run in the interpreter mode only.
_BCSR_INTERPRETER_ONLY = {"broadcast", "concat", "stack"}


def _matrix(api: Api, fmt: str) -> Any:
    cls = api.sparse.BCOO if fmt == "bcoo" else api.sparse.BCSR
    return cls.fromdense(api.jnp.asarray(M))


def _call(api: Api, case: Case, fmt: str, use_tracer: bool) -> Any:
    def f(m: Any, v: Any) -> Any:
        return case(api, m, v)

    return api.sparse.sparsify(f, use_tracer=use_tracer)(_matrix(api, fmt), api.jnp.asarray(V))


def _summary(api: Api, out: Any) -> list[Any]:
    """Each output leaf as (kind, nse, dense value, dtype, weak type)."""
    leaves = api.jax.tree_util.tree_leaves(
        out, is_leaf=lambda x: isinstance(x, api.sparse.JAXSparse)
    )
    result = []
    for x in leaves:
        if isinstance(x, api.sparse.JAXSparse):
            result.append((type(x).__name__, x.nse, np.asarray(x.todense()), x.dtype, None))
        else:
            result.append(("dense", None, np.asarray(x), x.dtype, x.weak_type))
    return result


def _assert_same(l_out: Any, j_out: Any, same_nse: bool = True) -> None:
    got, want = _summary(LAMINA, l_out), _summary(JAX, j_out)
    assert len(got) == len(want)
    for (gk, gn, gv, gd, gw), (wk, wn, wv, wd, ww) in zip(got, want, strict=True):
        assert (gk, gd, gw) == (wk, wd, ww)
        assert gn == wn or not same_nse
        np.testing.assert_allclose(gv, wv, rtol=1e-6)


def _cases() -> list[Any]:
    params = []
    for name in BCOO_CASES:
        modes = (True,) if name in _TRACER_ONLY else (False, True)
        params += [pytest.param("bcoo", name, t, id=f"bcoo-{name}-{t}") for t in modes]
    for name in BCSR_CASES:
        modes = (False,) if name in _BCSR_INTERPRETER_ONLY else (False, True)
        params += [pytest.param("bcsr", name, t, id=f"bcsr-{name}-{t}") for t in modes]
    return params


def _case(fmt: str, name: str) -> Case:
    return (BCOO_CASES if fmt == "bcoo" else BCSR_CASES)[name]


@pytest.mark.parametrize(("fmt", "name", "use_tracer"), _cases())
def test_values_equal_jax(fmt: str, name: str, use_tracer: bool) -> None:
    case = _case(fmt, name)
    same_nse = not (use_tracer and name in _SHARED_INDICES)
    _assert_same(_call(LAMINA, case, fmt, use_tracer), _call(JAX, case, fmt, use_tracer), same_nse)


def test_tracer_keeps_shared_indices() -> None:
    # The one difference above: Lamina's tracer gives the interpreter's `nse` for `m + m`.
    case = BCOO_CASES["add_same"]
    _assert_same(_call(LAMINA, case, "bcoo", True), _call(JAX, case, "bcoo", False))


@pytest.mark.parametrize("table", ["sparse_rules_bcoo", "sparse_rules_bcsr"])
def test_rule_tables_cover_jax_primitives(table: str) -> None:
    def names(sparse: Any) -> set[str]:
        return {prim.name for prim in getattr(sparse.transform, table)}

    assert names(lsparse) == names(jsparse)


def test_bcsr_tracer_gives_the_bcsr_rules_results() -> None:
    # JAX's tracer path fails on these (its BCOO rules applied to BCSR); Lamina's tracer
    # gives what JAX's interpreter path does.
    for name in sorted(_BCSR_INTERPRETER_ONLY):
        case = BCSR_CASES[name]
        _assert_same(_call(LAMINA, case, "bcsr", True), _call(JAX, case, "bcsr", False))


# Not `sum`: Lamina's `bcoo_reduce_sum` prints its constant index arrays as literals where
# JAX hoists them to constvars (in either mode).
_JAXPR_CASES = ["sin_matvec", "scaled_transpose", "div", "mul_dense", "jit", "cond", "stack"]


@pytest.mark.parametrize("use_tracer", [False, True])
@pytest.mark.parametrize("name", _JAXPR_CASES)
def test_jaxpr_equals_jax(name: str, use_tracer: bool) -> None:
    case = BCOO_CASES[name]

    def jaxpr(api: Api) -> str:
        def f(m: Any, v: Any) -> Any:
            return api.sparse.sparsify(lambda a, b: case(api, a, b), use_tracer=use_tracer)(m, v)

        return str(api.jax.make_jaxpr(f)(_matrix(api, "bcoo"), api.jnp.asarray(V)))

    assert jaxpr(LAMINA) == jaxpr(JAX)


@pytest.mark.parametrize("use_tracer", [False, True])
@pytest.mark.parametrize("name", ["matvec", "sin", "pow"])
def test_bcsr_jaxpr_equals_jax(name: str, use_tracer: bool) -> None:
    case = BCSR_CASES[name]

    def jaxpr(api: Api) -> str:
        def f(m: Any, v: Any) -> Any:
            return api.sparse.sparsify(lambda a, b: case(api, a, b), use_tracer=use_tracer)(m, v)

        return str(api.jax.make_jaxpr(f)(_matrix(api, "bcsr"), api.jnp.asarray(V)))

    assert jaxpr(LAMINA) == jaxpr(JAX)


def _loss(api: Api, use_tracer: bool) -> Callable[[Any, Any], Any]:
    def loss(v: Any, m: Any) -> Any:
        f = api.sparse.sparsify(lambda a, b: (api.jnp.sin(a) @ b).sum(), use_tracer=use_tracer)
        return f(m, v)

    return loss


@pytest.mark.parametrize("use_tracer", [False, True])
def test_under_jit_and_grad_equals_jax(use_tracer: bool) -> None:
    def run(api: Api, transform: str, use_tracer: bool) -> Any:
        loss = getattr(api.jax, transform)(_loss(api, use_tracer))
        return np.asarray(loss(api.jnp.asarray(V), _matrix(api, "bcoo")))

    for transform in ("jit", "grad"):
        # Under `grad`, JAX's tracer leaks a linearize tracer (UnexpectedTracerError, a JAX
        # bug): Lamina's tracer is compared with JAX's interpreter there.
        oracle_tracer = use_tracer and transform == "jit"
        want = run(JAX, transform, oracle_tracer)
        np.testing.assert_allclose(run(LAMINA, transform, use_tracer), want, rtol=1e-6)


def test_tracer_repr_and_export_equal_jax() -> None:
    seen: dict[str, str] = {}

    def record(api: Api, key: str) -> Callable[[Any], Any]:
        def f(m: Any) -> Any:
            seen[key] = repr(m) + "|" + str(m.aval) + "|" + type(m).__name__
            return m

        return f

    lsparse.sparsify(record(LAMINA, "lamina"), use_tracer=True)(_matrix(LAMINA, "bcoo"))
    jsparse.sparsify(record(JAX, "jax"), use_tracer=True)(_matrix(JAX, "bcoo"))
    assert seen["lamina"] == seen["jax"] == "SparseTracer<float32[2,3]>|float32[2,3]|SparseTracer"
    assert lsparse.SparseTracer is lsparse.transform.SparseTracer
    assert issubclass(lsparse.SparseTracer, lamina.core.Tracer)


_ERRORS: dict[str, tuple[str, Case]] = {
    "densifying": ("bcoo", lambda a, m, v: a.jnp.exp(m)),
    "no_rule": ("bcoo", lambda a, m, v: a.lax.cumsum(m)),
    "pow_zero": ("bcoo", lambda a, m, v: a.lax.integer_pow(m, 0)),
    "sub_dense": ("bcoo", lambda a, m, v: m - v),
    "div_sparse": ("bcoo", lambda a, m, v: v / m),
    "add_broadcast": ("bcoo", lambda a, m, v: m + v),
    "custom_vjp": ("bcoo", lambda a, m, v: _custom_vjp_double(a)(m)),
    "bcsr_mul": ("bcsr", lambda a, m, v: m * 2.0),
    "bcsr_sum": ("bcsr", lambda a, m, v: m.sum()),
    "bcsr_vecmat": ("bcsr", lambda a, m, v: a.jnp.ones(2) @ m),
    "bcsr_exp": ("bcsr", lambda a, m, v: a.jnp.exp(m)),
    "bcsr_custom_jvp": ("bcsr", lambda a, m, v: _custom_jvp_double(a)(m)),
    "bcsr_pow_zero": ("bcsr", lambda a, m, v: a.lax.integer_pow(m, 0)),
}


def _error(api: Api, fmt: str, case: Case, use_tracer: bool) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        _call(api, case, fmt, use_tracer)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("use_tracer", [False, True])
@pytest.mark.parametrize("name", list(_ERRORS))
def test_errors_equal_jax(name: str, use_tracer: bool) -> None:
    fmt, case = _ERRORS[name]
    (lcls, lmsg), (jcls, jmsg) = (
        _error(LAMINA, fmt, case, use_tracer),
        _error(JAX, fmt, case, use_tracer),
    )
    assert lcls.__name__ == jcls.__name__
    assert lmsg == jmsg


def test_bcsr_interpreter_refuses_calls_as_jax() -> None:
    # JAX's BCSR table has no `jit` rule: the interpreter refuses; its tracer uses the BCOO one.
    case: Case = lambda a, m, v: a.jax.jit(lambda x: x)(m)  # noqa: E731
    assert _error(LAMINA, "bcsr", case, False)[1] == _error(JAX, "bcsr", case, False)[1]
    _assert_same(_call(LAMINA, case, "bcsr", True), _call(JAX, case, "bcsr", True))


def test_bcsr_methods_equal_jax() -> None:
    got = _matrix(LAMINA, "bcsr") @ LAMINA.jnp.asarray(V)
    want = _matrix(JAX, "bcsr") @ JAX.jnp.asarray(V)
    _assert_same(got, want)
    for api_pair in ((LAMINA, JAX),):
        l_api, j_api = api_pair
        with pytest.raises(NotImplementedError) as l_err:
            _matrix(l_api, "bcsr")[1]
        with pytest.raises(NotImplementedError) as j_err:
            _matrix(j_api, "bcsr")[1]
        assert str(l_err.value) == str(j_err.value)


# --- custom_jvp ----------------------------------------------------------------------------


@pytest.mark.parametrize("use_tracer", [False, True])
def test_custom_jvp_jaxpr_equals_jax(use_tracer: bool) -> None:
    # JAX's interpreter keeps the call (on the sparsified function, with the user's rule);
    # its tracer inlines the function.
    def jaxpr(api: Api) -> str:
        f = api.sparse.sparsify(_custom_jvp_double(api), use_tracer=use_tracer)
        return str(api.jax.make_jaxpr(f)(_matrix(api, "bcoo")))

    assert jaxpr(LAMINA) == jaxpr(JAX)


def _custom_jvp_grad(api: Api, use_tracer: bool) -> Any:
    m = _matrix(api, "bcoo")

    def loss(data: Any) -> Any:
        x = api.sparse.BCOO((data, m.indices), shape=m.shape)
        return api.sparse.sparsify(
            lambda x: _custom_jvp_double(api)(x).sum(), use_tracer=use_tracer
        )(x)

    return np.asarray(api.jax.grad(loss)(m.data))


@pytest.mark.parametrize("use_tracer", [False, True])
def test_custom_jvp_differentiated_uses_the_function(use_tracer: bool) -> None:
    # JAX's interpreter fails here (an AssertionError lifting the rule to the sparsified
    # operands); Lamina's differentiates the function, as JAX's tracer does (the rule, 5 t,
    # is not used: the gradient is the function's, 2).
    np.testing.assert_allclose(_custom_jvp_grad(LAMINA, use_tracer), _custom_jvp_grad(JAX, True))


# --- linalg.lobpcg_standard ---------------------------------------------------------------

_RS = np.random.RandomState(0)
_N, _K = 12, 2
_Q, _ = np.linalg.qr(_RS.randn(_N, _N))
SYM = ((_Q * np.linspace(1.0, 10.0, _N)) @ _Q.T).astype(np.float32)
X0 = _RS.randn(_N, _K).astype(np.float32)


def _lobpcg(api: Api, how: str) -> tuple[Any, Any, Any]:
    lobpcg = api.sparse.linalg.lobpcg_standard
    a, x = api.jnp.asarray(SYM), api.jnp.asarray(X0)
    if how == "matrix":  # NumPy arrays: a matrix too
        return lobpcg(SYM, X0)  # type: ignore[no-any-return]
    if how == "callable":
        return lobpcg(lambda v: a @ v, x, m=5)  # type: ignore[no-any-return]
    assert how == "jit"
    return api.jax.jit(lambda a, x: lobpcg(a, x, m=20, tol=1e-3))(a, x)  # type: ignore[no-any-return]


@pytest.mark.parametrize("how", ["matrix", "callable", "jit"])
def test_lobpcg_equals_jax(how: str) -> None:
    (lt, lu, li), (jt, ju, ji) = _lobpcg(LAMINA, how), _lobpcg(JAX, how)
    np.testing.assert_allclose(np.asarray(lt), np.asarray(jt), rtol=1e-4)
    # Eigenvectors up to sign.
    np.testing.assert_allclose(np.abs(np.asarray(lu)), np.abs(np.asarray(ju)), atol=1e-4)
    assert int(li) == int(ji)
    assert np.asarray(lt).dtype == np.asarray(jt).dtype
    if how == "matrix":  # run to convergence: the top eigenpairs themselves
        w, v = np.linalg.eigh(SYM.astype(np.float64))
        np.testing.assert_allclose(np.asarray(lt), w[::-1][:_K], rtol=1e-4)
        overlap = np.abs(np.sum(np.asarray(lu) * v[:, ::-1][:, :_K], axis=0))
        np.testing.assert_allclose(overlap, 1.0, atol=1e-3)


_LOBPCG_ERRORS: dict[str, Callable[[Api], Any]] = {
    "no_columns": lambda a: a.sparse.linalg.lobpcg_standard(
        a.jnp.asarray(SYM), a.jnp.zeros((_N, 0))
    ),
    "too_many_columns": lambda a: a.sparse.linalg.lobpcg_standard(
        a.jnp.asarray(SYM), a.jnp.ones((_N, 3))
    ),
    "dtype": lambda a: a.sparse.linalg.lobpcg_standard(
        lambda v: v.astype(a.jnp.int32), a.jnp.asarray(X0)
    ),
    "output_shape": lambda a: a.sparse.linalg.lobpcg_standard(lambda v: v[:5], a.jnp.asarray(X0)),
    "matrix_shape": lambda a: a.sparse.linalg.lobpcg_standard(
        a.jnp.ones((_N, _N + 1)), a.jnp.asarray(X0)
    ),
    "unhashable": lambda a: a.sparse.linalg.lobpcg_standard([[1.0]], X0),
}


@pytest.mark.parametrize("name", list(_LOBPCG_ERRORS))
def test_lobpcg_errors_equal_jax(name: str) -> None:
    fn = _LOBPCG_ERRORS[name]
    with pytest.raises(Exception) as got:
        fn(LAMINA)
    with pytest.raises(Exception) as want:
        fn(JAX)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0]
