"""Views of Refs (`ref.at[idx]`, `TransformedRef`) and the quasi-dynamic data pairs of
`jax.experimental.hijax`, against JAX 0.10.2: values, printed jaxprs, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.experimental.hijax as jhijax
import jax.numpy as jjnp
import numpy as np
import pytest

import lamina
import lamina.experimental.hijax as lhijax
import lamina.numpy as ljnp
from lamina_core import jaxpr_as_fun
from lamina_core.ir import JaxprSyntaxError, elided_constants, parse

pytestmark = pytest.mark.oracle

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _both(make: Callable[[Any, Any], Callable[..., Any]]) -> tuple[Any, Any]:
    """The same program written against Lamina and against JAX."""
    return make(lamina, ljnp), make(jax, jjnp)


def _views(api: Any, jnp: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        r = api.new_ref(x)
        v = r.at[1:]
        v[0] = v[1] + 1.0
        v.at[:, 2][...] += 3.0
        v.at[0].at[2:][...] = jnp.ones(2)
        return r[...], v[1], r.at[...][...], r.at[:, :][2]

    return f


def _views_of_args(api: Any, jnp: Any) -> Callable[..., Any]:
    def f(r: Any, i: Any) -> Any:
        v = r.at[i]
        v[1:] = jnp.zeros(3)
        api.ref.addupdate(r.at[2], ..., jnp.ones(4))
        old = api.ref.swap(r.at[0], slice(1, 3), jnp.ones(2))
        return old, api.ref.get(r.at[0], 2), r.at[:, i][i], r.at[0].reshape(2, 2)[...]

    return f


def _in_loops(api: Any, jnp: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        r = api.new_ref(x)

        def body(c: Any, i: Any) -> Any:
            v = r.at[i]
            v.at[1:][...] = v.at[:3][...] + 1.0
            return c, v[0]

        _, ys = api.lax.scan(body, 0.0, jnp.arange(3))

        def fori_body(i: Any, c: Any) -> Any:
            r.at[i].at[0][...] += 1.0
            return c

        api.lax.fori_loop(0, 3, fori_body, 0)
        return r[...], ys

    return f


def _views_passed_to_jit(api: Any, jnp: Any) -> Callable[..., Any]:
    def double_(v: Any) -> None:
        v[...] = v[...] * 2

    double = api.jit(double_)

    def f(r: Any) -> Any:
        double(r.at[1])
        return api.jit(lambda v: v[1:] + 1)(r.at[2])

    return f


@pytest.mark.parametrize("make", [_views, _in_loops])
def test_views_of_a_new_ref(make: Any) -> None:
    lf, jf = _both(make)
    assert str(lamina.make_jaxpr(lf)(X)) == str(jax.make_jaxpr(jf)(X))
    for got, want in zip(lamina.jit(lf)(X), jax.jit(jf)(X), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    for got, want in zip(lf(X), jax.jit(jf)(X), strict=True):  # eagerly too
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("make", [_views_of_args, _views_passed_to_jit])
def test_views_of_a_ref_argument(make: Any) -> None:
    lf, jf = _both(make)
    args: tuple[Any, ...] = () if make is _views_passed_to_jit else (np.int32(1),)
    lr, jr = lamina.new_ref(X), jax.new_ref(X)
    assert str(lamina.make_jaxpr(lf)(lr, *args)) == str(jax.make_jaxpr(jf)(jr, *args))
    got, want = lamina.jit(lf)(lr, *args), jax.jit(jf)(jr, *args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    np.testing.assert_array_equal(np.asarray(lr[...]), np.asarray(jr[...]))


def test_a_view_has_the_type_of_the_viewed_part() -> None:
    def probe(api: Any, r: Any) -> Any:
        v = r.at[1].reshape(2, 2).at[1]
        out: tuple[Any, ...] = (
            type(v).__name__,
            v.shape,
            v.ndim,
            v.size,
            str(v.dtype),
            r.at[1:].T.shape,
        )
        out += (r.reshape(-1, 6).shape, r.reshape((12,)).at[3:].shape)
        w = r.at[:1, 2:].reshape(2).at[1:]
        out += (r.at[1:].bitcast(np.int32).shape, repr(w).split("transforms=")[1])
        out += (repr(v).split("transforms=")[1],)
        try:
            api.typeof(r.at[0])
        except Exception as err:
            out += (type(err).__name__, str(err))
        return out

    seen: dict[str, Any] = {}

    def record(api: Any, r: Any) -> None:
        seen[api.__name__] = probe(api, r)

    lamina.jit(lambda r: record(lamina, r))(lamina.new_ref(X))
    jax.jit(lambda r: record(jax, r))(jax.new_ref(X))
    # The last repr's operand is a tracer (printed each its own way): all but it agree.
    assert seen["lamina"][:-4] == seen["jax"][:-4]
    assert (
        seen["lamina"][-2:]
        == seen["jax"][-2:]
        == (
            "TransformedRefAvalError",
            "TransformedRefs cannot be abstractified.",
        )
    )
    with pytest.raises(Exception, match="abstractified") as err:
        lamina.typeof(lamina.new_ref(X).at[0])
    assert type(err.value).__name__ == "TransformedRefAvalError"


def test_reshape_and_bitcast_views_read_as_jax() -> None:
    def f(api: Any, jnp: Any) -> Callable[..., Any]:
        def g(r: Any) -> Any:
            return (
                r.at[0].reshape(2, 2)[...],
                r.at[1:].bitcast(jnp.int32)[...],
                r.at[0:2].reshape(4, 2).at[1][...],
                r.at[1:].bitcast(jnp.int16)[1],
            )

        return g

    lf, jf = _both(f)
    lr, jr = lamina.new_ref(X), jax.new_ref(X)
    assert str(lamina.make_jaxpr(lf)(lr)) == str(jax.make_jaxpr(jf)(jr))
    for got, want in zip(lamina.jit(lf)(lr), jax.jit(jf)(jr), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_traced_ref_has_views_as_jax() -> None:
    def f(api: Any, jnp: Any) -> Callable[..., Any]:
        def g(r: Any) -> Any:
            kinds = {type(r.reshape(2, 6)).__name__, type(r.T).__name__}
            assert kinds == {"TransformedRef"}
            return r.reshape(2, -1)[1], r.bitcast(jnp.int32)[...], r.T.at[1:].shape

        return g

    lf, jf = _both(f)
    lr, jr = lamina.new_ref(X), jax.new_ref(X)
    assert str(lamina.make_jaxpr(lf)(lr)) == str(jax.make_jaxpr(jf)(jr))


def test_refs_and_views_read_and_write_by_method_as_jax() -> None:
    def make(api: Any, jnp: Any) -> Callable[..., Any]:
        def f(r: Any) -> Any:
            r.addupdate(jnp.ones((3, 4)))
            r.set(jnp.ones(4), 1)
            old = r.swap(jnp.zeros(4), 2)
            v = r.at[0]
            v.set(jnp.full(4, 7.0))
            return r.get(), r.get((0, 1)), old, v.get(1), v.swap(jnp.ones(4))

        def g(r: Any) -> None:
            r.at[2].addupdate(jnp.ones(4))  # the Ref's own method: the view is ignored

        return lambda r, which: (f if which == "f" else g)(r)

    lh, jh = _both(make)
    lr, jr = lamina.new_ref(X), jax.new_ref(X)
    assert str(lamina.make_jaxpr(lambda r: lh(r, "f"))(lr)) == str(
        jax.make_jaxpr(lambda r: jh(r, "f"))(jr)
    )
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`") as jerr:
        jax.make_jaxpr(lambda r: jh(r, "g"))(jr)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`") as lerr:
        lamina.make_jaxpr(lambda r: lh(r, "g"))(lr)
    assert str(lerr.value).splitlines()[0] == str(jerr.value).splitlines()[0]


def test_printed_views_read_back() -> None:
    def f(r: Any, i: Any) -> Any:
        v = r.at[1:]
        v.at[i].at[2:][...] = v.at[0].reshape(2, 2)[1, :] * 2.0
        lamina.ref.addupdate(r.at[np.array([0, 2])], (slice(None), 3), ljnp.ones(2))
        return r.at[:2].bitcast(np.int32)[1], r.at[i].reshape(4)[3], r[...]

    lr = lamina.new_ref(X)
    closed = lamina.make_jaxpr(f)(lr, np.int32(1))
    parsed = parse(str(closed), elided_constants(closed))
    assert str(parsed) == str(closed)
    assert parsed.jaxpr.eqns[1].params == closed.jaxpr.eqns[1].params
    want = lamina.jit(jaxpr_as_fun(closed))(lamina.new_ref(X), np.int32(1))
    got = lamina.jit(jaxpr_as_fun(parsed))(lamina.new_ref(X), np.int32(1))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    for bad in ("a[1:,:]{squeeze(0)}", "a[1:,:][0,:"):
        text = str(closed).replace("a[1:,:][b,:][2:]", bad, 1)
        with pytest.raises(JaxprSyntaxError, match=r"a view \{|unbalanced '\['"):
            parse(text, elided_constants(closed))


def test_eager_views_read_and_write_as_jitted_jax() -> None:
    # JAX 0.10.2 has views of traced Refs only (an eager Ref's `at` raises NotImplementedError);
    # Lamina's eager views mean what JAX's mean under `jit`.
    lr, jr = lamina.new_ref(X), jax.new_ref(X)

    def edit(r: Any) -> Any:
        v = r.at[1:]
        v.at[0][1:3] = v[1, :2] * 10
        r.at[2][::3] = np.ones(2, np.float32)
        return v[...], r.at[2].reshape(2, 2)[1]

    for got, want in zip(edit(lr), jax.jit(edit)(jr), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(lr[...]), np.asarray(jr[...]))
    with pytest.raises(NotImplementedError):
        jr.at[0]

    def double(v: Any) -> Any:
        v[...] = v[...] * 2
        return v[0]

    # An eager view passed to `jit` (JAX's can only be passed from inside another `jit`).
    got = lamina.jit(double)(lr.at[2].at[1:])
    want = jax.jit(lambda r: jax.jit(double)(r.at[2].at[1:]))(jr)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(lr[...]), np.asarray(jr[...]))


def test_transposed_views_are_typed_but_not_discharged_as_jax() -> None:
    lr, jr = lamina.new_ref(X), jax.new_ref(X)
    lj = lamina.make_jaxpr(lambda r: r.at[1:].T[...])(lr)
    assert str(lj) == str(jax.make_jaxpr(lambda r: r.at[1:].T[...])(jr))
    with pytest.raises(NotImplementedError) as jerr:
        jax.jit(lambda r: r.transpose((1, 0))[...])(jr)
    with pytest.raises(NotImplementedError) as lerr:
        lamina.jit(lambda r: r.transpose((1, 0))[...])(lr)
    assert str(lerr.value) == str(jerr.value)


def test_bitcast_views_are_not_written_as_jax() -> None:
    def f(r: Any) -> None:
        r.at[1:].bitcast(np.int32)[0] = np.zeros(4, np.int32)

    with pytest.raises(NotImplementedError) as jerr:
        jax.jit(f)(jax.new_ref(X))
    with pytest.raises(NotImplementedError) as lerr:
        lamina.jit(f)(lamina.new_ref(X))
    assert str(lerr.value) == str(jerr.value).split("\n")[0]


def test_writes_jax_cannot_discharge_mean_what_they_say() -> None:
    # JAX 0.10.2 fails to discharge a write through a reshaped view and an accumulation
    # through a chain of views; Lamina's equal JAX's equivalent read-modify-writes.
    def lamina_f(r: Any) -> Any:
        r.at[1].reshape(2, 2)[0] = ljnp.full(2, -1.0)
        lamina.ref.addupdate(r.at[0], slice(1, 3), ljnp.ones(2))
        return r[...]

    def jax_f(r: Any) -> Any:
        r[1, :2] = jjnp.full(2, -1.0)
        r[0, 1:3] += jjnp.ones(2)
        return r[...]

    want = jax.jit(jax_f)(jax.new_ref(X))
    np.testing.assert_array_equal(np.asarray(lamina.jit(lamina_f)(lamina.new_ref(X))), want)
    np.testing.assert_array_equal(np.asarray(lamina_f(lamina.new_ref(X))), want)
    with pytest.raises(NotImplementedError, match="Only single indexer is supported"):
        jax.jit(lambda r: jax.ref.addupdate(r.at[0], 1, 1.0))(jax.new_ref(X))


@pytest.mark.parametrize("transform", ["grad", "jvp", "vmap"])
def test_views_of_differentiated_or_batched_refs_fail_as_jax(transform: str) -> None:
    def make(api: Any, jnp: Any) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            r = api.new_ref(x)
            return r.at[1].at[1:][...].sum()

        return f

    lf, jf = _both(make)

    def run(api: Any, f: Any) -> None:
        if transform == "grad":
            api.grad(f)(X)
        elif transform == "jvp":
            api.jvp(f, (X,), (X,))
        else:
            api.vmap(f)(np.stack([X, X]))

    errors = []
    for api, f in ((jax, jf), (lamina, lf)):
        with pytest.raises(TypeError) as err:
            run(api, f)
        errors.append(str(err.value))
    assert errors[1] == errors[0]
    assert errors[0].startswith("Cannot transform type: ")


def test_one_view_under_grad_works_and_chains_under_vmap_fail_as_jax() -> None:
    def make(api: Any, jnp: Any) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            r = api.new_ref(x)
            return (r.at[1][...] * r.at[2][...]).sum()

        return f

    lf, jf = _both(make)
    np.testing.assert_allclose(np.asarray(lamina.grad(lf)(X)), np.asarray(jax.grad(jf)(X)))

    def chained(api: Any, jnp: Any) -> Callable[..., Any]:
        def inner(x: Any) -> Any:
            r = api.new_ref(x)
            r.at[1].at[1:][...] = r.at[0][:3]
            return r[...]

        jitted: Callable[..., Any] = api.jit(inner)
        return jitted

    lg, jg = _both(chained)
    xs = np.stack([X, X + 1])
    message = r"^Batching with multiple indexers not supported\."
    with pytest.raises(NotImplementedError, match=message):
        jax.vmap(jg)(xs)
    with pytest.raises(NotImplementedError, match=message):
        lamina.vmap(lg)(xs)


def test_experimental_hijax_exports_the_three_names() -> None:
    for name in ("TransformedRef", "AvalQDD", "AvalMutableQDD"):
        assert hasattr(lhijax, name)
    assert sorted(f.name for f in _fields(lhijax.AvalQDD)) == sorted(
        f.name for f in _fields(jhijax.AvalQDD)
    )
    assert [f.name for f in _fields(lhijax.AvalMutableQDD)] == [
        f.name for f in _fields(jhijax.AvalMutableQDD)
    ]


def _fields(cls: Any) -> Any:
    import dataclasses

    return dataclasses.fields(cls)


class _Qdd:
    def __init__(self, n: int) -> None:
        self.n = n

    def to_tangent_qdd(self) -> _Qdd:
        return _Qdd(-self.n)


@pytest.mark.parametrize("api", [jhijax, lhijax])
def test_aval_qdd_delegates_to_its_type_as_jax(api: Any) -> None:
    class ListTy:
        is_writer = True

        def lo_ty_qdd(self, qdd: _Qdd) -> list[str]:
            return ["f32[]"] * qdd.n

        def read_loval(self, qdd: _Qdd, val: list[float]) -> list[float]:
            return val[: qdd.n]

        def read_loval_in(self, qdd: _Qdd, val: list[float]) -> list[float]:
            return val[:1]

        def read_loval_out(self, qdd: _Qdd, val: list[float]) -> list[float]:
            return val[-1:]

        def new_from_loval(self, qdd: _Qdd, *vals: float) -> list[float]:
            return [*vals, float(qdd.n)]

        def to_tangent_aval(self) -> str:
            return "tangent"

    aq = api.AvalQDD(ListTy(), _Qdd(2))
    assert (aq.is_high, aq.has_qdd, aq.is_writer) == (True, True, True)
    assert aq.lo_ty() == ["f32[]", "f32[]"]
    assert aq.read_loval([1.0, 2.0, 3.0]) == [1.0, 2.0]
    assert (aq.read_loval_in([1.0, 2.0]), aq.read_loval_out([1.0, 2.0])) == ([1.0], [2.0])
    assert aq.new_from_loval(5.0) == [5.0, 2.0]
    tangent = aq.to_tangent_aval()
    assert (type(tangent) is api.AvalQDD, tangent.aval, tangent.qdd.n) == (True, "tangent", -2)
    assert api.AvalQDD(ListTy(), None).to_tangent_aval().qdd is None
    with pytest.raises(AttributeError):
        aq.qdd = None
    cell = api.AvalMutableQDD("ty", [1])
    assert (cell.aval, cell.mutable_qdd) == ("ty", [1])


@pytest.mark.parametrize("api", [jhijax, lhijax])
def test_aval_qdd_over_a_mutable_hi_type_as_jax(api: Any) -> None:
    class StackTy(api.MutableHiType):  # type: ignore[misc]  # either library's (an Any)
        """A stack of scalars whose quasi-dynamic data is its depth."""

        def __hash__(self) -> int:
            return hash(StackTy)

        def __eq__(self, other: object) -> bool:
            return isinstance(other, StackTy)

        def lo_ty_qdd(self, depth: int) -> list[Any]:
            return [api.ShapedArray((), np.float32)] * depth

        def new_from_loval(self, depth: int, *vals: float) -> list[float]:
            return list(vals[:depth])

        def read_loval(self, depth: int, stack: list[float]) -> list[float]:
            return stack[-depth:]

        def update_from_loval(self, depth: int, stack: list[float], *vals: float) -> None:
            stack[:] = vals

        def to_tangent_aval(self) -> Any:
            return StackTy()

    class Flat:
        def __init__(self, vals: list[float]) -> None:
            self.vals = vals

        def unflatten(self) -> list[float]:
            return self.vals

    ty = StackTy()
    aq = api.AvalQDD(ty, 2)
    assert (aq.is_high, aq.has_qdd, aq.is_writer, ty.has_qdd, ty.is_high) == (
        True,
        True,
        False,
        True,
        True,
    )
    assert [t.str_short() for t in aq.lo_ty()] == ["float32[]", "float32[]"]
    assert aq.read_loval_in([1.0, 2.0, 3.0]) == [2.0, 3.0]
    assert aq.new_from_loval(4.0, 5.0, 6.0) == [4.0, 5.0]
    stack = [1.0]
    ty.update_from_loval2(2, stack, Flat([7.0, 8.0]))
    assert stack == [7.0, 8.0]
    assert api.AvalQDD(ty, 0).to_tangent_aval() == api.AvalQDD(ty, 0)  # a false qdd is kept
    with pytest.raises(AttributeError, match="to_tangent_qdd"):
        aq.to_tangent_aval()  # any other must have `to_tangent_qdd`
    assert api.AvalQDD(ty, 2) == aq and hash(api.AvalQDD(ty, 2)) == hash(aq)
