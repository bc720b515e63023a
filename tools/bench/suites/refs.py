"""Refs (seed 004): jitted in-place updates of Ref arguments, and `foreach`.

Issue 18 asks for: a jitted call updating a small Ref argument in place at most 1.2x the same
call with buffer donation (compare `refs.jit_inplace_update` with `refs.jit_donated_update`,
Lamina's column of each); `foreach`'s second call at most 0.1x its first (compare
`refs.foreach_second_call` with `refs.foreach_first_call`). The 128 MB in-place update is
checked by a slow test (peak RSS), not timed here.
"""

from __future__ import annotations

from typing import Any

from tools.bench.registry import Side, Timed, benchmark


@benchmark("refs.jit_inplace_update")
def jit_inplace_update(side: Side) -> Timed:
    """A jitted `r[...] += 1` on a Ref argument holding f32[16] (updated in place)."""
    api = side.api()
    r = api.new_ref(api.numpy.zeros(16))

    def add_one(ref: Any) -> None:
        ref[...] += 1.0

    bump = api.jit(add_one)
    bump(r)
    return lambda: bump(r)


@benchmark("refs.jit_donated_update")
def jit_donated_update(side: Side) -> Timed:
    """The same update without Refs: a jitted `x + 1` donating its f32[16] argument."""
    api = side.api()
    state = [api.numpy.zeros(16)]
    bump = api.jit(lambda x: x + 1.0, donate_argnums=0)
    state[0] = bump(state[0])

    def step() -> None:
        state[0] = bump(state[0])

    return step


def _foreach_program(api: Any) -> Any:
    xs = api.numpy.arange(10)

    def foreach(*args: Any) -> Any:
        def decorator(body: Any) -> Any:
            return api.lax.scan(lambda _, elts: (None, body(*elts)), None, args)[1]

        return decorator

    def run() -> Any:
        r = api.new_ref(0)

        def body(x: Any) -> Any:
            r[...] += x
            return x * 2

        return foreach(xs)(body)  # the seed's `@foreach(xs) def ys(x): ...`

    return run


@benchmark("refs.foreach_first_call")
def foreach_first_call(side: Side) -> Timed:
    """The seed's `foreach` (a scan over a closed-over Ref, eager) run once, after clearing
    every in-memory cache: trace, lower, compile and run."""
    api = side.api()
    run = _foreach_program(api)

    def first() -> None:
        api.clear_caches()
        run().block_until_ready()

    return first


@benchmark("refs.foreach_second_call")
def foreach_second_call(side: Side) -> Timed:
    """The seed's `foreach` run again (its loop body is a new function each time)."""
    api = side.api()
    run = _foreach_program(api)
    run().block_until_ready()
    return lambda: run().block_until_ready()
