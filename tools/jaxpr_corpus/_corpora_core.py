"""lamina-core's jaxpr test corpora as `Program`s: golden texts, autodiff, control flow, vmap,
random, and the shard_map harness's cases.

Each gatherer imports the test modules that own a table and builds the table's programs as
those tests build them (`program(jnp, lax)` with Lamina's modules, the same arguments), with
the transformations the tests apply: `check_ad`'s jvp/grad/grad(jit), the vmap corpus's
batching, the Jacobians corpus's jacfwd/jacrev/hessian.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import lamina_core as lc
from lamina_core import random as lr
from lamina_core.ir import dtypes
from tools.jaxpr_corpus._programs import (
    Program,
    Traced,
    ad_transforms,
    is_array_like,
    load_test_module,
    traced,
    vmap_program,
)

CORE = "lamina-core"


def _mod(name: str) -> ModuleType:
    return load_test_module(CORE, name)


def _jnp_lax(program: Callable[..., Any]) -> Callable[..., Any]:
    f: Callable[..., Any] = program(lc.numpy, lc.lax)
    return f


def _with_transforms(
    corpus: str, table: str, name: str, f: Callable[..., Any], args: tuple[Any, ...], k: int
) -> list[Program]:
    """The program, its jvp/grad/grad(jit) as `check_ad` builds them, and its vmap batched
    as the vmap corpus batches case number `k`."""
    batch = _mod("test_vmap_corpus")._batched
    programs = [Program(corpus, table, name, lambda: traced(f, args))]
    programs += ad_transforms(corpus, table, name, f, args)

    def batched() -> Traced:
        xs, in_axes = batch(k, args)
        return traced(lc.vmap(f, in_axes=in_axes), xs)

    if args and all(map(is_array_like, args)):  # the vmap corpus batches flat arguments
        programs.append(Program(corpus, table, name, batched, "vmap"))
    return programs


def golden() -> list[Program]:
    """The printed-text oracle corpus (`make_jaxpr` against JAX's text) and the reader's own
    corpus, with their transformations."""
    out: list[Program] = []
    oracle = _mod("test_make_jaxpr_oracle")
    for k, (name, program, args) in enumerate(oracle.CASES):
        f = _jnp_lax(program)
        out += _with_transforms("golden", "test_make_jaxpr_oracle.CASES", name, f, args, k)
    io = _mod("test_jaxpr_io")
    for k, (name, (f, args)) in enumerate(io.CORPUS.items()):
        out += _with_transforms("golden", "test_jaxpr_io.CORPUS", name, f, args, k)
    return out


def autodiff() -> list[Program]:
    """The AD corpora with what `check_ad` traces of each; the custom-rule and checkpoint
    tables, whose programs are transformations already."""
    out: list[Program] = []
    tables = [
        ("test_ad_core", "CASES"),
        ("test_ad_elementwise", "CASES"),
        ("test_ad_elementwise", "COMPLEX"),
        ("test_ad_structural", "ALL"),
        ("test_ad_indexing", "CASES"),
    ]
    for module, table in tables:
        for name, program, args in getattr(_mod(module), table):
            f = _jnp_lax(program)
            where = f"{module}.{table}"
            out.append(Program("autodiff", where, name, _tracer(f, args)))
            out += ad_transforms("autodiff", where, name, f, args)
    custom = _mod("test_ad_custom")
    for name, make, args in custom.PRINTED:
        f = make(lc, lc.numpy)
        out.append(Program("autodiff", "test_ad_custom.PRINTED", name, _tracer(f, args)))
    remat = _mod("test_ad_checkpoint")
    api = remat.Api(lc, lc.numpy, lc.checkpoint_name)
    for name, (make, args) in remat.CASES.items():
        where = "test_ad_checkpoint.CASES"
        out.append(Program("autodiff", where, name, _tracer(make(api), args)))
    return out


def _tracer(f: Callable[..., Any], args: tuple[Any, ...]) -> Callable[[], Traced]:
    return lambda: traced(f, args)


def control_flow() -> list[Program]:
    """lamina-core's control-flow tables: the API cases with their transformations, the grad
    cases as `test_control_flow_grad` differentiates them (and under jit), the jvp cases
    with that test's tangents."""
    out: list[Program] = []
    api = _mod("test_control_flow_api")
    for k, (name, (program, args)) in enumerate(api.CASES.items()):
        f = _jnp_lax(program)
        out += _with_transforms("control-flow", "test_control_flow_api.CASES", name, f, args, k)
    grad = _mod("test_control_flow_grad")
    where = "test_control_flow_grad.CASES"
    for name, (program, args) in grad.CASES.items():
        g = grad._grad(lc, lc.numpy, lc.lax, name)
        out.append(Program("control-flow", where, name, _tracer(_jnp_lax(program), args)))
        out.append(Program("control-flow", where, name, _tracer(g, args), "grad"))
        out.append(Program("control-flow", where, name, _tracer(lc.jit(g), args), "jit_grad"))
    jvp = _mod("test_control_flow_jvp")
    where = "test_control_flow_jvp.CASES"
    for name, (program, args) in jvp.CASES.items():
        f = _jnp_lax(program)
        ts = jvp._tangents(args, dtypes.float0)
        out.append(Program("control-flow", where, name, _tracer(f, args)))
        out.append(Program("control-flow", where, name, _tracer(_jvp_at(f, ts), args), "jvp"))
    return out


def _jvp_at(f: Callable[..., Any], tangents: tuple[Any, ...]) -> Callable[..., Any]:
    return lambda *a: lc.jvp(f, a, tangents)


def vmap() -> list[Program]:
    """The vmap tables: the AD corpora batched (the vmap corpus) and their Jacobians, the
    core, structural, indexing, control-flow, Jacobian and collective tables."""
    out: list[Program] = []
    corpus = _mod("test_vmap_corpus")
    for k, (name, program, args) in enumerate(corpus.CORPUS):
        xs, in_axes = corpus._batched(k, args)
        f = _jnp_lax(program)
        out.append(vmap_program("vmap", "test_vmap_corpus.CORPUS", name, f, xs, in_axes=in_axes))
    out += _jacobians()
    five = [
        ("test_vmap_core", "CASES"),
        ("test_vmap_indexing", "LAX_CASES"),
        ("test_vmap_indexing", "JNP_CASES"),
        ("test_vmap_collectives", "CASES"),
    ]
    for module, table in five:
        named = {"axis_name": "i"} if module == "test_vmap_collectives" else {}
        for name, program, args, in_axes, out_axes in getattr(_mod(module), table):
            f = _jnp_lax(program)
            kw = {"in_axes": in_axes, "out_axes": out_axes, **named}
            out.append(vmap_program("vmap", f"{module}.{table}", name, f, args, **kw))
    for c in _mod("test_vmap_structural").CASES:
        f = _jnp_lax(c.program)
        kw = {"in_axes": c.in_axes, "out_axes": c.out_axes}
        out.append(vmap_program("vmap", "test_vmap_structural.CASES", c.name, f, c.args, **kw))
    no_oracle = SimpleNamespace(jax=None, jnp=None)  # the tables' `_api` picks Lamina's then
    for name, program, args, in_axes in _mod("test_vmap_indexing").NESTED_CASES:
        f = _jnp_lax(program(no_oracle))
        where = "test_vmap_indexing.NESTED_CASES"
        out.append(vmap_program("vmap", where, name, f, args, in_axes=in_axes))
    cf = _mod("test_vmap_control_flow")
    for table in ("COND", "SCAN", "WHILE", "NAMED"):
        named = {"axis_name": "i"} if table == "NAMED" else {}
        for name, program, args, in_axes, out_axes in getattr(cf, table):
            f = program(lc, lc.numpy, lc.lax)
            kw = {"in_axes": in_axes, "out_axes": out_axes, **named}
            out.append(vmap_program("vmap", f"test_vmap_control_flow.{table}", name, f, args, **kw))
    shared = cf.arr(3, 4, lo=0.5, hi=3.0)  # as `test_a_body_used_twice_is_batched_once`
    for name, program in cf.SHARED_BODIES.items():
        where = "test_vmap_control_flow.SHARED_BODIES"
        out.append(vmap_program("vmap", where, name, _jnp_lax(program), (shared,)))
    tr = _mod("test_vmap_transforms")
    for table, kinds in (("FUNS", ("jacfwd", "jacrev")), ("HESS", ("hessian",))):
        for name, make, args, _ in getattr(tr, table):
            for kind in kinds:
                t = getattr(lc, kind)(make(lc.numpy))
                where = f"test_vmap_transforms.{table}"
                out.append(Program("vmap", where, name, _tracer(t, args), kind))
    col = _mod("test_vmap_collectives")
    for table in ("NESTED", "GRADS"):
        for name, program, args in getattr(col, table):
            f = program(lc, lc.lax)
            where = f"test_vmap_collectives.{table}"
            out.append(vmap_program("vmap", where, name, f, args, axis_name="i"))
    return out


def _jacobians() -> list[Program]:
    """The Jacobians corpus: jacfwd and jacrev (and hessian, for scalar outputs) along the
    float32 arguments of every AD program."""
    jac = _mod("test_vmap_jacobians_corpus")
    out: list[Program] = []
    for name, program, args in jac.CORPUS:
        argnums = jac._float_argnums(args)
        if not argnums:
            continue
        f = _jnp_lax(program)
        kinds = ["jacfwd", "jacrev"]
        try:
            avals = lc.make_jaxpr(f)(*args).out_avals
        except Exception:  # reported by the base program's own check
            continue
        if len(avals) == 1 and avals[0].shape == ():
            kinds.append("hessian")
        for kind in kinds:
            t = getattr(lc, kind)(f, argnums=argnums)
            where = "test_vmap_jacobians_corpus.CORPUS"
            out.append(Program("vmap", where, name, _tracer(t, args), kind))
    return out


def random() -> list[Program]:
    """The random tables: programs of keys as the tests trace them, draws of one key, and
    each draw batched over three keys."""
    out: list[Program] = []
    for module in ("test_random_core", "test_random_inline"):
        table = "PRINTED" if module == "test_random_core" else "CASES"
        for name, make, args in getattr(_mod(module), table):
            f, xs = make(lr), args(lr)
            out.append(Program("random", f"{module}.{table}", name, _tracer(f, xs)))
            out += ad_transforms("random", f"{module}.{table}", name, f, xs)
    more = _mod("test_random_more")
    for name, make, args in more.PRINTED:
        xs = (lr.key(0), *args)
        out.append(Program("random", "test_random_more.PRINTED", name, _tracer(make(lr), xs)))
    core = _mod("test_random_core")
    for name, draw, arg in core.WITH_ARRAY:
        f = _draw_with(draw, arg)
        out += _draws("test_random_core.WITH_ARRAY", name, f, lr.key(0))
    draws: list[tuple[str, list[Any]]] = [
        ("test_random_core.SAMPLERS", core.SAMPLERS),
        ("test_random_more.VALUES", [getattr(v, "values", v) for v in more.VALUES]),
        ("test_random_linalg.CASES", _mod("test_random_linalg").CASES),
        ("test_random_more.LAYOUT", more.LAYOUT),
    ]
    for where, entries in draws:
        for name, sample in entries:
            out += _draws(where, name, _draw(sample), lr.key(0))
    for impl in ("rbg", "unsafe_rbg"):
        for name, draw in more.RBG:
            out += _draws(f"test_random_more.RBG[{impl}]", name, _draw(draw), lr.key(3, impl=impl))
    return out


def _draw(draw: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    return lambda k: draw(lr, k)


def _draw_with(draw: Callable[[Any, Any, Any], Any], arg: Any) -> Callable[[Any], Any]:
    return lambda k: draw(lr, k, arg)


def _draws(where: str, name: str, f: Callable[[Any], Any], key: Any) -> list[Program]:
    keys = lr.split(key, 3)
    return [
        Program("random", where, name, _tracer(f, (key,))),
        vmap_program("random", where, name, f, (keys,)),
    ]


def shard_map() -> list[Program]:
    """The shard_map harness's cases (staging, AD, batching, vma), built with Lamina's
    namespace; the error cases and those that print something else are left out."""
    out: list[Program] = []
    for module in ("test_shard_map", "test_shard_map_ad", "test_shard_map_batching"):
        out += _shard_map_cases(module)
    out += _shard_map_cases("test_shard_map_vma")
    return out


def _shard_map_cases(module: str) -> list[Program]:
    m = _mod(module)
    harness = m.H
    out = []
    for name, case in m.CASES.items():
        if name.startswith("error"):
            continue
        out.append(Program("sharding", f"{module}.CASES", name, _shard_map_case(harness, case)))
    return out


def _shard_map_case(harness: Any, case: Callable[[Any], Any]) -> Callable[[], Traced]:
    def build() -> Traced:
        program, args = case(harness.lamina_namespace())
        if isinstance(program, str):
            raise _PrintsText("the case prints something else than a traced program")
        return traced(program, args)

    return build


class _PrintsText(Exception):
    """A table entry that is no program (a case printing partial-eval or DCE results)."""
