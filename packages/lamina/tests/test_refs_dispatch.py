"""Jitted calls with Ref arguments repeated by C++ dispatch (issue 18's in-place call): each
repeat updates the Refs it was made for, in place, as Python's path did; Refs closed over,
aliased, frozen or unused still take Python's path or its errors. Values against JAX's."""

from __future__ import annotations

import gc
import sys
import weakref
from types import FrameType
from typing import Any

import jax
import numpy as np
import pytest

import lamina
from lamina_runtime._jit import jit_function_of


def _misses(f: Any) -> int:
    function = jit_function_of(f)
    assert function is not None
    return function.dispatch_misses


def _add_one(ref: Any) -> None:
    ref[...] += 1.0


def test_repeated_in_place_call_is_repeated_by_cpp_dispatch() -> None:
    bump = lamina.jit(_add_one)
    r = lamina.new_ref(lamina.numpy.arange(4.0))
    p0 = r.unsafe_buffer_pointer()
    for _ in range(5):
        bump(r)
    assert _misses(bump) == 1
    assert r.unsafe_buffer_pointer() == p0

    jr = jax.new_ref(jax.numpy.arange(4.0))
    jbump = jax.jit(_add_one)
    for _ in range(5):
        jbump(jr)
    np.testing.assert_array_equal(r[...], jr[...])


def test_each_ref_of_one_type_has_its_own_entry() -> None:
    bump = lamina.jit(_add_one)
    a = lamina.new_ref(lamina.numpy.zeros(3))
    b = lamina.new_ref(lamina.numpy.zeros(3))
    for _ in range(3):
        bump(a)
    for _ in range(2):
        bump(b)
    bump(a)
    assert _misses(bump) == 2
    np.testing.assert_array_equal(a[...], [4.0, 4.0, 4.0])
    np.testing.assert_array_equal(b[...], [2.0, 2.0, 2.0])


def _scale_and_sum(refs: dict[str, Any], k: Any) -> Any:
    refs["a"][...] = refs["a"][...] * k
    refs["b"][1:] += k
    return refs["a"][...].sum(), k + 1


def test_refs_in_pytrees_with_results() -> None:
    def run(L: Any) -> tuple[Any, list[Any], Any, Any]:
        f = L.jit(_scale_and_sum)
        refs = {"a": L.new_ref(L.numpy.ones(3)), "b": L.new_ref(L.numpy.zeros(4))}
        outs = [f(refs, L.numpy.float32(2.0)) for _ in range(4)]
        return f, outs, refs["a"][...], refs["b"][...]

    mine, theirs = run(lamina), run(jax)
    assert _misses(mine[0]) == 1
    for (s, k), (js, jk) in zip(mine[1], theirs[1], strict=True):
        np.testing.assert_array_equal(s, js)
        np.testing.assert_array_equal(k, jk)
    np.testing.assert_array_equal(mine[2], theirs[2])
    np.testing.assert_array_equal(mine[3], theirs[3])


def test_closed_over_refs_take_pythons_path() -> None:
    r = lamina.new_ref(lamina.numpy.zeros(2))

    @lamina.jit
    def bump(x: Any) -> Any:
        r[...] += x
        return x * 2

    x = lamina.numpy.ones(2)
    for _ in range(3):
        np.testing.assert_array_equal(bump(x), [2.0, 2.0])
    np.testing.assert_array_equal(r[...], [3.0, 3.0])
    assert _misses(bump) == 3  # C++ cannot read a closed-over Ref's current buffer


def test_same_ref_twice_after_cpp_entry_still_errors() -> None:
    def both(a: Any, b: Any) -> None:
        a[...] += 1.0
        b[...] += 1.0

    f = lamina.jit(both)
    r, s = lamina.new_ref(lamina.numpy.zeros(2)), lamina.new_ref(lamina.numpy.zeros(2))
    f(r, s)
    f(r, s)
    with pytest.raises(ValueError, match="appeared at both a and b"):
        f(r, r)
    np.testing.assert_array_equal(r[...], [2.0, 2.0])


def test_frozen_ref_after_cpp_entry_still_errors() -> None:
    bump = lamina.jit(_add_one)
    r = lamina.new_ref(lamina.numpy.zeros(2))
    bump(r)
    bump(r)
    np.testing.assert_array_equal(lamina.freeze(r), [2.0, 2.0])
    with pytest.raises(ValueError, match="was frozen or freed"):
        bump(r)


def test_unused_ref_and_static_arguments() -> None:
    f = lamina.jit(lambda ref, x: x + 1.0)
    r = lamina.new_ref(lamina.numpy.zeros(2))
    for _ in range(3):
        np.testing.assert_array_equal(f(r, lamina.numpy.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(r[...], [0.0, 0.0])

    def scaled(ref: Any, k: int) -> None:
        ref[...] = ref[...] * k

    g = lamina.jit(scaled, static_argnums=1)
    r = lamina.new_ref(lamina.numpy.ones(2))
    p0 = r.unsafe_buffer_pointer()
    for _ in range(3):
        g(r, 3)
    g(r, 2)
    assert r.unsafe_buffer_pointer() == p0
    np.testing.assert_array_equal(r[...], [54.0, 54.0])


def test_dispatch_entries_keep_no_ref_alive() -> None:
    bump = lamina.jit(_add_one)
    r = lamina.new_ref(lamina.numpy.zeros(2))
    bump(r)
    bump(r)
    held = weakref.ref(r)
    del r
    gc.collect()
    assert held() is None
    r = lamina.new_ref(lamina.numpy.zeros(2))  # a new Ref, perhaps at the old one's address
    bump(r)
    np.testing.assert_array_equal(r[...], [1.0, 1.0])


def test_refs_keys_are_hashed_and_compared_without_python_code() -> None:
    # C++ dispatch compares the keys of Refs (weak references, which compare their Refs) while
    # it probes its cache. A Python `__eq__` of Ref's let another thread change the cache under
    # the probe: a segfault in test_threads.py, one run in four.
    a, b = lamina.new_ref(lamina.numpy.zeros(3)), lamina.new_ref(lamina.numpy.zeros(3))
    keys = (a._key, b._key, a._key)
    ran: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            ran.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        seen = (keys[0] == keys[1], keys[0] == keys[2], hash(keys[0]), hash(keys[1]), a == b)
    finally:
        sys.setprofile(None)
    assert ran == []
    assert seen[:2] == (False, True) and seen[2:4] == (hash(a), hash(b)) and seen[4] is False
