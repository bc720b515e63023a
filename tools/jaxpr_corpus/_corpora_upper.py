"""The umbrella's jaxpr test corpora as `Program`s: the control-flow corpus with its
transformations, the sharded programs (on 8 devices), the Refs and hijax programs.

Programs here are traced by `lamina.make_jaxpr` (the configured constants mode), as their
tests trace them; those that need 8 devices raise `NeedsDevices` in a process with fewer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

import lamina
from lamina import jaxpr_io
from tools.jaxpr_corpus._programs import (
    Program,
    Traced,
    load_test_module,
    traced,
    vmap_program,
)

UMBRELLA = "lamina"


def _mod(name: str) -> ModuleType:
    return load_test_module(UMBRELLA, name)


def _tracer(f: Callable[..., Any], args: tuple[Any, ...]) -> Callable[[], Traced]:
    return lambda: traced(f, args, lamina.make_jaxpr)


def control_flow() -> list[Program]:
    """`control_flow_programs.py` as `test_control_flow_corpus` runs it: each program, the
    grad of its float outputs' sum (first argument floating), the jvp along its float
    arguments, and its vmap over a batch of 3."""
    test = _mod("test_control_flow_corpus")
    out: list[Program] = []
    where = "control_flow_programs.PROGRAMS"
    for p in test.PROGRAMS:
        f = test._bound(lamina, p)
        out.append(Program("control-flow", where, p.name, _tracer(f, p.args)))
        if p in test.DIFFERENTIABLE:
            g = lamina.grad(test._loss(lamina, p))
            out.append(Program("control-flow", where, p.name, _tracer(g, p.args), "grad"))
        if p in test.WITH_FLOATS:
            out.append(Program("control-flow", where, p.name, _jvp(test, p), "jvp"))
        batched = test._batched_args(p.args)
        out.append(
            vmap_program("control-flow", where, p.name, f, batched, lamina.vmap, lamina.make_jaxpr)
        )
    return out


def _jvp(test: ModuleType, p: Any) -> Callable[[], Traced]:
    def build() -> Traced:
        jvp, args = test._jvp(lamina, p)
        return traced(jvp, args, lamina.make_jaxpr)

    return build


def sharding() -> list[Program]:
    """The sharded programs, the Explicit-axes programs, the programs traced under a mesh in
    context (Auto and Explicit) and the Auto/Manual sharding-in-types programs."""
    out: list[Program] = []
    sharded = _mod("test_sharded_programs")
    for name, program in sharded.PROGRAMS.items():
        out.append(Program("sharding", "sharded_programs.PROGRAMS", name, _side(program, sharded)))
    explicit = _mod("test_sharding_explicit")
    for name, program in explicit.PROGRAMS.items():
        where = "test_sharding_explicit.PROGRAMS"
        out.append(Program("sharding", where, name, _side(program, explicit, in_context=True)))
    context = _mod("test_sharding_context_mesh")
    for kind in ("Auto", "Explicit"):
        for name, program in context.PROGRAMS.items():
            where = f"test_sharding_context_mesh.PROGRAMS[{kind}]"
            out.append(Program("sharding", where, name, _in_context(context, kind, program)))
    in_types = _mod("test_sharding_in_types")
    for name in in_types.NAMES:
        where = "test_sharding_in_types._programs"
        out.append(Program("sharding", where, name, _in_types(in_types, name)))
    return out


def _side(
    program: Callable[[Any], Any], test: ModuleType, in_context: bool = False
) -> Callable[[], Traced]:
    def build() -> Traced:
        f, args = program(test.LAMINA)
        made = traced(f, args, lamina.make_jaxpr)
        return replace(made, mesh=test.LAMINA.mesh if in_context else _mesh_of(args))

    return build


def _mesh_of(args: Any) -> Any:
    """The mesh an argument is split over, if any (its types may print over it)."""
    for leaf in lamina.tree_util.tree_leaves(args):
        mesh = getattr(getattr(leaf, "sharding", None), "mesh", None)
        if mesh is not None:
            return mesh
    return None


def _in_context(test: ModuleType, kind: str, program: Any) -> Callable[[], Traced]:
    def build() -> Traced:
        mesh = test._mesh(lamina, kind)
        with lamina.set_mesh(mesh):
            return Traced(program(lamina, lamina.numpy), None, mesh)

    return build


def _in_types(test: ModuleType, name: str) -> Callable[[], Traced]:
    def build() -> Traced:
        f, args = test._programs("lamina")[name]
        return traced(f, args, lamina.make_jaxpr)

    return build


def refs() -> list[Program]:
    """The Refs programs compared with JAX's text (each gives one jaxpr or several)."""
    test = _mod("test_refs_xla")
    out: list[Program] = []
    for name, program in test.PRINTED:
        made = program(lamina)
        count = len(made) if isinstance(made, tuple) else 1
        for k in range(count):
            label = f"{name}#{k}" if count > 1 else name
            out.append(Program("refs", "test_refs_xla.PRINTED", label, _nth(program, k, count)))
    return out


def _nth(program: Callable[[Any], Any], k: int, count: int) -> Callable[[], Traced]:
    def build() -> Traced:
        made = program(lamina)
        return Traced(made[k] if count > 1 else made, None)

    return build


@functools.cache
def _qarray() -> tuple[ModuleType, dict[str, Any]]:
    """Seed 003's quantized array, defined once per process (its types register by name)."""
    import lamina.experimental.hijax as hijax

    test = _mod("test_hijax_xla")
    qarray = test.make_qarray(lamina, hijax)
    # Its type prints `q8[2,3]`; the test module defines it in a factory, so the reader a
    # user would register beside it is registered here, over the class the factory made.
    quantized = lamina.make_jaxpr(qarray["q"])(np.ones((2, 3), np.float32))
    q8 = type(quantized.jaxpr.outvars[0].aval)

    def read_q8(text: str) -> Any:
        m = re.fullmatch(r"q8\[([\d,]*)\]", text)
        if m is None:
            raise ValueError(f"expected q8[dims], found {text!r}")
        return q8(tuple(int(d) for d in m[1].split(",") if d))

    jaxpr_io.register_type_reader("q8", read_q8)
    return test, qarray


def hijax() -> list[Program]:
    """The quantized-array programs compared with JAX's hijax."""
    test, qarray = _qarray()
    names = test._programs(lamina, qarray)
    return [Program("hijax", "test_hijax_xla._programs", n, _hi(n)) for n in names]


def _hi(name: str) -> Callable[[], Traced]:
    def build() -> Traced:
        test, qarray = _qarray()
        f, arg = test._programs(lamina, qarray)[name]
        return traced(f, (arg,), lamina.make_jaxpr)

    return build
