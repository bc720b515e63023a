"""jnp's second names (`abs`, `acos`, `divide`, `amax`, ...) are functions of their own, as
JAX's: `jit` of one is named after it, in the jaxpr and in the compiled module."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import lamina
import lamina.numpy as lnp

_F = np.array([0.25, -0.5, 0.75], np.float32)
_I = np.array([1, 2, 3], np.int32)

ALIASES: dict[str, tuple[Any, ...]] = {
    "abs": (_F,),
    "acos": (_F,),
    "acosh": (_F + 1.5,),
    "asin": (_F,),
    "asinh": (_F,),
    "atan": (_F,),
    "atanh": (_F,),
    "amax": (_F,),
    "amin": (_F,),
    "bitwise_invert": (_I,),
    "invert": (_I,),
    "bitwise_left_shift": (_I, _I),
    "bitwise_right_shift": (_I, _I),
    "conj": (_F,),
    "degrees": (_F,),
    "radians": (_F,),
    "divide": (_F, _F + 2),
    "mod": (_F, _F + 2),
    "pow": (_F + 1, _F),
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_alias_is_named_and_staged_as_jax(name: str) -> None:
    args = ALIASES[name]
    theirs, ours = getattr(jnp, name), getattr(lnp, name)
    assert ours.__name__ == theirs.__name__ == name
    assert str(lamina.make_jaxpr(lamina.jit(ours))(*args)) == str(
        jax.make_jaxpr(jax.jit(theirs))(*args)
    )
    assert str(lamina.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))
    np.testing.assert_array_equal(np.asarray(ours(*args)), np.asarray(theirs(*args)))


def test_jit_of_an_alias_compiles_a_module_named_after_it() -> None:
    lowered = lamina.jit(lnp.abs).lower(_F).as_text()
    assert lowered.startswith("module @jit_abs ")
    assert jax.jit(jnp.abs).lower(_F).as_text().startswith("module @jit_abs ")


def test_array_operators_use_jaxs_functions() -> None:
    x = lamina.numpy.asarray(_F)
    np.testing.assert_array_equal(np.asarray(abs(x)), np.abs(_F))
    np.testing.assert_array_equal(np.asarray(~lamina.numpy.asarray(_I)), ~_I)
