"""Running `shard_map` test programs through JAX 0.10.2 and through Lamina.

A test module defines *cases*: functions of a namespace (`ns.jnp`, `ns.lax`, `ns.shard_map`,
`ns.P`, `ns.grad`, `ns.vjp`, `ns.jvp`, `ns.vmap`, `ns.jit`, `ns.mesh(shape, names)`) that
return a program and its arguments. The same case runs with JAX's namespace and Lamina's; the
printed jaxprs must be byte-identical and the values equal.

JAX runs `shard_map` on 8 CPU devices. XLA fixes its device count when JAX first uses its
backend, so when the test process has fewer devices (the usual case: one), the JAX side of
every case of a module runs once in a subprocess started with
`XLA_FLAGS=--xla_force_host_platform_device_count=8`, which sends back the texts and values.
Lamina's meshes are built over the same number of devices (JAX's when the process has them,
stand-ins with device ids otherwise: core never touches a device).

Test modules load this file by path (the tests folder is not a package).
"""

from __future__ import annotations

import base64
import importlib.util
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, TypeAlias

import numpy as np

Case: TypeAlias = Callable[[Any], tuple[Any, tuple[Any, ...]]]
"""`case(ns) -> (program, args)`: a program built from namespace `ns`, and its arguments (or
a text the case printed itself, and no arguments)."""

Result: TypeAlias = tuple[str, list[np.ndarray]]
"""A case's printed jaxpr (`make_jaxpr(program)(*args)`) and the leaves of `program(*args)`."""

DEVICES = 8


def case_registry() -> tuple[dict[str, Case], Callable[[Case], Case]]:
    """A test module's cases by name, and the decorator that registers a case under its name."""
    cases: dict[str, Case] = {}

    def case(fn: Case) -> Case:
        cases[fn.__name__] = fn
        return fn

    return cases, case


def uniform(*shape: int, seed: int = 0) -> np.ndarray:
    """Test data: float32 values in [-1, 1) of `shape`, the same for the same `seed`."""
    return np.random.RandomState(seed).uniform(-1.0, 1.0, shape).astype(np.float32)


class StandInDevice:
    """A device as Lamina's `Mesh` needs one (an id), for tests run without JAX's devices."""

    __slots__ = ("id",)

    def __init__(self, i: int) -> None:
        self.id = i

    def __repr__(self) -> str:
        return f"StandInDevice(id={self.id})"


def _mesh_factory(mesh_type: Any, devices: Sequence[Any]) -> Callable[..., Any]:
    def mesh(shape: tuple[int, ...], names: tuple[str, ...]) -> Any:
        n = int(np.prod(shape))
        array = np.empty(n, dtype=object)
        for i, d in enumerate(devices[:n]):
            array[i] = d
        return mesh_type(array.reshape(shape), names)

    return mesh


def _jax_partial_eval(closed: Any, unknowns: Sequence[bool]) -> str:
    from jax._src.interpreters import partial_eval as pe

    known, unknown, out_unknowns, _ = pe.partial_eval_jaxpr_nounits(
        closed, list(unknowns), instantiate=False
    )
    return f"{known}\n{unknown}\n{out_unknowns}"


def _lamina_partial_eval(closed: Any, unknowns: Sequence[bool]) -> str:
    from lamina_core.interpreters.partial_eval import partial_eval_jaxpr_nounits

    known, unknown, out_unknowns, _ = partial_eval_jaxpr_nounits(
        closed, list(unknowns), instantiate=False
    )
    return f"{known}\n{unknown}\n{out_unknowns}"


def _jax_dce(closed: Any, used_outputs: Sequence[bool]) -> str:
    from jax._src import core
    from jax._src.interpreters import partial_eval as pe

    jaxpr, used_inputs = pe.dce_jaxpr(closed.jaxpr, list(used_outputs))
    return f"{core.ClosedJaxpr(jaxpr, closed.consts)}\n{used_inputs}"


def _lamina_dce(closed: Any, used_outputs: Sequence[bool]) -> str:
    from lamina_core.interpreters.dce import dce_jaxpr
    from lamina_core.ir._jaxpr import ClosedJaxpr

    jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, list(used_outputs), prune_invars=True)
    return f"{ClosedJaxpr(jaxpr, closed.consts)}\n{used_inputs}"


def jax_namespace(jax: ModuleType) -> SimpleNamespace:
    from jax.sharding import Mesh, PartitionSpec

    return SimpleNamespace(
        name="jax",
        jnp=jax.numpy,
        lax=jax.lax,
        shard_map=jax.shard_map,
        P=PartitionSpec,
        grad=jax.grad,
        vjp=jax.vjp,
        jvp=jax.jvp,
        linearize=jax.linearize,
        vmap=jax.vmap,
        jit=jax.jit,
        checkpoint=jax.checkpoint,
        make_jaxpr=jax.make_jaxpr,
        asarray=jax.numpy.asarray,
        partial_eval=_jax_partial_eval,
        dce=_jax_dce,
        mesh=_mesh_factory(Mesh, jax.devices()),
    )


def lamina_namespace() -> SimpleNamespace:
    import lamina_core
    from lamina_core.ir._mesh import Mesh
    from lamina_core.ir._partition_spec import PartitionSpec
    from lamina_core.sharding._shard_map import shard_map

    devices: Sequence[Any] = [StandInDevice(i) for i in range(DEVICES)]
    jax = sys.modules.get("jax")
    if jax is not None and jax.device_count() >= DEVICES:
        devices = jax.devices()
    return SimpleNamespace(
        name="lamina",
        jnp=lamina_core.numpy,
        lax=lamina_core.lax,
        shard_map=shard_map,
        P=PartitionSpec,
        grad=lamina_core.grad,
        vjp=lamina_core.vjp,
        jvp=lamina_core.jvp,
        linearize=lamina_core.linearize,
        vmap=lamina_core.vmap,
        jit=lamina_core.jit,
        checkpoint=lamina_core.checkpoint,
        make_jaxpr=lamina_core.make_jaxpr,
        asarray=lambda x: x,
        partial_eval=_lamina_partial_eval,
        dce=_lamina_dce,
        mesh=_mesh_factory(Mesh, devices),
    )


def run_case(ns: SimpleNamespace, case: Case, leaves: Callable[[Any], list[Any]]) -> Result:
    program, args = case(ns)
    if isinstance(program, str):  # a case that prints something else than make_jaxpr
        return program, []
    args = tuple(ns.asarray(a) for a in args)
    text = str(ns.make_jaxpr(program)(*args))
    # JAX compiles the whole program once (eagerly, each shard_map would compile alone).
    run = ns.jit(program) if ns.name == "jax" else program
    values = [np.asarray(v) for v in leaves(run(*args))]
    return text, values


def _jax_leaves(jax: ModuleType) -> Callable[[Any], list[Any]]:
    def leaves(tree: Any) -> list[Any]:
        return list(jax.tree_util.tree_leaves(tree))

    return leaves


def lamina_leaves(tree: Any) -> list[Any]:
    from lamina_core import tree_util

    return list(tree_util.tree_leaves(tree))


def _load(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_results: dict[str, dict[str, Result]] = {}


def jax_results(test_file: str, cases: dict[str, Case]) -> dict[str, Result]:
    """JAX's text and values for every case of `test_file` (computed once per process)."""
    if test_file in _results:
        return _results[test_file]
    import jax

    if jax.device_count() >= DEVICES:
        out = _run_all(jax, cases)
    else:
        env = dict(os.environ)
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={DEVICES}"
        env["JAX_PLATFORMS"] = "cpu"
        env["JAX_USE_SIMPLIFIED_JAXPR_CONSTANTS"] = "True"
        proc = subprocess.run(
            [sys.executable, __file__, test_file],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"JAX subprocess failed:\n{proc.stderr}")
        out = pickle.loads(base64.b64decode(proc.stdout.strip().splitlines()[-1]))
    _results[test_file] = out
    return out


def _run_all(jax: ModuleType, cases: dict[str, Case]) -> dict[str, Result]:
    ns = jax_namespace(jax)
    out: dict[str, Result] = {}
    for name, case in cases.items():
        try:
            out[name] = run_case(ns, case, _jax_leaves(jax))
        except Exception as err:  # reported by the test of that case
            out[name] = (f"JAX raised {type(err).__name__}: {err}", [])
    return out


def _main(test_file: str) -> None:
    import jax

    assert jax.device_count() >= DEVICES, jax.devices()
    module = _load(test_file, "shard_map_cases_" + Path(test_file).stem)
    cases: dict[str, Case] = module.CASES
    out = _run_all(jax, cases)
    print(base64.b64encode(pickle.dumps(out)).decode())


def check_error(name: str, case: Case, theirs: Result) -> str:
    """Lamina raises JAX's error (type and message) for `case`; returns the message."""
    try:
        ours = run_case(lamina_namespace(), case, lamina_leaves)
    except Exception as err:
        message = f"JAX raised {type(err).__name__}: {err}"
    else:
        raise AssertionError(f"{name}: Lamina raised nothing, printed\n{ours[0]}")
    assert message == theirs[0], f"{name}\n--- lamina ---\n{message}\n--- jax ---\n{theirs[0]}"
    return message


def check_case(name: str, case: Case, theirs: Result, *, printed: bool = True) -> Result:
    """Lamina's text and values for `case` against JAX's `theirs`; returns Lamina's."""
    ours = run_case(lamina_namespace(), case, lamina_leaves)
    if printed:
        assert ours[0] == theirs[0], f"{name}\n--- lamina ---\n{ours[0]}\n--- jax ---\n{theirs[0]}"
    assert len(ours[1]) == len(theirs[1]), (name, theirs[0])
    for got, want in zip(ours[1], theirs[1], strict=True):
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        tol = 0.0 if want.dtype.kind in "biu" else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
    return ours


if __name__ == "__main__":
    _main(sys.argv[1])
