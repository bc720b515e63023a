"""`jax.Array` methods on Lamina's device arrays against JAX's: the ones that need concrete
values (`nonzero`, `compress` without `size`), the static sizes, placement (`to_device`,
`addressable_data`), and JAX's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina
import lamina.numpy as lnp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

pytestmark = pytest.mark.oracle

F = np.arange(12.0, dtype=np.float32).reshape(3, 4) - 5.5

CALLS: dict[str, Callable[[Any], Any]] = {
    "nonzero": lambda x: (x > 0).nonzero(),
    "compress": lambda x: x.compress(np.array([True, False, True]), axis=0),
    "compress_flat": lambda x: x.compress(np.ravel(F) > 1),
    "choose": lambda x: (x[0] > 0).astype(np.int32).choose([x[1], x[2]]),
    "searchsorted": lambda x: x.ravel().searchsorted(np.array([-1.0, 0.5, 9.0])),
    "view": lambda x: x.view(np.uint16),
    "byteswap": lambda x: x.astype(np.int16).byteswap(),
    "mT": lambda x: x.mT,
    "take": lambda x: x.take(np.array([1, 11, 3])),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_device_array_method_computes_as_jax(name: str) -> None:
    ours = CALLS[name](lnp.asarray(F))
    theirs = CALLS[name](jnp.asarray(F))
    for got, want in zip(
        lamina.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True
    ):
        assert type(got) is lamina.Array
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_sizes_placement_and_errors_are_jax_s() -> None:
    x, jx = lnp.asarray(F), jnp.asarray(F)
    assert (x.nbytes, x.itemsize) == (jx.nbytes, jx.itemsize) == (48, 4)
    moved = x.to_device(lamina.devices()[-1])
    assert moved.devices() == {lamina.devices()[-1]}
    np.testing.assert_array_equal(np.asarray(moved), F)
    np.testing.assert_array_equal(
        np.asarray(x.addressable_data(0)), np.asarray(jx.addressable_data(0))
    )
    errors: list[Callable[[Any], Any]] = [
        lambda a: a.flat,
        lambda a: a.to_device(a.device, stream=1),
    ]
    for call in errors:
        with pytest.raises(NotImplementedError) as theirs:
            call(jx)
        with pytest.raises(NotImplementedError) as ours:
            call(x)
        assert str(ours.value) == str(theirs.value)
