"""The AOT stages of `jit`, with JAX 0.10.2's API: `Traced`, `Lowered`, `Compiled`.

`jit(f).trace(*args)` gives the jaxpr; `.lower()` the StableHLO module with its hoisted
constants (unused arguments pruned unless `keep_unused`, as JAX's); `.compile()` an executable
bound to those constants (`stages_compiled`). Every stage describes the arguments it was made
for (`args_info`, `in_avals`, `in_tree`, `donate_argnums`, all arguments, pruned or not) and
its outputs (`out_info`) as JAX's does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lamina_core import tree_util
from lamina_core.ir import (
    AbstractValue,
    ClosedJaxpr,
    Format,
    NamedSharding,
    PartitionSpec,
    ShapedArray,
)
from lamina_core.trace import ShapeDtypeStruct, jaxpr_as_fun
from lamina_core.transforms import Staged
from lamina_hijax import to_lojax
from lamina_runtime import _bridge_devices, _bridge_executables
from lamina_runtime._jit_mutable import BoxStage, is_mutable_call, lower_boxes
from lamina_runtime.executable import Executable
from lamina_runtime.pipeline import LoweredCall, Placement, compile_lowered, lower_staged
from lamina_runtime.stages_compiled import ArgInfo, Compiled, Stage, make_args_info


def _out_sharding(aval: AbstractValue, given: Any) -> Any:
    """An output's sharding as JAX's `Traced.out_info` reports it: the one `jit` was given,
    else its type's over a mesh of Explicit axes, else None."""
    if given is not None:
        return given
    mesh = getattr(aval, "mesh", None)
    if mesh is None or mesh.empty or not mesh.has_explicit:
        return None
    spec = aval.spec or (None,) * aval.ndim  # type: ignore[attr-defined]  # an array type
    return NamedSharding(mesh, PartitionSpec(*spec))


@dataclass(frozen=True, slots=True)
class LoJax:
    """A traced function after the to-lojax pass (`Traced.lojax`): arrays only."""

    jaxpr: ClosedJaxpr


class Traced(Stage):
    """A traced jitted function: its jaxpr, and what it takes and returns."""

    def __init__(self, name: str, staged: Staged, in_tree: Any, placement: Placement | None = None,
                 *, compiler_options: Mapping[str, Any] | None = None,
                 keep_unused: bool = False) -> None:  # fmt: skip
        self._name = name
        self._compiler_options = compiler_options
        self._staged = staged
        self._in_tree = in_tree
        self._out_tree = staged.out_tree
        self._placement = placement
        self._keep_unused = keep_unused

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._staged.jaxpr

    @property
    def fun_name(self) -> str:
        return self._name

    @property
    def args_info(self) -> Any:
        return _args_info(self._staged, self._in_tree)

    @property
    def out_avals(self) -> Any:
        return tree_util.tree_unflatten(self._staged.out_tree, self._staged.jaxpr.out_avals)

    @property
    def out_info(self) -> Any:
        outs = self._placement.outs if self._placement is not None else ()
        given = [*outs, *[None] * (len(self._staged.jaxpr.out_avals) - len(outs))]
        infos = [
            a
            if a.is_high or not isinstance(a, ShapedArray)
            else ShapeDtypeStruct(
                a.shape, a.dtype, sharding=_out_sharding(a, s), weak_type=a.weak_type
            )
            for a, s in zip(self._staged.jaxpr.out_avals, given, strict=True)
        ]
        return tree_util.tree_unflatten(self._staged.out_tree, infos)

    @property
    def lojax(self) -> LoJax:
        """The traced program with its hi types expanded into arrays, as it is lowered."""
        closed = self._staged.jaxpr
        return LoJax(ClosedJaxpr(to_lojax(closed.jaxpr), closed.consts))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Evaluate the jaxpr on `args`, equation by equation (as JAX's `Traced.__call__`)."""
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self._in_tree:
            raise TypeError(f"Tree structure mismatch: expected {self._in_tree}, got {tree}")
        closed = self._staged.jaxpr
        staged = self._staged
        outs = jaxpr_as_fun(closed)(*staged.hi_mutable_consts, *leaves, *staged.mutable_consts)
        return tree_util.tree_unflatten(self._staged.out_tree, outs)

    def lower(
        self,
        *,
        lowering_platforms: tuple[str, ...] | None = None,
        _private_parameters: Any = None,
    ) -> Lowered:
        """Lower to StableHLO for this process's platform, as `jit` would."""
        if lowering_platforms is not None:
            here = _bridge_executables.platform_description(_bridge_devices.default_device())
            if tuple(lowering_platforms) != (here["platform"],):
                raise NotImplementedError(
                    f"Traced.lower(lowering_platforms={lowering_platforms!r}): Lamina lowers "
                    f"for this process's platform only ({here['platform']!r})"
                )
        if is_mutable_call(self._staged):  # boxes: the stages of its call of arrays
            boxes = lower_boxes(self._staged)
            module = lower_staged(boxes.staged, self._name, keep_unused=self._keep_unused)
            inner = Lowered(self._name, boxes.staged, module, boxes.in_tree,
                            compiler_options=self._compiler_options)  # fmt: skip
            return BoxStage(inner, self._staged, boxes)  # type: ignore[return-value]  # as one
        lowered = lower_staged(
            self._staged, self._name, keep_unused=self._keep_unused, placement=self._placement
        )
        return Lowered(
            self._name,
            self._staged,
            lowered,
            self._in_tree,
            compiler_options=self._compiler_options,
        )


def _n_args(staged: Staged) -> int:
    """How many of the traced function's inputs are its arguments (closed-over Refs follow)."""
    return len(staged.jaxpr.in_avals) - len(staged.mutable_consts)


def _args_info(staged: Staged, in_tree: Any, *, lowered: bool = False) -> Any:
    n, k = _n_args(staged), len(staged.hi_mutable_consts)  # boxes closed over lead
    avals, donated = staged.jaxpr.in_avals[k:n], staged.donated_invars[k:n]
    return make_args_info(in_tree, avals, donated, lowered=lowered)


class Lowered(Stage):
    """A lowered jitted function: the StableHLO module and the constants it takes."""

    _lowered_types = True

    def __init__(self, name: str, staged: Staged, lowered: LoweredCall, in_tree: Any, *,
                 compiler_options: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.name = name
        self._staged = staged
        self._module = lowered.module
        self._lowered = lowered
        self._in_tree = in_tree
        self._out_tree = staged.out_tree
        self._compiler_options = dict(compiler_options or {})
        self._hlo: Any = None

    @property
    def args_info(self) -> Any:
        return _args_info(self._staged, self._in_tree, lowered=True)

    @property
    def out_info(self) -> Any:
        out_avals = self._staged.jaxpr.out_avals
        given = self._lowered.out_shardings
        given = (*given, *[None] * (len(out_avals) - len(given)))
        infos = [
            a
            if a.is_high or not isinstance(a, ShapedArray)
            else ShapeDtypeStruct(a.shape, a.dtype, sharding=Format(None, s))
            for a, s in zip(out_avals, given, strict=True)
        ]
        return tree_util.tree_unflatten(self._staged.out_tree, infos)

    @property
    def const_args(self) -> tuple[Any, ...]:
        """The hoisted constants, passed as the module's leading arguments."""
        return self._module.const_args.values

    @property
    def kept_args(self) -> tuple[int, ...] | None:
        """Positions of the flat arguments the module takes (None: all; see `keep_unused`)."""
        return self._lowered.kept

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module as text: StableHLO (default) or HLO, with locations if `debug_info`."""
        if dialect is None or dialect == "stablehlo":
            return self._module.as_text(debug_info=debug_info)
        if dialect == "hlo":
            return _bridge_executables.hlo_text(self._hlo_computation(), debug_info=debug_info)
        raise ValueError(f"unknown dialect: {dialect}")

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The module as an MLIR `Module` (StableHLO, default) or an XLA computation (HLO)."""
        if dialect is None or dialect == "stablehlo":
            return self._module.module
        if dialect == "hlo":
            return self._hlo_computation()
        raise ValueError(f"unknown dialect: {dialect}")

    def _hlo_computation(self) -> Any:
        if self._hlo is None:
            with self._module.context:
                self._hlo = _bridge_executables.hlo_computation(self._module.as_bytecode())
        return self._hlo

    def cost_analysis(self) -> dict[str, float] | None:
        """XLA's cost estimate of the module before optimization (flops, bytes accessed)."""
        device = _bridge_devices.default_device()
        return _bridge_executables.hlo_cost_analysis(self._hlo_computation(), device)

    def compile(
        self,
        compiler_options: Mapping[str, Any] | None = None,
        *,
        device_assignment: Sequence[Any] | None = None,
    ) -> Compiled:
        """Compile (or find compiled) for the default device, or the mesh it was lowered for.

        Args:
            compiler_options: XLA options by name, as JAX's `Lowered.compile` takes them, e.g.
                `{"xla_cpu_experimental_ynn_fusion_type": ""}`; added to `jit`'s own.
            device_assignment: the devices to run on; Lamina takes only the ones it chose.
        """
        options = {**self._compiler_options, **(compiler_options or {})}
        executable = compile_lowered(self._lowered, options)
        if device_assignment is not None and list(device_assignment) != _devices(executable):
            raise NotImplementedError(
                f"Lowered.compile(device_assignment={device_assignment!r}): Lamina compiles "
                f"for {_devices(executable)} only"
            )
        staged = self._staged
        n = _n_args(staged)
        return Compiled(
            self.name,
            executable,
            executable.put_consts(self._module.const_args.values),
            self._in_tree,
            staged.out_tree,
            arg_avals=tuple(staged.jaxpr.in_avals[:n]),
            donated=tuple(staged.donated_invars[:n]),
            kept=self._lowered.kept,
            ref_inputs=self._lowered.ref_inputs,
            mutable_consts=staged.mutable_consts,
            hi=self._lowered.hi,
            arg_names=_arg_names(staged, n),
        )


def _devices(executable: Executable) -> list[Any]:
    return [executable.device] if executable.mesh is None else list(executable.mesh.devices_flat)


def _arg_names(staged: Staged, n: int) -> tuple[str, ...]:
    """The arguments' names for messages (JAX's `safe_arg_names`): '' where unknown."""
    debug = staged.jaxpr.jaxpr.debug_info
    names = debug.arg_names if debug is not None else None
    if names is None or len(names) < n:
        return ("",) * n
    return tuple(names[:n])


__all__ = ["ArgInfo", "Compiled", "LoJax", "Lowered", "Stage", "Traced"]
