"""`nn.scaled_matmul` and `nn.get_scaled_dot_general_config` against `jax.nn`'s: printed jaxprs
(eager and under `vmap`), JAX's errors, and the configurations. JAX 0.10.2 cannot run
`scaled_matmul` on the CPU (no lowering of its primitive); its values are compared with
`jax.lax.scaled_dot` of the same operands, which is how JAX lowers it for ROCm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_core import nn as lnn

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytestmark = pytest.mark.oracle

_RS = np.random.RandomState(2)


def _f8(x: Any, dtype: Any = None) -> np.ndarray:
    return np.asarray(jnp.asarray(x, dtype or jnp.float8_e4m3fn))


def _scales(shape: tuple[int, ...]) -> np.ndarray:
    return _f8(2.0 ** _RS.randint(-3, 3, shape), jnp.float8_e8m0fnu)


A, B = _f8(_RS.randn(2, 4, 64)), _f8(_RS.randn(2, 3, 64))
SA, SB = _scales((2, 4, 2)), _scales((2, 3, 2))
ARGS = (A, B, SA, SB)
MATMUL_DN = (((2,), (2,)), ((0,), (0,)))


# float16 results: XLA rounds the bfloat16 dot differently from the NumPy reference (on XLA:
# lamina's test_scaled_dot_xla.py).
@pytest.mark.parametrize("dtype", [np.float32, jnp.bfloat16], ids=str)
def test_printed_and_values(dtype: Any) -> None:
    def f(nn: Any) -> Callable[..., Any]:
        return lambda *xs: nn.scaled_matmul(*xs, preferred_element_type=dtype)

    ours = lamina_core.make_jaxpr(f(lnn))(*ARGS)
    assert str(ours) == str(jax.make_jaxpr(f(jax.nn))(*ARGS))
    got = np.asarray(f(lnn)(*ARGS))
    sa, sb = SA, SB
    want = np.asarray(
        jax.lax.scaled_dot(
            A, B, lhs_scale=sa, rhs_scale=sb, dimension_numbers=MATMUL_DN,
            preferred_element_type=dtype,
        )
    )  # fmt: skip
    assert got.dtype == want.dtype and got.shape == want.shape == (2, 4, 3)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-6)


def test_vmap_printed_and_values() -> None:
    batched = tuple(np.stack([x, x]) for x in ARGS)
    ours = lamina_core.make_jaxpr(lamina_core.vmap(lnn.scaled_matmul))(*batched)
    assert str(ours) == str(jax.make_jaxpr(jax.vmap(jax.nn.scaled_matmul))(*batched))
    got = np.asarray(lamina_core.vmap(lnn.scaled_matmul)(*batched))
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[0], np.asarray(lnn.scaled_matmul(*ARGS)))


def _raised(f: Callable[[], Any]) -> tuple[type[BaseException], str]:
    try:
        f()
    except Exception as e:  # the oracle's exception, whatever its type
        return type(e), str(e)
    raise AssertionError("no error")


ERRORS: list[tuple[str, Callable[[Any], Any]]] = [
    ("rank", lambda nn: nn.scaled_matmul(A[0], B, SA, SB)),
    ("contract", lambda nn: nn.scaled_matmul(A, B[..., :32], SA, SB)),
    ("batch", lambda nn: nn.scaled_matmul(A, B[:1], SA, SB)),
    ("scale_contract", lambda nn: nn.scaled_matmul(A, B, SA, SB[..., :1])),
    ("scale_rows", lambda nn: nn.scaled_matmul(A, B, SA[:, :2], SB)),
    ("config_mode", lambda nn: nn.get_scaled_dot_general_config("int8")),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_are_jax_errors(name: str, call: Callable[[Any], Any]) -> None:
    kind, message = _raised(lambda: call(jax.nn))
    with pytest.raises(kind) as info:
        call(lnn)
    assert str(info.value) == message


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_configs_equal_jax(mode: str) -> None:
    ours, theirs = (
        lnn.get_scaled_dot_general_config(mode),
        jax.nn.get_scaled_dot_general_config(mode),
    )
    assert type(ours).__name__ == type(theirs).__name__ == "BlockScaleConfig"
    for field in ("mode", "block_size", "data_type", "scale_type", "infer_only"):
        assert getattr(ours, field) == getattr(theirs, field)
    if theirs.global_scale is None:
        assert ours.global_scale is None
    else:
        np.testing.assert_array_equal(
            np.asarray(ours.global_scale), np.asarray(theirs.global_scale)
        )
        assert np.asarray(ours.global_scale).dtype == np.float32
    custom = lnn.get_scaled_dot_general_config("nvfp4", np.array([2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(custom.global_scale), [2.0])
