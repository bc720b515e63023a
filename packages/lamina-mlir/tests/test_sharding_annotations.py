"""Modules lowered for a device mesh print as JAX's: the `sdy.mesh @mesh` declaration, the
partition count, and `sdy.sharding` on `@main`'s arguments (const args included) and results.

JAX prints its modules in a fresh process with 8 forced CPU devices (a jit over arrays placed
with `NamedSharding`); Lamina lowers the same programs for the same abstract mesh.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import lamina_core
from lamina_consts import jaxpr_const_args
from lamina_core.ir._mesh import AbstractMesh
from lamina_core.ir._partition_spec import P
from lamina_mlir import lower_jaxpr_to_module

pytestmark = pytest.mark.oracle

_JAX_SCRIPT = textwrap.dedent(
    """
    import json, os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ["JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS"] = "True"
    import numpy as np, jax, jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    devs = jax.devices()
    m1 = Mesh(np.array(devs), ("i",))
    m2 = Mesh(np.array(devs).reshape(2, 4), ("x", "y"))
    x = jax.device_put(np.ones((8, 3), np.float32), NamedSharding(m1, P("i")))
    v = jax.device_put(np.ones((8,), np.float32), NamedSharding(m1, P("i")))
    a = jax.device_put(np.ones((8, 16), np.float32), NamedSharding(m2, P("x", "y")))
    c = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(m1, P("i")))
    out = {
        "scale": jax.jit(lambda x: x * 2.0).lower(x).as_text(),
        "sum0": jax.jit(lambda x: x.sum(0)).lower(x).as_text(),
        "sin2d": jax.jit(lambda a: jnp.sin(a)).lower(a).as_text(),
        "replicated_out": jax.jit(lambda x: x * 2.0, out_shardings=NamedSharding(m1, P()))
            .lower(v).as_text(),
        "const": jax.jit(lambda y: y * c).lower(np.ones((8, 8), np.float32)).as_text(),
    }
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def jax_texts() -> dict[str, str]:
    pytest.importorskip("jax")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    proc = subprocess.run(
        [sys.executable, "-c", _JAX_SCRIPT], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    texts: dict[str, str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return texts


MESH_I = AbstractMesh((8,), ("i",))
MESH_XY = AbstractMesh((2, 4), ("x", "y"))


def _lower(fun: Any, *args: Any, **kwargs: Any) -> str:
    jaxpr = lamina_core.make_jaxpr(fun)(*args)
    return lower_jaxpr_to_module(jaxpr, module_name="jit(<lambda>)", **kwargs).as_text()


def test_elementwise_on_an_argument_split_over_one_axis(jax_texts: dict[str, str]) -> None:
    text = _lower(lambda x: x * 2.0, np.ones((8, 3), np.float32), mesh=MESH_I,
                  arg_shardings=[P("i")])  # fmt: skip
    assert text == jax_texts["scale"]


def test_reduction_over_the_split_axis(jax_texts: dict[str, str]) -> None:
    text = _lower(lambda x: x.sum(0), np.ones((8, 3), np.float32), mesh=MESH_I,
                  arg_shardings=[P("i")])  # fmt: skip
    assert text == jax_texts["sum0"]


def test_two_dimensional_mesh(jax_texts: dict[str, str]) -> None:
    text = _lower(lamina_core.numpy.sin, np.ones((8, 16), np.float32), mesh=MESH_XY,
                  arg_shardings=[P("x", "y")])  # fmt: skip
    assert text == jax_texts["sin2d"]


def test_result_sharding_is_annotated(jax_texts: dict[str, str]) -> None:
    text = _lower(lambda x: x * 2.0, np.ones((8,), np.float32), mesh=MESH_I,
                  arg_shardings=[P("i")], result_shardings=[P()])  # fmt: skip
    assert text == jax_texts["replicated_out"]


def test_sharded_const_arg(jax_texts: dict[str, str]) -> None:
    c = np.ones((8, 8), np.float32)
    jaxpr = lamina_core.make_jaxpr(lambda y: y * c)(np.ones((8, 8), np.float32))
    consts = jaxpr_const_args(jaxpr)
    text = lower_jaxpr_to_module(
        jaxpr, module_name="jit(<lambda>)", const_args=consts, mesh=MESH_I,
        const_arg_shardings=[P("i")],
    ).as_text()  # fmt: skip
    assert text == jax_texts["const"]


def test_unannotated_values_and_module_mesh() -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: x + 1.0)(np.ones((8,), np.float32))
    lowered = lower_jaxpr_to_module(jaxpr, module_name="jit(f)", mesh=MESH_I)
    assert lowered.mesh is MESH_I
    assert "sdy.sharding" not in lowered.as_text()
    assert "mhlo.num_partitions = 8" in lowered.as_text()


def test_shardings_without_a_mesh_are_refused() -> None:
    jaxpr = lamina_core.make_jaxpr(lambda x: x)(np.ones((8,), np.float32))
    with pytest.raises(ValueError, match="without a mesh"):
        lower_jaxpr_to_module(jaxpr, module_name="f", arg_shardings=[P("i")])
