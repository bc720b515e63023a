"""The AOT stages of `jit`, with JAX's API: `Traced`, `Lowered`, `Compiled`.

`jit(f).trace(*args)` gives the jaxpr; `.lower()` the StableHLO module with its hoisted
constants; `.compile()` an executable bound to those constants, which checks every call's
arguments against the types it was compiled for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import ClosedJaxpr, ShapedArray
from lamina_core.trace import ShapeDtypeStruct, typeof
from lamina_core.transforms import Staged
from lamina_hijax import HiSignature, to_lojax
from lamina_runtime import _bridge_executables, artifact
from lamina_runtime import sharding as shardings
from lamina_runtime._version import __version__
from lamina_runtime.executable import Executable, runtime
from lamina_runtime.pipeline import CompiledCall, LoweredCall, Placement, lower_staged
from lamina_runtime.sharding import SingleDeviceSharding
from lamina_runtime.tree_codec import encode_treedef


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """What a compiled function expects of one argument."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool
    donated: bool

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype, self.weak_type)


def _shape_dtype(aval: Any) -> ShapeDtypeStruct:
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


@dataclass(frozen=True, slots=True)
class LoJax:
    """A traced function after the to-lojax pass (`Traced.lojax`): arrays only."""

    jaxpr: ClosedJaxpr


class Traced:
    """A traced jitted function: its jaxpr and output types."""

    def __init__(self, name: str, staged: Staged, in_tree: Any, placement: Placement | None = None,
                 *, compiler_options: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self._name = name
        self._compiler_options = compiler_options
        self._staged = staged
        self.in_tree = in_tree
        self._placement = placement

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._staged.jaxpr

    @property
    def out_info(self) -> Any:
        return tree_util.tree_unflatten(
            self._staged.out_tree,
            [a if a.is_high else _shape_dtype(a) for a in self._staged.jaxpr.out_avals],
        )

    @property
    def out_tree(self) -> Any:
        return self._staged.out_tree

    @property
    def lojax(self) -> LoJax:
        """The traced program with its hi types expanded into arrays, as it is lowered."""
        closed = self._staged.jaxpr
        return LoJax(ClosedJaxpr(to_lojax(closed.jaxpr), closed.consts))

    def lower(self) -> Lowered:
        return Lowered(
            self._name,
            self._staged,
            # The stages keep every input, so a Compiled takes the arguments it was lowered for
            # (dead equations are still dropped).
            lower_staged(self._staged, self._name, keep_unused=True, placement=self._placement),
            self.in_tree,
            compiler_options=self._compiler_options,
        )


class Lowered:
    """A lowered jitted function: the StableHLO module and the constants it takes."""

    def __init__(self, name: str, staged: Staged, lowered: LoweredCall, in_tree: Any, *,
                 compiler_options: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.name = name
        self._staged = staged
        self._module = lowered.module
        self._lowered = lowered
        self._ref_inputs = lowered.ref_inputs
        self._hi = lowered.hi
        self.in_tree = in_tree
        self._compiler_options = dict(compiler_options or {})

    @property
    def out_tree(self) -> Any:
        return self._staged.out_tree

    @property
    def const_args(self) -> tuple[Any, ...]:
        """The hoisted constants, passed as the module's leading arguments."""
        return self._module.const_args.values

    @property
    def args_info(self) -> Any:
        avals = self._staged.jaxpr.in_avals
        infos = [
            a
            if a.is_high  # a hi type is its own description
            else ArgInfo(a.shape, a.dtype, a.weak_type, donated)  # type: ignore[attr-defined]  # array avals
            for a, donated in zip(avals, self._staged.donated_invars, strict=True)
        ]
        return tree_util.tree_unflatten(self.in_tree, infos)

    def as_text(self, dialect: str = "stablehlo", *, debug_info: bool = False) -> str:
        if dialect != "stablehlo":
            raise ValueError(
                f"Lowered.as_text: unknown dialect {dialect!r}; Lamina emits 'stablehlo'"
            )
        return self._module.as_text(debug_info=debug_info)

    def compiler_ir(self, dialect: str = "stablehlo") -> Any:
        if dialect != "stablehlo":
            raise ValueError(f"Lowered.compiler_ir: unknown dialect {dialect!r}")
        return self._module.module

    def compile(self, compiler_options: Mapping[str, Any] | None = None) -> Compiled:
        """Compile (or find compiled) for the default device.

        Args:
            compiler_options: XLA options by name, as JAX's `Lowered.compile` takes them, e.g.
                `{"xla_cpu_experimental_ynn_fusion_type": ""}`; added to `jit`'s own.
        """
        options = {**self._compiler_options, **(compiler_options or {})}
        executable = runtime().compile(
            self._module,
            compiler_options=options,
            in_shardings=self._lowered.in_shardings,
            out_shardings=self._lowered.out_shardings,
        )
        const_bufs = executable.put_consts(self._module.const_args.values)
        return Compiled(
            self.name,
            executable,
            const_bufs,
            self.in_tree,
            self._staged.out_tree,
            donated=tuple(self._staged.donated_invars),
            ref_inputs=self._ref_inputs,
            mutable_consts=self._staged.mutable_consts,
            hi=self._hi,
        )


class Compiled:
    """A compiled jitted function with its constants on the device.

    `serialize()` saves it, constants included, as bytes that `lamina.aot.deserialize` loads in
    another process without tracing, lowering or compiling.
    """

    def __init__(self, name: str, executable: Executable, const_bufs: list[Any], in_tree: Any,
                 out_tree: Any, *, donated: tuple[bool, ...] = (), ref_inputs: tuple[int, ...] = (),
                 mutable_consts: tuple[Any, ...] = (),
                 hi: HiSignature | None = None) -> None:  # fmt: skip
        self.name = name
        self._executable = executable
        self._const_bufs = const_bufs
        self.in_tree = in_tree
        self.out_tree = out_tree
        self._hi = hi
        """How hi-typed arguments and results map to the executable's arrays, if any."""
        in_avals = executable.in_avals if hi is None else hi.in_avals
        n_args = len(in_avals) - len(mutable_consts)
        self._donated = donated[:n_args] or (False,) * n_args
        self._mutable_consts = mutable_consts
        """Refs the function closes over: passed after the arguments, updated in place."""
        self._call = CompiledCall(executable, const_bufs, out_tree, None, ref_inputs, hi)
        self._n_out = len(executable.out_avals) - len(ref_inputs)

    @property
    def in_avals(self) -> Any:
        """The flat arguments' types, in the input tree's structure."""
        return tree_util.tree_unflatten(self.in_tree, self._arg_avals)

    @property
    def args_info(self) -> Any:
        infos = [
            a if a.is_high else ArgInfo(a.shape, a.dtype, a.weak_type, donated)
            for a, donated in zip(self._arg_avals, self._donated, strict=True)
        ]
        return tree_util.tree_unflatten(self.in_tree, infos)

    @property
    def _arg_avals(self) -> tuple[Any, ...]:
        avals = self._executable.in_avals if self._hi is None else self._hi.in_avals
        return tuple(avals[: len(self._donated)])

    @property
    def out_info(self) -> Any:
        if self._hi is not None:
            avals: Sequence[Any] = self._hi.out_avals
            return tree_util.tree_unflatten(
                self.out_tree, [a if a.is_high else _shape_dtype(a) for a in avals]
            )
        return tree_util.tree_unflatten(
            self.out_tree, [_shape_dtype(a) for a in self._executable.out_avals[: self._n_out]]
        )

    def serialize(self) -> bytes:
        """This compiled function as a self-contained artifact (see `lamina_runtime.artifact`).

        Raises:
            TreeCodecError: an argument or result is in a container other than tuple, list,
                dict or None.
        """
        if self._hi is not None:
            raise ValueError(
                f"can't serialize {self.name}: it takes or returns hi-typed values, whose Python "
                "classes a saved function cannot carry"
            )
        if self._executable.mesh is not None:
            raise ValueError(
                f"can't serialize {self.name}: it is partitioned over a device mesh, which "
                "saved functions do not support yet"
            )
        if self._call.ref_inputs:
            raise ValueError(
                f"can't serialize {self.name}: it takes mutable array refs (Refs), whose in-place "
                "updates a saved function cannot carry"
            )
        executable = self._executable
        options = executable.options or _bridge_executables.compile_options()
        return artifact.encode(
            artifact.Artifact(
                name=self.name,
                executable=executable.serialize(),
                compile_options=_bridge_executables.serialize_compile_options(options),
                built_with={
                    "lamina": __version__,
                    **_bridge_executables.platform_description(executable.device),
                },
                in_tree=encode_treedef(self.in_tree, "(args, kwargs)"),
                out_tree=encode_treedef(self.out_tree, "result"),
                in_avals=executable.in_avals,
                out_avals=executable.out_avals,
                donated=self._donated,
                consts=tuple(np.asarray(b) for b in self._const_bufs),
            )
        )

    @property
    def input_shardings(self) -> Any:
        executable = self._executable
        if executable.mesh is None:
            placed: list[Any] = [SingleDeviceSharding(executable.device)] * self.in_tree.num_leaves
        else:
            args = executable.in_shardings[len(executable.const_avals) :]
            placed = [shardings.of_jax(s) for s in args]
        return tree_util.tree_unflatten(self.in_tree, placed)

    @property
    def output_shardings(self) -> Any:
        executable = self._executable
        if executable.mesh is None:
            placed: list[Any] = [SingleDeviceSharding(executable.device)] * self.out_tree.num_leaves
        else:
            placed = list(executable.out_shardings[: self._n_out])
        return tree_util.tree_unflatten(self.out_tree, placed)

    def as_text(self) -> str:
        return _bridge_executables.compiled_text(self._executable.loaded)

    def cost_analysis(self) -> dict[str, float]:
        return _bridge_executables.cost_analysis(self._executable.loaded)

    def memory_analysis(self) -> Any:
        return _bridge_executables.memory_analysis(self._executable.loaded)

    def _check(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        leaves, tree = tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self.in_tree:
            raise TypeError(
                f"compiled {self.name} takes arguments structured as {self.in_tree}, "
                f"but was called with {tree}"
            )
        names = [f"args[{i}]{tree_util.keystr(path)}" for i, arg in enumerate(args)
                 for path, _ in tree_util.tree_flatten_with_path(arg)[0]]  # fmt: skip
        names += [f"{key}{tree_util.keystr(path)}" for key, value in kwargs.items()
                  for path, _ in tree_util.tree_flatten_with_path(value)[0]]  # fmt: skip
        for name, leaf, expected in zip(names, leaves, self._arg_avals, strict=True):
            got = typeof(leaf)
            if expected.is_high:
                if got != expected:
                    raise TypeError(
                        f"Argument {name} of compiled {self.name} has type {got.str_short()}, "
                        f"but it was compiled for {expected.str_short()}"
                    )
                continue
            if (
                getattr(got, "shape", None) != expected.shape
                or getattr(got, "dtype", None) != expected.dtype
            ):
                raise TypeError(
                    f"Argument {name} of compiled {self.name} has type {got.str_short()}, "
                    f"but it was compiled for {expected.str_short()}"
                )
        return leaves

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = self._check(args, kwargs)
        return self._call([*leaves, *self._mutable_consts])
