"""`jax.numpy`'s NumPy-backed names against JAX 0.10.2: scalar types and their aliases,
constants, `.npy` files, arrays from buffers and strings, DLPack, `einsum_path`, and the
errors of the deliberately missing `fromfile`/`fromiter`."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core.numpy as lnp

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.oracle
jnp = jax.numpy

SCALAR_NAMES = [
    "bool", "bool_", "single", "double", "csingle", "cdouble", "uint", "int1", "int2", "uint1",
    "uint2", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
]  # fmt: skip


@pytest.mark.parametrize("name", SCALAR_NAMES)
def test_scalar_types_are_jaxs(name: str) -> None:
    mine, theirs = getattr(lnp, name), getattr(jnp, name)
    assert np.dtype(mine) == np.dtype(theirs)
    assert repr(mine).replace("lamina", "jax") == repr(theirs)
    if name in ("bool", "bool_", "single", "double", "csingle", "cdouble", "uint", "int2"):
        # (JAX cannot make arrays of some narrow types on CPU, nor host copies of 1-bit ones)
        assert np.asarray(mine(1)).dtype == np.asarray(theirs(1)).dtype


def test_aliases_and_constants() -> None:
    assert [lnp.single, lnp.uint, lnp.cdouble] == [lnp.float32, lnp.uint64, lnp.complex128]
    assert [lnp.newaxis, lnp.euler_gamma] == [jnp.newaxis, jnp.euler_gamma]
    for name in ("generic", "character", "flexible", "object_", "ComplexWarning"):
        assert getattr(lnp, name) is getattr(jnp, name)
    assert lnp.array_str(np.arange(3)) == jnp.array_str(np.arange(3))
    with lnp.printoptions(precision=2):
        assert lnp.get_printoptions()["precision"] == 2


def test_save_and_load_round_trip_bfloat16() -> None:
    for dtype in (np.float32, np.int8, lnp.bfloat16.dtype):
        buf = io.BytesIO()
        lnp.save(buf, np.arange(4).astype(dtype))
        buf.seek(0)
        mine = lnp.load(buf)
        buf.seek(0)
        theirs = jnp.load(buf)
        assert np.asarray(mine).dtype == theirs.dtype
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))


def test_arrays_from_buffers_strings_and_dlpack() -> None:
    data = np.arange(6, dtype=np.float32).tobytes()
    calls: list[Callable[[Any], Any]] = [
        lambda n: n.frombuffer(data, dtype=np.float32),
        lambda n: n.frombuffer(data, dtype=np.int16, count=3, offset=2),
        lambda n: n.frombuffer(np.arange(3.0).tobytes()),  # float64 narrowed as JAX does
        lambda n: n.fromstring("1 2 3.5", sep=" "),
        lambda n: n.fromstring("1,2,3", dtype=int, sep=","),
        lambda n: n.from_dlpack(np.arange(5, dtype=np.int32)),
    ]
    for call in calls:
        got, want = np.asarray(call(lnp)), np.asarray(call(jnp))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["fromfile", "fromiter"])
def test_impure_readers_raise_as_jax(name: str) -> None:
    with pytest.raises(NotImplementedError) as theirs:
        getattr(jnp, name)(iter([1]))
    with pytest.raises(NotImplementedError) as mine:
        getattr(lnp, name)(iter([1]))
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("optimize", ["auto", True, False, "greedy"])
def test_einsum_path_is_jaxs(optimize: bool | str) -> None:
    ops = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)), np.ones((5, 2))]
    mine = lnp.einsum_path("ij,jk,kl,li->", *ops, optimize=optimize)
    theirs = jnp.einsum_path("ij,jk,kl,li->", *ops, optimize=optimize)
    assert mine[0] == theirs[0]
    assert str(mine[1]) == str(theirs[1])
