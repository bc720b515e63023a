"""The last AOT stage, `Compiled`, and what every stage shares (`Stage`, `ArgInfo`).

A `Compiled` is an executable bound to its constants, for the arguments it was lowered for.
A call checks its arguments as JAX's does, with JAX's errors: the tree structure first (every
place it differs), then tracers, then every argument's shape and dtype, then (on a mesh) the
shardings of arrays already placed over several devices. Arguments the module does not take
(pruned, unless `keep_unused`) are checked, then dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from lamina_core import tree_util
from lamina_core.ir import AbstractValue, Format, Layout, ShapedArray
from lamina_core.trace import EVAL_TRACE, ShapeDtypeStruct, Tracer, current_trace, typeof
from lamina_core.tree import equality_errors_pytreedef, public_treedef
from lamina_hijax import HiSignature
from lamina_runtime import _bridge_devices, _bridge_executables, artifact
from lamina_runtime import sharding as shardings
from lamina_runtime._version import __version__
from lamina_runtime.array import Array
from lamina_runtime.executable import Executable
from lamina_runtime.pipeline import CompiledCall
from lamina_runtime.sharding import SingleDeviceSharding
from lamina_runtime.tree_codec import encode_treedef


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """What a stage knows of one argument: its type and whether it is donated."""

    _aval: AbstractValue
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        shape: tuple[int, ...] = self._aval.shape
        return shape

    @property
    def dtype(self) -> np.dtype:
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        dtype: np.dtype = self._aval.dtype
        return dtype


def make_args_info(
    in_tree: Any, avals: Sequence[Any], donated: Sequence[bool], *, lowered: bool = False
) -> Any:
    """The `ArgInfo` of each argument, in `in_tree`'s structure. Once `lowered`, a program
    taking hi-typed arguments describes each argument as the list of the arrays it is made
    of (its `lo_ty()`, a list of one for an array), as JAX's."""
    if lowered and any(a.is_high for a in avals):
        expanded = [
            [ArgInfo(lo, d) for lo in a.lo_ty()] for a, d in zip(avals, donated, strict=True)
        ]
        return tree_util.tree_unflatten(in_tree, expanded)
    infos = [ArgInfo(a, d) for a, d in zip(avals, donated, strict=True)]
    return tree_util.tree_unflatten(in_tree, infos)


class Stage:
    """What every stage says of its arguments, from its `args_info`."""

    _in_tree: Any
    _out_tree: Any

    @property
    def args_info(self) -> Any:
        raise NotImplementedError

    @property
    def in_tree(self) -> Any:
        """Tree structure of the pair (positional arguments, keyword arguments); once lowered,
        of `args_info` (hi-typed arguments expanded into lists of arrays), as JAX's."""
        expanded = tree_util.tree_structure(self.args_info)
        if expanded.num_leaves != self._in_tree.num_leaves:
            return public_treedef(expanded)
        return public_treedef(self._in_tree)

    @property
    def out_tree(self) -> Any:
        return public_treedef(self._out_tree)

    @property
    def in_avals(self) -> Any:
        """The arguments' types, in the input tree's structure; once lowered, a Ref argument's
        is the type of its value (what the module takes), as in JAX."""
        if not self._lowered_types:
            return tree_util.tree_map(lambda info: info._aval, self.args_info)
        return tree_util.tree_map(
            lambda info: (
                info._aval.inner_aval if getattr(info._aval, "mutable", False) else info._aval
            ),
            self.args_info,
        )

    _lowered_types: ClassVar[bool] = False

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The flat positions of the donated arguments."""
        leaves = tree_util.tree_leaves(self.args_info)
        return tuple(i for i, info in enumerate(leaves) if info.donated)


def _layout(entry: tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int]) -> Layout:
    major_to_minor, tiling, bits = entry
    return Layout(major_to_minor, tiling, bits)


def _long(aval: Any) -> str:
    """A type as JAX's messages name it: `float32[3]`."""
    text: str = aval.str_short(short_dtypes=False)
    return text


def _not_a_jax_type(x: Any) -> TypeError:
    return TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


class Compiled(Stage):
    """A compiled jitted function with its constants on the device.

    `serialize()` saves it, constants included, as bytes that `lamina.aot.deserialize` loads in
    another process without tracing, lowering or compiling.
    """

    _lowered_types = True

    def __init__(self, name: str, executable: Executable, const_bufs: list[Any], in_tree: Any,
                 out_tree: Any, *, arg_avals: Sequence[Any] | None = None,
                 donated: Sequence[bool] = (), kept: tuple[int, ...] | None = None,
                 ref_inputs: tuple[int, ...] = (), mutable_consts: tuple[Any, ...] = (),
                 hi: HiSignature | None = None,
                 arg_names: Sequence[str] | None = None) -> None:  # fmt: skip
        self.name = name
        self._executable = executable
        self._const_bufs = const_bufs
        self._in_tree = in_tree
        self._out_tree = out_tree
        self._hi = hi
        """How hi-typed arguments and results map to the executable's arrays, if any."""
        if arg_avals is None:
            arg_avals = executable.in_avals if hi is None else hi.in_avals
            arg_avals = arg_avals[: len(arg_avals) - len(mutable_consts)]
        self._arg_avals = tuple(arg_avals)
        """Every argument's type, pruned or not (hi types as they are)."""
        n_args = len(self._arg_avals)
        self._donated = tuple(donated[:n_args]) or (False,) * n_args
        self._kept = kept
        """Positions of the flat arguments (and closed-over Refs) the executable takes."""
        self._arg_names = tuple(arg_names) if arg_names is not None else _paths(in_tree)
        """The arguments' names for messages: the function's parameters' (as JAX's), or
        their places in the call (`args[0]`, `kwargs['scale']`) when they are unknown."""
        self._mutable_consts = mutable_consts
        """Refs the function closes over: passed after the arguments, updated in place."""
        self._call = CompiledCall(executable, const_bufs, out_tree, kept, ref_inputs, hi)
        self._n_out = len(executable.out_avals) - len(ref_inputs)

    @property
    def args_info(self) -> Any:
        return make_args_info(self._in_tree, self._arg_avals, self._donated, lowered=True)

    def _kept_args(self) -> list[int]:
        n = len(self._arg_avals)
        return list(range(n)) if self._kept is None else [i for i in self._kept if i < n]

    @property
    def out_info(self) -> Any:
        if self._hi is not None:
            return tree_util.tree_unflatten(
                self._out_tree,
                [
                    a
                    if a.is_high or not isinstance(a, ShapedArray)
                    else ShapeDtypeStruct(a.shape, a.dtype)
                    for a in self._hi.out_avals
                ],
            )
        formats = self._output_formats_flat()
        avals = self._executable.out_avals[: self._n_out]
        return tree_util.tree_unflatten(
            self._out_tree,
            [
                ShapeDtypeStruct(a.shape, a.dtype, sharding=f)
                for a, f in zip(avals, formats, strict=True)
            ],
        )

    # ---- placements and layouts ------------------------------------------------------------

    def _input_shardings_flat(self) -> list[Any]:
        executable = self._executable
        n_consts = len(executable.const_avals)
        placed: list[Any] = [None] * len(self._arg_avals)
        for k, i in enumerate(self._kept_args()):
            if executable.mesh is None:
                placed[i] = SingleDeviceSharding(executable.device)
            else:
                placed[i] = shardings.of_jax(executable.in_shardings[n_consts + k])
        return placed

    def _output_shardings_flat(self) -> list[Any]:
        executable = self._executable
        if executable.mesh is None:
            return [SingleDeviceSharding(executable.device)] * self._n_out
        return list(executable.out_shardings[: self._n_out])

    def _layouts(self) -> tuple[list[Layout], list[Layout]]:
        params, results = _bridge_executables.executable_layouts(self._executable.loaded)
        return [_layout(p) for p in params], [_layout(r) for r in results]

    def _output_formats_flat(self) -> list[Format]:
        layouts = self._layouts()[1][: self._n_out]
        return [
            Format(layout, s)
            for layout, s in zip(layouts, self._output_shardings_flat(), strict=True)
        ]

    @property
    def input_shardings(self) -> Any:
        """Each argument's sharding (None for an argument the module does not take)."""
        return tree_util.tree_unflatten(self._in_tree, self._input_shardings_flat())

    @property
    def output_shardings(self) -> Any:
        return tree_util.tree_unflatten(self._out_tree, self._output_shardings_flat())

    @property
    def input_formats(self) -> Any:
        """Each argument's layout and sharding (`Format(None, None)` for a pruned one)."""
        params = self._layouts()[0][len(self._executable.const_avals) :]
        formats = [Format(None, None)] * len(self._arg_avals)
        placed = self._input_shardings_flat()
        for k, i in enumerate(self._kept_args()):
            formats[i] = Format(params[k], placed[i])
        return tree_util.tree_unflatten(self._in_tree, formats)

    @property
    def output_formats(self) -> Any:
        return tree_util.tree_unflatten(self._out_tree, self._output_formats_flat())

    # ---- what XLA reports --------------------------------------------------------------------

    def as_text(self) -> str:
        """The optimized HLO of the executable."""
        return _bridge_executables.compiled_text(self._executable.loaded)

    def cost_analysis(self) -> dict[str, float]:
        return _bridge_executables.cost_analysis(self._executable.loaded)

    def memory_analysis(self) -> Any:
        return _bridge_executables.memory_analysis(self._executable.loaded)

    def runtime_executable(self) -> Any:
        """jaxlib's loaded executable."""
        return _bridge_executables.runtime_executable(self._executable.loaded)

    # ---- saving ------------------------------------------------------------------------------

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
                in_tree=encode_treedef(self._in_tree, "(args, kwargs)"),
                out_tree=encode_treedef(self._out_tree, "result"),
                in_avals=self._arg_avals,
                out_avals=executable.out_avals,
                donated=self._donated,
                consts=tuple(np.asarray(b) for b in self._const_bufs),
                kept=self._kept,
            )
        )

    # ---- calling -----------------------------------------------------------------------------

    def _check(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        leaves, tree = tree_util.tree_flatten((tuple(args), kwargs))
        if tree != self._in_tree:
            raise _tree_mismatch(tree, self._in_tree)
        if current_trace() is not EVAL_TRACE:
            for leaf in leaves:
                if isinstance(leaf, Tracer):
                    raise TypeError(
                        "Cannot apply JAX transformations to a function lowered and compiled "
                        "for a particular signature. Detected argument of Tracer type "
                        f"{type(leaf)}."
                    )
        errors = []
        for k, (leaf, expected) in enumerate(zip(leaves, self._arg_avals, strict=True)):
            try:
                got = typeof(leaf)
            except TypeError:
                raise _not_a_jax_type(leaf) from None
            if expected.is_high:
                if got != expected:
                    errors.append((k, expected, got))
            elif getattr(got, "shape", None) != expected.shape or (
                getattr(got, "dtype", None) != expected.dtype
            ):
                errors.append((k, expected, got))
        if errors:
            raise self._types_mismatch(errors)
        if self._executable.mesh is not None:
            self._check_shardings(leaves)
        return leaves

    def _types_mismatch(self, errors: list[tuple[int, Any, Any]]) -> TypeError:
        lines = [
            f"Argument '{self._arg_names[k]}' compiled with {_long(expected)} and called with "
            f"{_long(got)}"
            for k, expected, got in errors[:5]
        ]
        count = f"The first 5 of {len(errors)}" if len(errors) >= 5 else "The"
        return TypeError(
            "Argument types differ from the types for which this computation was compiled. "
            "Perhaps you are calling the compiled executable with a different enable_x64 mode "
            f"than when it was AOT compiled? {count} mismatches are:\n" + "\n".join(lines)
        )

    def _check_shardings(self, leaves: Sequence[Any]) -> None:
        """JAX's error for arrays placed over several devices otherwise than the executable
        takes them (one-device arrays are moved, as JAX moves uncommitted ones)."""
        n_consts = len(self._executable.const_avals)
        errors = []
        for k, i in enumerate(self._kept_args()):
            leaf = leaves[i]
            buf = leaf._buf if type(leaf) is Array else leaf
            if not _bridge_devices.is_device_array(buf) or _bridge_devices.is_single_device(buf):
                continue
            required = self._executable.in_shardings[n_consts + k]
            aval = self._arg_avals[i]
            if not _bridge_devices.is_equivalent(buf.sharding, required, aval.ndim):
                errors.append(
                    f"Argument {self._arg_names[i]} with shape {_long(typeof(leaf))}:\n"
                    f"  Passed sharding: {shardings.of_jax(buf.sharding)}\n"
                    f"  Required sharding: {shardings.of_jax(required)}"
                )
        if errors:
            count = (
                f"the {len(errors)} mismatches"
                if len(errors) < 5
                else f"5 mismatches out of {len(errors)}"
            )
            raise ValueError(
                "Computation was compiled for input shardings that disagree with the shardings "
                f"of arguments passed to it. Here are {count}:\n" + "\n".join(errors[:5])
            )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = self._check(args, kwargs)
        return self._call([*leaves, *self._mutable_consts])


def _paths(in_tree: Any) -> tuple[str, ...]:
    """Each flat argument's place in the call `(args, kwargs)`: `args[0]`, `kwargs['k']`."""
    placeholders = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    names = []
    for path, _ in tree_util.tree_flatten_with_path(placeholders)[0]:
        first, *rest = path
        base = ("args", "kwargs")[first.idx]  # type: ignore[attr-defined]  # (args, kwargs)
        names.append(f"{base}{tree_util.keystr(tuple(rest))}")
    return tuple(names)


def _tree_mismatch(given: Any, compiled: Any) -> TypeError:
    """JAX's error for a call whose arguments are structured otherwise than compiled for."""
    errors = list(equality_errors_pytreedef(given, compiled))
    lines = [
        "Function compiled with input pytree does not match the input pytree it was called "
        f"with. There are {len(errors)} mismatches, including:"
    ]
    for path, thing1, thing2, explanation in errors:
        first, *rest = path
        base = ("args", "kwargs")[first.idx]  # type: ignore[attr-defined]  # (args, kwargs)
        lines.append(
            f"    * at {base}{tree_util.keystr(tuple(rest))}, seen {thing2} but now given "
            f"{thing1}, so {explanation}"
        )
    return TypeError("\n".join(lines))


__all__ = ["ArgInfo", "Compiled", "Stage", "make_args_info"]
