"""The control-flow corpus: programs written once against a `jax`-shaped module `L`.

Each program is `fn(L, *args)`, run with `L = lamina` and `L = jax` by
`test_control_flow_corpus.py`. Programs cover cond, switch, while_loop, fori_loop (static and
dynamic bounds), scan (reverse, unroll, xs=None, length, pytree carries), map (batch_size),
associative_scan, cumulative operations inside loops, and their nestings under jit. ERRORS are
calls that JAX rejects; Lamina must reject them with the same exception and message.

Arguments that should be differentiated come first; a program whose first argument is not
floating point is not differentiated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

f32, i32 = np.float32, np.int32


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]


PROGRAMS: list[Program] = []


def program(*args: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register `fn(L, *args)` under its own name, with these example arguments."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        PROGRAMS.append(Program(fn.__name__, fn, args))
        return fn

    return register


x3 = np.array([0.5, -1.25, 2.0], f32)
y3 = np.array([1.5, 0.25, -0.75], f32)
m34 = np.linspace(-1.0, 1.0, 12, dtype=f32).reshape(3, 4)
w33 = (np.arange(9, dtype=f32).reshape(3, 3) - 4.0) / 8.0
xs43 = np.linspace(-2.0, 2.0, 12, dtype=f32).reshape(4, 3)
s = f32(0.75)
T, F = np.bool_(True), np.bool_(False)

# ---------------------------------------------------------------------------------- cond


@program(x3)
def cond_scalar_pred(L: Any, x: Any) -> Any:
    return L.lax.cond(L.numpy.sum(x) > 0, L.numpy.sin, L.numpy.cos, x)


@program(x3, y3)
def cond_two_operands(L: Any, x: Any, y: Any) -> Any:
    return L.lax.cond(x[0] < y[0], lambda a, b: a * b, lambda a, b: a - b, x, y)


@program(x3, y3)
def cond_pytree_operands(L: Any, x: Any, y: Any) -> Any:
    def t(d: Any) -> Any:
        return {"a": d["a"] * 2.0, "b": (d["b"][0] + 1.0, d["b"][1])}

    def f(d: Any) -> Any:
        return {"a": -d["a"], "b": (d["b"][0], d["b"][1] * d["a"])}

    return L.lax.cond(x[1] > 0, t, f, {"a": x, "b": (y, y * 3.0)})


@program(x3, y3)
def cond_closure_array(L: Any, x: Any, y: Any) -> Any:
    return L.lax.cond(x[0] > 0, lambda a: a + y, lambda a: a * y, x)


@program(x3)
def cond_closure_numpy_const(L: Any, x: Any) -> Any:
    c = np.array([1.0, 2.0, 3.0], f32)
    return L.lax.cond(x[2] > 0, lambda a: a * c, lambda a: a - c, x)


@program(x3)
def cond_float_pred(L: Any, x: Any) -> Any:
    return L.lax.cond(x[0], lambda a: a * 2.0, lambda a: -a, x)


@program(s, i32(3))
def cond_int_pred(L: Any, x: Any, n: Any) -> Any:
    return L.lax.cond(n, lambda a: a + 1.0, lambda a: a - 1.0, x)


@program(s)
def cond_no_operands(L: Any, x: Any) -> Any:
    return L.lax.cond(x > 0, lambda: f32(1.0), lambda: f32(2.0)) * x


@program(x3)
def cond_operand_keyword(L: Any, x: Any) -> Any:
    return L.lax.cond(x[0] > 0, lambda a: a * 2.0, lambda a: a * 3.0, operand=x)


@program(x3, s)
def cond_nested(L: Any, x: Any, t: Any) -> Any:
    def outer_true(a: Any) -> Any:
        return L.lax.cond(t > 0.5, lambda b: L.numpy.sin(b) * t, lambda b: b * 2.0, a)

    return L.lax.cond(t > 0, outer_true, lambda a: a - t, x)


@program(x3)
def cond_python_bool_pred(L: Any, x: Any) -> Any:
    return L.lax.cond(True, lambda a: a * 2.0, lambda a: a + 1.0, x)


@program(x3)
def cond_int_output(L: Any, x: Any) -> Any:
    n = L.lax.cond(x[0] > 0, lambda a: a.astype(i32) + 1, lambda a: a.astype(i32) * 2, x)
    return x * n.astype(f32)


@program(x3)
def cond_mixed_outputs(L: Any, x: Any) -> Any:
    def t(a: Any) -> Any:
        return a * 2.0, L.numpy.sum(a).astype(i32), a[0] > 0

    def f(a: Any) -> Any:
        return a + 1.0, L.numpy.int32(7), a[1] > 0

    return L.lax.cond(x[2] > 0, t, f, x)


@program(x3)
def cond_under_jit(L: Any, x: Any) -> Any:
    return L.jit(lambda a: L.lax.cond(a[0] > 0, L.numpy.exp, L.numpy.tanh, a))(x)


@program(x3, y3)
def cond_forwards_operand(L: Any, x: Any, y: Any) -> Any:
    return L.lax.cond(x[0] > 0, lambda a, b: (a, b * 2.0), lambda a, b: (a, b + 1.0), x, y)


@program(x3, y3)
def cond_unused_operand(L: Any, x: Any, y: Any) -> Any:
    return L.lax.cond(y[0] > 0, lambda a, b: a * 2.0, lambda a, b: a + 3.0, x, y)


@program(m34, w33)
def cond_matmul(L: Any, m: Any, w: Any) -> Any:
    return L.lax.cond(m[0, 0] < 0, lambda a: w @ a, lambda a: w.T @ a, m)


@program(x3)
def cond_same_function_both_branches(L: Any, x: Any) -> Any:
    def g(a: Any) -> Any:
        return L.numpy.sin(a) * a

    return L.lax.cond(x[0] > 0, g, g, x)


@program(x3)
def cond_returns_none_leaf(L: Any, x: Any) -> Any:
    out, nothing = L.lax.cond(x[0] > 0, lambda a: (a * 2.0, None), lambda a: (a, None), x)
    assert nothing is None
    return out


@program(s)
def cond_weak_typed_branch(L: Any, x: Any) -> Any:
    return L.lax.cond(x > 0, lambda a: a * 2.0, lambda a: 2.0 * a, x)


@program(x3)
def cond_grad_in_branch(L: Any, x: Any) -> Any:
    g = L.grad(lambda a: L.numpy.sum(L.numpy.sin(a) ** 2))
    return L.lax.cond(x[0] > 0, g, lambda a: a, x)


# --------------------------------------------------------------------------------- switch


@program(x3, i32(1))
def switch_three_branches(L: Any, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [L.numpy.sin, L.numpy.cos, lambda a: a * a], x)


@program(x3, i32(5))
def switch_index_clamped_high(L: Any, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [lambda a: a + 1.0, lambda a: a * 3.0], x)


@program(x3, i32(-2))
def switch_index_clamped_low(L: Any, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [lambda a: a + 1.0, lambda a: a * 3.0, L.numpy.tanh], x)


@program(x3, i32(0))
def switch_one_branch(L: Any, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [lambda a: a * 5.0], x)


@program(x3, y3, i32(2))
def switch_pytree(L: Any, x: Any, y: Any, i: Any) -> Any:
    branches = [
        lambda p: {"u": p[0], "v": p[1]},
        lambda p: {"u": p[1] * 2.0, "v": p[0]},
        lambda p: {"u": p[0] + p[1], "v": p[0] - p[1]},
    ]
    return L.lax.switch(i, branches, (x, y))


@program(x3)
def switch_index_from_data(L: Any, x: Any) -> Any:
    i = (L.numpy.sum(x) > 0).astype(i32) + 1
    return L.lax.switch(i, [L.numpy.sin, L.numpy.cos, L.numpy.exp], x)


@program(xs43, i32(1))
def switch_in_scan(L: Any, xs: Any, i: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = L.lax.switch(i, [lambda a: a + x, lambda a: a * x, lambda a: a - x], c)
        return c, c

    return L.lax.scan(body, L.numpy.ones(3, f32), xs)


@program(x3, i32(1))
def switch_no_operands(L: Any, x: Any, i: Any) -> Any:
    return L.lax.switch(i, [lambda: f32(1.0), lambda: f32(2.0)]) * x


# ----------------------------------------------------------------------------- while_loop


@program(s)
def while_doubling(L: Any, x: Any) -> Any:
    return L.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)


@program(x3)
def while_pytree_state(L: Any, x: Any) -> Any:
    def body(st: Any) -> Any:
        i, v, d = st
        return i + 1, v * 0.5 + 1.0, {"acc": d["acc"] + v, "n": d["n"] * 2}

    return L.lax.while_loop(
        lambda st: st[0] < 4, body, (i32(0), x, {"acc": L.numpy.zeros(3, f32), "n": i32(1)})
    )


@program(x3, w33)
def while_body_closes_over_array(L: Any, x: Any, w: Any) -> Any:
    def body(c: Any) -> Any:
        i, v = c
        return i + 1, L.numpy.tanh(w @ v)

    return L.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


@program(x3, s)
def while_cond_closes_over_value(L: Any, x: Any, limit: Any) -> Any:
    return L.lax.while_loop(lambda c: L.numpy.sum(c) < limit * 20.0, lambda c: c + 1.0, x)


@program(s)
def while_int_counter(L: Any, x: Any) -> Any:
    def body(c: Any) -> Any:
        return c[0] + 1, c[1] * x

    return L.lax.while_loop(lambda c: c[0] < 5, body, (i32(0), f32(1.0)))


@program(x3)
def while_nested(L: Any, x: Any) -> Any:
    def inner(v: Any) -> Any:
        return L.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + 0.5), (0, v))[1]

    def body(c: Any) -> Any:
        return c[0] + 1, inner(c[1]) * 0.5

    return L.lax.while_loop(lambda c: c[0] < 2, body, (0, x))


@program(x3)
def while_cond_in_body(L: Any, x: Any) -> Any:
    def body(c: Any) -> Any:
        i, v = c
        v = L.lax.cond(i % 2 == 0, lambda a: a * 2.0, lambda a: a - 1.0, v)
        return i + 1, v

    return L.lax.while_loop(lambda c: c[0] < 5, body, (0, x))


@program(s)
def while_zero_iterations(L: Any, x: Any) -> Any:
    return L.lax.while_loop(lambda c: c > 100.0, lambda c: c * 2.0, x)


@program(x3)
def while_under_jit(L: Any, x: Any) -> Any:
    f = L.jit(lambda v: L.lax.while_loop(lambda c: L.numpy.max(c) < 8.0, lambda c: c + 1.0, v))
    return f(x)


@program(x3, xs43)
def while_scan_in_body(L: Any, x: Any, xs: Any) -> Any:
    def body(c: Any) -> Any:
        i, v = c
        v, _ = L.lax.scan(lambda a, row: (a * 0.5 + row, None), v, xs)
        return i + 1, v

    return L.lax.while_loop(lambda c: c[0] < 2, body, (0, x))


@program(f32(2.0))
def while_newton_sqrt(L: Any, a: Any) -> Any:
    def body(c: Any) -> Any:
        x, _ = c
        new = 0.5 * (x + a / x)
        return new, L.numpy.abs(new - x)

    return L.lax.while_loop(lambda c: c[1] > 1e-5, body, (a, f32(1.0)))[0]


@program(x3)
def while_bool_in_carry(L: Any, x: Any) -> Any:
    def body(c: Any) -> Any:
        v, _ = c
        v = v * 1.5
        return v, L.numpy.max(v) < 4.0

    return L.lax.while_loop(lambda c: c[1], body, (x, True))


@program(x3)
def while_cumsum_in_body(L: Any, x: Any) -> Any:
    def body(c: Any) -> Any:
        return c[0] + 1, L.numpy.cumsum(c[1]) * 0.5

    return L.lax.while_loop(lambda c: c[0] < 3, body, (0, x))


# ------------------------------------------------------------------------------ fori_loop


@program(x3)
def fori_static(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(0, 5, lambda i, c: c * 0.9 + 1.0, x)


@program(x3)
def fori_static_nonzero_lower(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(2, 7, lambda i, c: c + i.astype(f32), x)


@program(x3, i32(4))
def fori_dynamic_upper(L: Any, x: Any, n: Any) -> Any:
    return L.lax.fori_loop(0, n, lambda i, c: c * 1.5, x)


@program(x3, i32(1))
def fori_dynamic_lower(L: Any, x: Any, lo: Any) -> Any:
    return L.lax.fori_loop(lo, 4, lambda i, c: c + L.numpy.sin(c), x)


@program(x3)
def fori_unroll_two(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(0, 6, lambda i, c: L.numpy.cos(c) * c, x, unroll=2)


@program(x3)
def fori_unroll_true(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(0, 3, lambda i, c: c * c - 0.5, x, unroll=True)


@program(x3)
def fori_uses_index(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(0, 4, lambda i, c: c * (i + 1).astype(f32) / 4.0, x)


@program(x3, y3)
def fori_pytree_carry(L: Any, x: Any, y: Any) -> Any:
    def body(i: Any, c: Any) -> Any:
        return {"x": c["x"] + c["y"], "y": c["y"] * 0.5, "k": c["k"] + i}

    return L.lax.fori_loop(0, 3, body, {"x": x, "y": y, "k": i32(0)})


@program(x3)
def fori_nested(L: Any, x: Any) -> Any:
    def outer(i: Any, c: Any) -> Any:
        return L.lax.fori_loop(0, 2, lambda j, d: d + (i * j).astype(f32) * 0.1, c) * 0.9

    return L.lax.fori_loop(0, 3, outer, x)


@program(x3)
def fori_zero_trip(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(3, 3, lambda i, c: c * 100.0, x)


@program(x3)
def fori_negative_trip(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(5, 2, lambda i, c: c * 100.0, x)


@program(x3, w33)
def fori_closure_matrix(L: Any, x: Any, w: Any) -> Any:
    return L.lax.fori_loop(0, 4, lambda i, c: L.numpy.tanh(w @ c), x)


@program(x3)
def fori_numpy_int_bounds(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(np.int32(1), np.int32(4), lambda i, c: c * 2.0 - 1.0, x)


@program(x3, i32(3))
def fori_dynamic_pytree(L: Any, x: Any, n: Any) -> Any:
    def body(i: Any, c: Any) -> Any:
        return c[0] * 0.5, c[1] + i

    return L.lax.fori_loop(0, n, body, (x, i32(0)))


@program(x3)
def fori_cummax_in_body(L: Any, x: Any) -> Any:
    return L.lax.fori_loop(0, 3, lambda i, c: L.lax.cummax(c[::-1]) - 0.5, x)


@program(x3)
def fori_int_only_carry(L: Any, x: Any) -> Any:
    n = L.lax.fori_loop(0, 5, lambda i, c: c * 2 + i, i32(1))
    return x * n.astype(f32)


# ----------------------------------------------------------------------------------- scan


@program(xs43)
def scan_cumsum(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + x, c), L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_reverse(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c * x + 1.0, c), L.numpy.ones(3, f32), xs, reverse=True)


@program(xs43)
def scan_unroll_two(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (L.numpy.sin(c) + x, c * x), L.numpy.ones(3, f32), xs, unroll=2)


@program(xs43)
def scan_unroll_true(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c - x, c), L.numpy.ones(3, f32), xs, unroll=True)


@program(xs43)
def scan_reverse_unroll(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c * 0.5 + x, c), xs[0], xs, reverse=True, unroll=3)


@program(x3)
def scan_xs_none_length(L: Any, x: Any) -> Any:
    return L.lax.scan(lambda c, _: (c * 1.1, L.numpy.sum(c)), x, None, length=4)


@program(xs43)
def scan_length_matching_xs(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + x, None), xs[0] * 0.0, xs, length=4)


@program(x3, xs43)
def scan_pytree_carry(L: Any, x: Any, xs: Any) -> Any:
    def body(c: Any, row: Any) -> Any:
        return {"h": c["h"] * 0.5 + row, "n": c["n"] + 1, "s": (c["s"][0] + c["h"],)}, c["h"]

    return L.lax.scan(body, {"h": x, "n": i32(0), "s": (x * 0.0,)}, xs)


@program(xs43, m34)
def scan_pytree_xs(L: Any, xs: Any, m: Any) -> Any:
    def body(c: Any, pair: Any) -> Any:
        a, b = pair["a"], pair["b"]
        return c + a * b[:3], {"prod": a * c}

    return L.lax.scan(body, L.numpy.ones(3, f32), {"a": xs, "b": m.T})


@program(xs43)
def scan_ys_none(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + x * x, None), L.numpy.zeros(3, f32), xs)


@program(xs43, w33)
def scan_closure_array(L: Any, xs: Any, w: Any) -> Any:
    return L.lax.scan(lambda c, x: (L.numpy.tanh(w @ c + x), c), L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_nested(L: Any, xs: Any) -> Any:
    def outer(c: Any, row: Any) -> Any:
        inner_c, inner_ys = L.lax.scan(lambda a, v: (a * v + 1.0, a), c, row)
        return inner_c, inner_ys

    return L.lax.scan(outer, f32(1.0), xs)


@program(xs43)
def scan_cond_in_body(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = L.lax.cond(x[0] > 0, lambda a: a + x, lambda a: a * x, c)
        return c, L.numpy.sum(c)

    return L.lax.scan(body, L.numpy.ones(3, f32), xs)


@program(xs43)
def jit_scan_cond_in_body(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = L.lax.cond(L.numpy.sum(c) > 1.0, lambda a: a * 0.5, lambda a: a + x, c)
        return c, c

    return L.jit(lambda v: L.lax.scan(body, L.numpy.ones(3, f32), v))(xs)


@program(x3, xs43, w33)
def scan_rnn(L: Any, h0: Any, xs: Any, w: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = L.numpy.tanh(h @ w + x)
        return h, L.numpy.sum(h * h)

    return L.lax.scan(step, h0, xs)


@program(xs43)
def scan_int_carry(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        i, acc = c
        return (i + 1, acc + x * i.astype(f32)), i

    return L.lax.scan(body, (i32(0), L.numpy.zeros(3, f32)), xs)


@program(xs43)
def scan_forwarding(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: ((c[0], c[1] + x), (x, c[0])), (f32(2.0), xs[0]), xs)


@program(x3)
def scan_consts_only(L: Any, x: Any) -> Any:
    return L.lax.scan(lambda c, _: (c + x, c * x), L.numpy.zeros(3, f32), None, length=3)


@program(xs43)
def scan_cumsum_in_body(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + L.numpy.cumsum(x), L.lax.cumprod(x)), xs[0], xs)


@program(xs43)
def scan_while_in_body(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = L.lax.while_loop(lambda a: L.numpy.sum(a) < 10.0, lambda a: a + L.numpy.abs(x), c)
        return c * 0.1, c

    return L.lax.scan(body, L.numpy.ones(3, f32), xs)


@program(xs43)
def scan_fori_in_body(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        c = L.lax.fori_loop(0, 2, lambda i, a: a * x + 0.5, c)
        return c, L.numpy.max(c)

    return L.lax.scan(body, L.numpy.ones(3, f32), xs)


@program(xs43)
def scan_multiple_ys(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        return c + x, (c, c * x, L.numpy.sum(x))

    return L.lax.scan(body, L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_mixed_dtype_ys(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        return c + x, (x > 0, (x * 10.0).astype(i32))

    return L.lax.scan(body, L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_empty_carry(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c, L.numpy.sin(x) * 2.0), (), xs)


@program(np.zeros((0, 3), f32))
def scan_length_zero(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + x, c), L.numpy.ones(3, f32), xs)


@program(xs43)
def scan_weak_typed_init(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c + L.numpy.sum(x), c), 0.0, xs)


@program(xs43)
def scan_grad_in_body(L: Any, xs: Any) -> Any:
    g = L.grad(lambda a, b: L.numpy.sum(L.numpy.sin(a * b)))
    return L.lax.scan(lambda c, x: (c + g(c, x), c), L.numpy.zeros(3, f32), xs)


@program(xs43, m34)
def scan_vmap_in_body(L: Any, xs: Any, m: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        out = L.vmap(lambda row: L.numpy.dot(row[:3], x))(m.T)
        return c + out[:3], out

    return L.lax.scan(body, L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_jit_in_body(L: Any, xs: Any) -> Any:
    inner = L.jit(lambda a, b: L.numpy.exp(-a * a) + b)
    return L.lax.scan(lambda c, x: (inner(c, x), c), L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_checkpoint_body(L: Any, xs: Any) -> Any:
    body = L.checkpoint(lambda c, x: (L.numpy.sin(c) * x, L.numpy.cos(c)))
    return L.lax.scan(body, L.numpy.ones(3, f32), xs)


@program(xs43)
def scan_2d_carry(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (c * 0.9 + x[:, None] * x[None, :], x), L.numpy.eye(3), xs)


@program(xs43)
def scan_under_jit_reverse(L: Any, xs: Any) -> Any:
    f = L.jit(lambda v: L.lax.scan(lambda c, x: (c * x, c), L.numpy.ones(3, f32), v, reverse=True))
    return f(xs)


@program(xs43, s)
def scan_closes_over_scalar(L: Any, xs: Any, t: Any) -> Any:
    return L.lax.scan(lambda c, x: (c * t + x, c * t), L.numpy.zeros(3, f32), xs)


@program(xs43)
def scan_switch_on_counter(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        i, v = c
        v = L.lax.switch(i % 3, [lambda a: a + x, lambda a: a * x, L.numpy.sin], v)
        return (i + 1, v), v

    return L.lax.scan(body, (i32(0), L.numpy.ones(3, f32)), xs)


# ------------------------------------------------------------------------------------ map


@program(xs43)
def map_simple(L: Any, xs: Any) -> Any:
    return L.lax.map(lambda x: L.numpy.sin(x) * x, xs)


@program(xs43, m34)
def map_pytree(L: Any, xs: Any, m: Any) -> Any:
    return L.lax.map(lambda p: (p[0] + p[1][:3], L.numpy.sum(p[1])), (xs, m.T))


@program(xs43)
def map_batch_size_even(L: Any, xs: Any) -> Any:
    return L.lax.map(lambda x: L.numpy.exp(x) - x, xs, batch_size=2)


@program(xs43)
def map_batch_size_remainder(L: Any, xs: Any) -> Any:
    return L.lax.map(lambda x: L.numpy.tanh(x) * 2.0, xs, batch_size=3)


@program(xs43, w33)
def map_closure(L: Any, xs: Any, w: Any) -> Any:
    return L.lax.map(lambda x: w @ x, xs)


@program(xs43)
def map_cond_in_body(L: Any, xs: Any) -> Any:
    return L.lax.map(lambda x: L.lax.cond(x[0] > 0, L.numpy.sin, L.numpy.cos, x), xs)


# ------------------------------------------------------------------------ associative_scan


@program(xs43)
def associative_scan_add(L: Any, xs: Any) -> Any:
    return L.lax.associative_scan(L.numpy.add, xs)


@program(xs43)
def associative_scan_reverse(L: Any, xs: Any) -> Any:
    return L.lax.associative_scan(L.numpy.multiply, xs, reverse=True)


@program(xs43)
def associative_scan_axis1(L: Any, xs: Any) -> Any:
    return L.lax.associative_scan(L.numpy.maximum, xs, axis=1)


@program(np.linspace(0.1, 0.9, 7, dtype=f32), np.linspace(-1.0, 1.0, 7, dtype=f32))
def associative_scan_linear_recurrence(L: Any, a: Any, b: Any) -> Any:
    def combine(p: Any, q: Any) -> Any:
        return p[0] * q[0], q[0] * p[1] + q[1]

    return L.lax.associative_scan(combine, (a, b))


@program(np.linspace(-1.0, 1.0, 5, dtype=f32))
def associative_scan_odd_length(L: Any, x: Any) -> Any:
    return L.lax.associative_scan(L.numpy.add, x)


@program(xs43)
def associative_scan_in_scan(L: Any, xs: Any) -> Any:
    def body(c: Any, x: Any) -> Any:
        return c + L.lax.associative_scan(L.numpy.add, x), c

    return L.lax.scan(body, L.numpy.zeros(3, f32), xs)


# ---------------------------------------------------------------- cumulative ops and mixes


@program(xs43)
def cumsum_reverse_in_cond(L: Any, xs: Any) -> Any:
    return L.lax.cond(
        xs[0, 0] < 0,
        lambda a: L.lax.cumsum(a, axis=1, reverse=True),
        lambda a: L.lax.cumprod(a, axis=0),
        xs,
    )


@program(xs43)
def cumlogsumexp_in_scan(L: Any, xs: Any) -> Any:
    return L.lax.scan(lambda c, x: (L.lax.cumlogsumexp(c + x), c), L.numpy.zeros(3, f32), xs)


@program(xs43)
def cummin_in_fori(L: Any, xs: Any) -> Any:
    return L.lax.fori_loop(0, 2, lambda i, c: L.lax.cummin(c, axis=0) + 0.1, xs)


@program(x3)
def jit_of_fori_of_cond(L: Any, x: Any) -> Any:
    def body(i: Any, c: Any) -> Any:
        return L.lax.cond(i < 2, lambda a: a * 2.0, lambda a: L.numpy.sqrt(L.numpy.abs(a)), c)

    return L.jit(lambda v: L.lax.fori_loop(0, 4, body, v))(x)


@program(x3, xs43)
def cond_with_scan_in_branch(L: Any, x: Any, xs: Any) -> Any:
    def t(v: Any) -> Any:
        return L.lax.scan(lambda c, r: (c + r * v, None), v, xs)[0]

    return L.lax.cond(x[0] > 0, t, lambda v: v * 2.0, x)


@program(x3)
def cond_with_while_in_branch(L: Any, x: Any) -> Any:
    def t(v: Any) -> Any:
        return L.lax.while_loop(lambda c: L.numpy.sum(c) < 5.0, lambda c: c + 1.0, v)

    return L.lax.cond(x[0] > 0, t, L.numpy.sin, x)


@program(x3)
def cond_with_fori_in_branch(L: Any, x: Any) -> Any:
    def t(v: Any) -> Any:
        return L.lax.fori_loop(0, 3, lambda i, c: c * c * 0.5, v)

    return L.lax.cond(x[0] > 0, t, L.numpy.cos, x)


@program(x3, i32(2))
def switch_with_loops_in_branches(L: Any, x: Any, i: Any) -> Any:
    branches = [
        lambda v: L.lax.fori_loop(0, 2, lambda j, c: c + 1.0, v),
        lambda v: L.lax.scan(lambda c, _: (c * 0.5, None), v, None, length=3)[0],
        lambda v: L.lax.map(L.numpy.exp, v),
    ]
    return L.lax.switch(i, branches, x)


@program(xs43)
def map_of_scan(L: Any, xs: Any) -> Any:
    return L.lax.map(lambda x: L.lax.scan(lambda c, v: (c + v, c), f32(0.0), x), xs)


@program(x3)
def grad_of_fori_in_jit(L: Any, x: Any) -> Any:
    def loss(v: Any) -> Any:
        return L.numpy.sum(L.lax.fori_loop(0, 3, lambda i, c: L.numpy.sin(c) * c, v))

    return L.jit(L.grad(loss))(x)


@program(xs43)
def grad_of_scan_in_body(L: Any, xs: Any) -> Any:
    def loss(c: Any) -> Any:
        return L.numpy.sum(L.lax.scan(lambda a, x: (a * x, None), c, xs)[0])

    return L.lax.scan(lambda c, x: (c + 0.1 * L.grad(loss)(c), x), xs[0], xs)


@program(s)
def jvp_of_while_in_scan(L: Any, t: Any) -> Any:
    def f(v: Any) -> Any:
        return L.lax.while_loop(lambda c: c < 3.0, lambda c: c * 1.5 + 0.1, v)

    def body(c: Any, _: Any) -> Any:
        out, tan = L.jvp(f, (c,), (f32(1.0),))
        return c * 0.5 + 0.1, out * tan

    return L.lax.scan(body, t, None, length=3)


# ------------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class ErrorCase:
    name: str
    fn: Callable[[Any], Any]
    """`fn(L)`: a call that JAX rejects."""


def _xs_bad_lengths(L: Any) -> Any:
    return L.lax.scan(lambda c, x: (c, x[0] + x[1]), 0.0, (np.ones(3, f32), np.ones(4, f32)))


ERRORS: list[ErrorCase] = [
    ErrorCase(
        "cond branch output dtype mismatch",
        lambda L: L.lax.cond(x3[0] > 0, lambda a: a, lambda a: a.astype(i32), x3),
    ),
    ErrorCase(
        "cond branch output shape mismatch",
        lambda L: L.lax.cond(T, lambda a: a, lambda a: a[:2], x3),
    ),
    ErrorCase(
        "cond branch output structure mismatch",
        lambda L: L.lax.cond(T, lambda a: (a, a), lambda a: a, x3),
    ),
    ErrorCase(
        "cond branch output structure mismatch under jit",
        lambda L: L.jit(lambda p, a: L.lax.cond(p, lambda b: [b], lambda b: (b,), a))(T, x3),
    ),
    ErrorCase(
        "cond non-scalar predicate",
        lambda L: L.lax.cond(np.array([True, False]), lambda a: a, lambda a: -a, x3),
    ),
    ErrorCase(
        "cond traced non-scalar predicate",
        lambda L: L.jit(lambda a: L.lax.cond(a > 0, lambda b: b, lambda b: -b, a))(x3),
    ),
    ErrorCase(
        "cond operands and operand keyword",
        lambda L: L.lax.cond(T, lambda a: a, lambda a: a, x3, operand=x3),
    ),
    ErrorCase("cond true_fun not callable", lambda L: L.lax.cond(T, 1.0, lambda a: a, x3)),
    ErrorCase(
        "switch float index",
        lambda L: L.lax.switch(f32(1.0), [lambda a: a, lambda a: -a], x3),
    ),
    ErrorCase(
        "switch non-scalar index",
        lambda L: L.lax.switch(np.array([0, 1], i32), [lambda a: a, lambda a: -a], x3),
    ),
    ErrorCase("switch no branches", lambda L: L.lax.switch(i32(0), [], x3)),
    ErrorCase(
        "switch branch output mismatch",
        lambda L: L.lax.switch(i32(0), [lambda a: a, lambda a: a.sum()], x3),
    ),
    ErrorCase(
        "scan carry dtype change",
        lambda L: L.lax.scan(lambda c, x: (c.astype(i32), x), x3, xs43),
    ),
    ErrorCase(
        "scan carry shape change",
        lambda L: L.lax.scan(lambda c, x: (c[:2], x), x3, xs43),
    ),
    ErrorCase(
        "scan carry structure change",
        lambda L: L.lax.scan(lambda c, x: ((c, c), x), x3, xs43),
    ),
    ErrorCase(
        "scan length disagrees with xs",
        lambda L: L.lax.scan(lambda c, x: (c + x, x), x3, xs43, length=5),
    ),
    ErrorCase("scan xs leading axes disagree", _xs_bad_lengths),
    ErrorCase(
        "scan xs None without length",
        lambda L: L.lax.scan(lambda c, x: (c, c), x3, None),
    ),
    ErrorCase(
        "scan body returns no pair",
        lambda L: L.lax.scan(lambda c, x: c + x, x3, xs43),
    ),
    ErrorCase(
        "while predicate not boolean",
        lambda L: L.lax.while_loop(lambda c: c, lambda c: c - 1.0, s),
    ),
    ErrorCase(
        "while predicate not scalar",
        lambda L: L.lax.while_loop(lambda c: c < 1.0, lambda c: c + 1.0, x3),
    ),
    ErrorCase(
        "while carry dtype change",
        lambda L: L.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, i32(0)),
    ),
    ErrorCase(
        "while carry structure change",
        lambda L: L.lax.while_loop(lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]], (0, s)),
    ),
    ErrorCase(
        "fori_loop carry dtype change",
        lambda L: L.lax.fori_loop(0, 3, lambda i, c: c * 1.5, i32(1)),
    ),
    ErrorCase(
        "grad of while_loop",
        lambda L: L.grad(lambda v: L.lax.while_loop(lambda c: c < 5.0, lambda c: c * 2.0, v))(s),
    ),
    ErrorCase(
        "grad of fori_loop with dynamic bounds",
        lambda L: L.jit(L.grad(lambda v, n: L.lax.fori_loop(0, n, lambda i, c: c * v, v)))(
            s, i32(3)
        ),
    ),
    ErrorCase(
        "vjp of while_loop",
        lambda L: L.vjp(lambda v: L.lax.while_loop(lambda c: c < 5.0, lambda c: c * 2.0, v), s)[1](
            s
        ),
    ),
    ErrorCase(
        "associative_scan lengths disagree",
        lambda L: L.lax.associative_scan(
            lambda a, b: (a[0] + b[0], a[1] + b[1]), (np.ones(3, f32), np.ones(4, f32))
        ),
    ),
]
