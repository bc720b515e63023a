"""Lowering of `lax.ragged_all_to_all`, `lax.psend` and `lax.precv` inside `shard_map`
against JAX 0.10.2: ragged_all_to_all's module text (a `custom_call` XLA:CPU cannot run, so
only the text is compared), and the refusal to lower psend and precv for the CPU.

JAX's side runs in a subprocess with 8 host CPU devices (as `test_collectives_spmd.py`);
Lamina lowers for the same mesh with stand-in devices.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import lamina_mlir
from lamina_consts import make_jaxpr
from lamina_core import lax
from lamina_core.ir._mesh import Mesh
from lamina_core.ir._partition_spec import P
from lamina_core.sharding._shard_map import shard_map

RING = [(j, (j + 1) % 4) for j in range(4)]
_SPECS_1D = "(P('i'),) * 6"
_SPECS_2D = "(P(('x', 'y')),) * 2 + (P('y'),) * 4"
CASES: dict[str, tuple[str, str, str, str]] = {
    # name: (mesh, body, in_specs, out_specs); operands from `_operands`.
    "ragged_1d": ("1d", "lambda *a: lax.ragged_all_to_all(*a, axis_name='i')", _SPECS_1D,
                  "P('i')"),
    "ragged_groups": ("1d", "lambda *a: lax.ragged_all_to_all(*a, axis_name='i', "
                      "axis_index_groups=[[0, 2], [1, 3]])", _SPECS_1D, "P('i')"),
    "ragged_2d_y": ("2d", "lambda *a: lax.ragged_all_to_all(*a, axis_name='y')", _SPECS_2D,
                    "P(('x', 'y'))"),
    "ragged_2d_yx": ("2d", "lambda *a: lax.ragged_all_to_all(*a, axis_name=('y', 'x'))",
                     _SPECS_2D, "P(('x', 'y'))"),
    "psend": ("1d", "lambda t, *a: lax.optimization_barrier((t, lax.psend(t, 'i', RING)))[0]",
              _SPECS_1D, "P('i')"),
    "precv": ("1d", "lambda t, *a: lax.precv(lax.create_token(), S((2, 3), np.float32), 'i', "
              "RING)", _SPECS_1D, "P('i')"),
}  # fmt: skip


def _operands(mesh: str) -> list[np.ndarray]:
    """Data of 8 rows per device, offsets and sizes of 2 (over 4 devices on either mesh)."""
    devices = 4 if mesh == "1d" else 8
    return [np.zeros((8 * devices, 3), np.float32)] * 2 + [np.zeros((8,), np.int32)] * 4


_JAX_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import jax
    from jax import lax
    from jax.sharding import Mesh, PartitionSpec as P
    devices = jax.devices()
    meshes = {"1d": Mesh(np.array(devices[:4]), ("i",)),
              "2d": Mesh(np.array(devices[:8]).reshape(2, 4), ("x", "y"))}
    S = jax.ShapeDtypeStruct
    out = {}
    for name, (mesh, body, in_specs, out_specs, shapes) in json.load(sys.stdin).items():
        env = {"lax": lax, "np": np, "P": P, "S": S, "RING": [(j, (j + 1) % 4) for j in range(4)]}
        f = jax.shard_map(eval(body, env), mesh=meshes[mesh], in_specs=eval(in_specs, env),
                          out_specs=eval(out_specs, env))
        args = [np.zeros(s, d) for s, d in shapes]
        try:
            out[name] = jax.jit(f).lower(*args).as_text(debug_info=False)
        except Exception as err:
            out[name] = f"{type(err).__name__}: {err}"
    json.dump(out, sys.stdout)
    """
)


@pytest.fixture(scope="module")
def jax_texts() -> dict[str, str]:
    pytest.importorskip("jax")
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    env["JAX_PLATFORMS"] = "cpu"
    env.setdefault("JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS", "True")
    cases = {
        name: (*case, [(a.shape, str(a.dtype)) for a in _operands(case[0])])
        for name, case in CASES.items()
    }
    done = subprocess.run(
        [sys.executable, "-c", _JAX_SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    texts: dict[str, str] = json.loads(done.stdout)
    return texts


class _Device:
    def __init__(self, i: int) -> None:
        self.id = i


def _mesh(kind: str) -> Mesh:
    if kind == "1d":
        return Mesh(np.array([_Device(i) for i in range(4)]), ("i",))
    return Mesh(np.array([_Device(i) for i in range(8)]).reshape(2, 4), ("x", "y"))


def _shape_dtype(shape: tuple[int, ...], dtype: Any) -> Any:
    """A stand-in for `jax.ShapeDtypeStruct`: what `precv` reads of its `out_shape`."""
    return SimpleNamespace(shape=shape, dtype=dtype)


def _lamina_text(name: str) -> str:
    kind, body, in_specs, out_specs = CASES[name]
    env: dict[str, Any] = {"lax": lax, "np": np, "P": P, "RING": RING, "S": _shape_dtype}
    mesh = _mesh(kind)
    f = shard_map(eval(body, env), mesh=mesh, in_specs=eval(in_specs, env),
                  out_specs=eval(out_specs, env))  # fmt: skip
    jaxpr = make_jaxpr(f)(*_operands(kind))
    try:
        lowered = lamina_mlir.lower_jaxpr_to_module(jaxpr, module_name="jit(_lambda)", mesh=mesh)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return lowered.as_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_matches_jax(name: str, jax_texts: dict[str, str]) -> None:
    assert _lamina_text(name) == jax_texts[name]


def test_ragged_all_to_all_is_a_custom_call_and_psend_refuses() -> None:
    # What the JAX comparison shows, stated without JAX.
    assert "stablehlo.custom_call @ragged_all_to_all" in _lamina_text("ragged_1d")
    assert "channel_id = 1 : i64" in _lamina_text("ragged_2d_y")
    assert _lamina_text("psend") == (
        "NotImplementedError: psend is currently only implemented on GPU"
    )
