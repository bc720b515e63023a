"""Eager execution on XLA: each primitive applied outside any transformation runs as its own
small compiled program.

Installing this evaluator (lamina-runtime does it at import, through core's public hook)
replaces core's NumPy reference evaluator. Programs are cached by (primitive, params, input
types); a `jit` call's program carries its callee's constants as device buffers, put on the
device once per traced callee.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lamina_consts import jaxpr_const_args
from lamina_core import dtypes, tree_util
from lamina_core.interpreters import with_input_mesh
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    NamedSharding,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    body_evaluated_primitives,
    concrete_avals_qdd,
    effects_rules,
    evaluated_on_values,
    host_effect_types,
    impl_rules,
    no_effects,
    python_impl_primitives,
    qdd_primitives,
    value_impl_rules,
)
from lamina_core.trace import EagerImpl, canonical_value, is_hi_value, reference_impl, typeof
from lamina_core.transforms import Staged, jit_p
from lamina_hijax import is_high, to_lojax
from lamina_mlir import lower_jaxpr_to_module
from lamina_refs import Ref, discharge_state, has_refs
from lamina_runtime import _bridge_devices, _bridge_executables, guards, special_values
from lamina_runtime import sharding as shardings
from lamina_runtime._jit_mutable import (
    applies_to_mutable,
    apply_mutable,
    call_mutable,
    jit_takes_mutable,
)
from lamina_runtime._lru import LRUCache
from lamina_runtime.array import Array, to_buffer
from lamina_runtime.executable import Executable, runtime
from lamina_runtime.pipeline import CompiledCall, Placement, compile_staged
from lamina_runtime.structural_key import holds_jaxprs, params_key


@dataclass(eq=False)
class EagerProgram:
    """One primitive application, compiled, with its constants on the device."""

    executable: Executable
    const_bufs: list[Any]
    multiple_results: bool
    run: Callable[[list[Any]], list[Any]]
    sharding: Any
    """The single-device sharding its inputs must have."""


def single_equation_jaxpr(prim: Primitive, avals: Sequence[AbstractValue],
                          params: dict[str, Any], *, on_mesh: bool = False) -> Jaxpr:  # fmt: skip
    """The jaxpr of one application of `prim`. `on_mesh`: it runs partitioned over a mesh,
    where results over Explicit axes are typed (and placed) as staging types them."""
    invars = [Var(a) for a in avals]
    out = abstract_eval_rules[prim](*avals, **params)
    if on_mesh and any(
        (m := getattr(a, "mesh", None)) is not None and m.has_explicit for a in avals
    ):
        out = with_input_mesh(prim, avals, out, params)
    out_avals: list[AbstractValue] = list(out) if prim.multiple_results else [out]  # type: ignore[arg-type, list-item]  # shape follows multiple_results
    outvars = [Var(a) for a in out_avals]
    effects_rule = effects_rules.get(prim)
    effects = no_effects if effects_rule is None else effects_rule(*avals, **params)
    eqn = JaxprEqn(tuple(invars), tuple(outvars), prim, params, effects)
    return Jaxpr((), invars, outvars, [eqn], effects)


class XlaEager:
    """The eager evaluator lamina-runtime installs. Identity is intended: it owns its cache."""

    def __init__(self) -> None:
        self._programs: LRUCache[Hashable, EagerProgram] = LRUCache()
        self._by_aval_id: LRUCache[Hashable, tuple[EagerProgram, tuple[Any, ...]]] = LRUCache()
        self._ref_calls: LRUCache[Hashable, CompiledCall] = LRUCache()
        self._on_mesh: LRUCache[Hashable, tuple[Executable, list[Any]]] = LRUCache()
        """Programs partitioned over a mesh, by operand types and shardings."""
        """Programs of primitives applied to eager Refs (see `_run_with_refs`)."""
        """Programs keyed by the identity of their operands' avals (device arrays made by one
        program share aval objects); the entry keeps those avals alive so ids stay unique."""

    def clear(self) -> None:
        """Forget every compiled program (they are compiled again when next needed)."""
        self._programs.clear()
        self._by_aval_id.clear()
        self._ref_calls.clear()
        self._on_mesh.clear()

    def _fast_program(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> tuple[EagerProgram, list[Any]] | None:
        bufs: list[Any] = []
        ids: list[int] = []
        for x in args:
            if type(x) is not Array:
                return None
            ids.append(id(x.aval))
            bufs.append(x._buf)
        try:
            entry = self._by_aval_id.get((prim, tuple(params.items()), *ids))
        except TypeError:
            return None
        if entry is None:
            return None
        program = entry[0]
        sharding = program.sharding
        for buf in bufs:
            if buf.sharding is not sharding:
                return None  # misplaced input: the general path moves it
        return program, [*program.const_bufs, *bufs]

    def _remember(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any], program: EagerProgram
    ) -> None:
        avals = tuple(x.aval for x in args)
        try:
            key = (prim, tuple(params.items()), *map(id, avals))
            self._by_aval_id[key] = (program, avals)
        except TypeError:
            pass

    def _run_staged(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """`prim` on operands some of which are Refs or hi values, compiled as a jitted call:
        Refs discharged, their buffers updated in place (a write of an eager Ref is an
        in-place update too); hi values lowered to their arrays and results raised. A Ref
        passed at several operands (a loop's condition and body both reading it) is one input
        of the program."""
        first: dict[int, int] = {}
        slots = [first.setdefault(id(x), i) if type(x) is Ref else i for i, x in enumerate(args)]
        distinct = [x for i, x in enumerate(args) if slots[i] == i]
        avals = tuple(typeof(x) for x in args)
        placement = _placement_of(prim, distinct)
        try:
            key: Hashable | None = ("refs", prim, avals, tuple(slots), _key_of(params), placement)
            call = self._ref_calls.get(key)
        except TypeError:
            key, call = None, None
        if call is None:
            jaxpr = single_equation_jaxpr(prim, avals, params)
            eqn = jaxpr.eqns[0]
            eqn = eqn.replace(invars=tuple(eqn.invars[k] for k in slots))
            invars = [v for i, v in enumerate(jaxpr.invars) if slots[i] == i]
            jaxpr = jaxpr.replace(invars=invars, eqns=[eqn])
            staged = Staged(
                ClosedJaxpr(jaxpr, []),
                tree_util.tree_structure([0] * len(jaxpr.outvars)),
                (False,) * len(invars),
            )
            call = compile_staged(staged, prim.name, keep_unused=True, placement=placement)
            if key is not None:
                self._ref_calls[key] = call
        outs = call(distinct)
        return outs if prim.multiple_results else outs[0]

    def _run_on_mesh(
        self,
        prim: Primitive,
        args: Sequence[Any],
        avals: tuple[AbstractValue, ...],
        params: dict[str, Any],
    ) -> Any:
        """`prim` on operands some of which are placed over several devices: one program
        partitioned over their mesh (others are replicated onto it)."""
        placed = [
            shardings.of_jax(x._buf.sharding)
            if type(x) is Array and not _bridge_devices.is_single_device(x._buf)
            else None
            for x in args
        ]
        pairs = enumerate(zip(avals, placed, strict=True))
        named = [(f"argument {i} of {prim.name}", a, s) for i, (a, s) in pairs]
        mesh = shardings.find_mesh(named)
        if mesh is None:  # placed over one-device meshes only: as values on that device
            return _ONE_DEVICE
        in_shardings = [
            s if isinstance(s, NamedSharding) and s.mesh == mesh else None for s in placed
        ]
        try:
            key: Hashable | None = (prim, avals, _key_of(params), tuple(in_shardings))
            known = self._on_mesh.get(key)
        except TypeError:
            key, known = None, None
        if known is None:
            jaxpr = single_equation_jaxpr(prim, avals, params, on_mesh=True)
            if is_high(jaxpr):  # hi types inside (a hi primitive in a shard_map's body)
                if any(v.aval.is_high for v in jaxpr.outvars):
                    return self._run_staged(prim, args, params)  # which raises its results
                jaxpr = to_lojax(jaxpr)
            if has_refs(jaxpr):
                jaxpr = discharge_state(jaxpr)
            const_args = jaxpr_const_args(jaxpr)
            lowered = lower_jaxpr_to_module(
                jaxpr,
                module_name=prim.name,
                const_args=const_args,
                mesh=mesh,
                arg_shardings=[None if s is None else s.spec for s in in_shardings],
            )
            consts = [None] * len(const_args)
            executable = runtime().compile(lowered, in_shardings=[*consts, *in_shardings])
            known = (executable, executable.put_consts(const_args.values))
            if key is not None:
                self._on_mesh[key] = known
        executable, const_bufs = known
        outs = executable.run(const_bufs, args)
        return outs if prim.multiple_results else outs[0]

    def program(
        self, prim: Primitive, avals: tuple[AbstractValue, ...], params: dict[str, Any]
    ) -> EagerProgram | None:
        """The compiled program of `prim` on values of types `avals` (None: its results are
        hi-typed, see `_run_staged`)."""
        # Params arrive in the same keyword order from the same call site, so their items
        # (unsorted) make a good key; unhashable params (rare) are compiled every time.
        try:
            # The device too, when `jax_default_device` names one: programs are per device.
            key: Hashable | None = (prim, avals, _key_of(params), guards.configured_device())
            known = self._programs.get(key)
        except TypeError:
            key, known = None, None
        if known is not None:
            return known
        jaxpr = single_equation_jaxpr(prim, avals, params)
        if is_high(jaxpr):
            if any(v.aval.is_high for v in jaxpr.outvars):
                return None  # hi results: run as a staged call, which raises them
            jaxpr = to_lojax(jaxpr)  # hi types used inside only: arrays in and out
        if has_refs(jaxpr):  # a call using Refs internally: pure, once they are values
            jaxpr = discharge_state(jaxpr)
        const_args = jaxpr_const_args(jaxpr)
        lowered = lower_jaxpr_to_module(jaxpr, module_name=prim.name, const_args=const_args)
        executable = runtime().compile(lowered)
        program = EagerProgram(
            executable,
            executable.put_consts(const_args.values),
            prim.multiple_results,
            _bridge_executables.executor(executable.loaded, executable.handlers),
            _bridge_devices.single_device_sharding(executable.device),
        )
        if key is not None:
            self._programs[key] = program
        return program

    def __call__(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        fast = self._fast_program(prim, args, params)
        if fast is not None:
            program, bufs = fast
        else:
            if prim is jit_p and jit_takes_mutable(params["jaxpr"]):  # boxes: see there
                return call_mutable(params["jaxpr"], args, params["name"])
            if applies_to_mutable(prim, args):
                return apply_mutable(prim, args, params)
            if prim in python_impl_primitives:  # JAX's `def_impl`: the Python function alone
                return value_impl_rules[prim](*args, **params)
            if prim in evaluated_on_values:
                avals_in = [typeof(x) for x in args]
                if prim in qdd_primitives:
                    avals_in = concrete_avals_qdd(avals_in, args)
                abstract_eval_rules[prim](*avals_in, **params)  # the checks
                return value_impl_rules[prim](*args, **params)
            if any(type(x) is Ref or is_hi_value(x) for x in args):
                return self._run_staged(prim, args, params)
            avals = tuple([x.aval if type(x) is Array else typeof(x) for x in args])
            if prim in body_evaluated_primitives and _has_host_effect(prim, avals, params):
                return impl_rules[prim](*args, **params)  # its body, equation by equation
            if any(getattr(a, "dtype", None) == dtypes.float0 for a in avals):
                # float0 (the tangent type of integers) has no device representation: such
                # values stay host values, as in JAX, computed by the NumPy reference.
                return reference_impl(prim, args, params)
            if any(type(x) is Array and not _bridge_devices.is_single_device(x._buf) for x in args):
                on_mesh = self._run_on_mesh(prim, args, avals, params)
                if on_mesh is not _ONE_DEVICE:
                    return on_mesh
            found = self.program(prim, avals, params)
            if found is None:
                return self._run_staged(prim, args, params)
            program = found
            if program.executable.mesh is not None:  # a program on a mesh (shard_map)
                placed = program.executable.run(program.const_bufs, args)
                return placed if program.multiple_results else placed[0]
            device = program.executable.device
            bufs = program.const_bufs.copy()
            for x, aval in zip(args, avals, strict=True):
                bufs.append(_to_device(x, aval, device))
            if all(type(x) is Array for x in args):
                self._remember(prim, args, params, program)
        executable = program.executable
        guards.check_execution_allowed(f"jit({prim.name})")
        outs = program.run(bufs)
        wrap = Array._wrap
        if special_values.checking():
            special_values.check_primitive_outputs(prim, args, params, outs)
        if not program.multiple_results:
            return wrap(outs[0], executable.out_avals[0])
        return [wrap(o, a) for o, a in zip(outs, executable.out_avals, strict=True)]


def _placement_of(prim: Primitive, args: Sequence[Any]) -> Placement | None:
    """Where a call of `prim` on `args` (some Refs) runs: on the mesh of the arrays placed over
    several devices among them and the Refs' values (a Ref keeps its value's placement), or
    None (one device)."""
    held = [x._value if type(x) is Ref else x for x in args]
    placed = [
        shardings.of_jax(h._buf.sharding)
        if type(h) is Array and not _bridge_devices.is_single_device(h._buf)
        else None
        for h in held
    ]
    if not any(placed):
        return None
    named = [
        (f"argument {i} of {prim.name}", typeof(h), s)
        for i, (h, s) in enumerate(zip(held, placed, strict=True))
    ]
    mesh = shardings.find_mesh(named)
    if mesh is None:
        return None
    return Placement(
        mesh, tuple(s if isinstance(s, NamedSharding) and s.mesh == mesh else None for s in placed)
    )


def _has_host_effect(
    prim: Primitive, avals: Sequence[AbstractValue], params: dict[str, Any]
) -> bool:
    rule = effects_rules.get(prim)
    effects = no_effects if rule is None else rule(*avals, **params)
    return any(type(e) in host_effect_types for e in effects)


_ONE_DEVICE: Final = object()
"""What `_run_on_mesh` answers for operands whose meshes have one device each."""


def _key_of(params: dict[str, Any]) -> Hashable:
    """Params as a program-cache key: bodies of control flow by structure (a fresh lambda's
    body equal to an earlier one reuses its program), other params as they are."""
    if holds_jaxprs(params):
        return params_key(params)
    return tuple(params.items())


def _to_device(x: Any, aval: AbstractValue, device: Any) -> Any:
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"cannot pass a value of type {aval.str_short(True)} to XLA")
    return to_buffer(x, aval, device)


XLA_EAGER: EagerImpl = XlaEager()


def clear_programs() -> None:
    """Forget the eager programs compiled so far (`lamina.clear_caches`)."""
    if isinstance(XLA_EAGER, XlaEager):
        XLA_EAGER.clear()


def materialize(value: Any) -> Any:
    """A constant a frontend function computed on the host, as a device `Array` (core calls
    this at top level, where JAX's functions always return device arrays)."""
    if type(value) is Array:
        return value
    value, aval = canonical_value(value)
    if type(value) is Array or not isinstance(aval, ShapedArray) or aval.dtype == dtypes.float0:
        return value  # float0 values have no device representation: they stay on the host
    if _bridge_devices.is_device_array(value):
        return Array(value, aval)
    device = _bridge_devices.default_device()
    return Array(
        _bridge_devices.device_put(value, aval.shape, aval.dtype, aval.weak_type, device), aval
    )
