"""Saving and loading compiled functions: `serialize`/`deserialize`, `save`/`load`.

    compiled = lamina.jit(f).lower(x).compile()
    data = compiled.serialize()            # or lamina.aot.serialize(compiled)
    g = lamina.aot.deserialize(data)       # in any process with the same jaxlib and platform
    g(x)                                   # no tracing, no lowering, no compiling

A saved function holds the serialized executable, its input and output tree structures and
types, and the values of the constants it closed over (hoisted into arguments), so loading needs
neither the Python function nor its closure. The format is `lamina_runtime.artifact`'s.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lamina_core import tree_util
from lamina_core.ir import ShapedArray
from lamina_core.trace import ShapeDtypeStruct
from lamina_runtime import _bridge, _bridge_devices, _bridge_executables, artifact
from lamina_runtime._jit import jit_function_of
from lamina_runtime.artifact import ArtifactError, IncompatibleArtifactError
from lamina_runtime.executable import Executable, runtime, signature_mismatch
from lamina_runtime.stages import Compiled, Lowered, Traced
from lamina_runtime.tree_codec import TreeCodecError, decode_treedef


def _check_compiled(compiled: Any, what: str) -> None:
    """A clear error for anything but a `Compiled` (a jitted function not yet compiled)."""
    if isinstance(compiled, Compiled):
        return
    if isinstance(compiled, Lowered):
        hint = "got a Lowered: call its `.compile()` first"
    elif isinstance(compiled, Traced):
        hint = "got a Traced: call its `.lower().compile()` first"
    elif jit_function_of(compiled) is not None:
        hint = (
            "got a jitted function that is not compiled: compile it for example arguments "
            "first, `lamina.jit(f).lower(*args).compile()`"
        )
    else:
        hint = (
            f"got {type(compiled).__name__}: make one with `lamina.jit(f).lower(*args).compile()`"
        )
    raise TypeError(f"lamina.aot.{what} takes a compiled function; {hint}")


def parse_compile_options(blob: bytes) -> Any:
    """Compile options from their serialized form, rebuilt as
    `_bridge_executables.compile_options` builds them.

    The blob is checked before anything reaches XLA (options that are empty, garbage or for
    another replica or partition count abort the process in XLA when an executable is loaded
    with them): it must hold one replica and one partition with no device assignment, and its
    XLA option overrides must be names with str, bool, int or float values. Only the
    overrides are taken from it; everything else is Lamina's default, as when compiling.

    Raises:
        ValueError: the blob is not compile options that Lamina writes.
    """
    return _bridge_executables.compile_options(overrides=_checked_overrides(blob))


def _checked_overrides(blob: bytes) -> dict[str, _bridge_executables.CompilerOption]:
    """The XLA option overrides of serialized compile options; see `parse_compile_options`."""
    shape, assigned, overrides, tupled = _bridge_executables.read_compile_options(blob)
    if shape != (1, 1, 1, 1) or assigned or tupled:
        raise ValueError(
            "compile options that Lamina does not write (replicas, partitions "
            f"{shape}, device assignment {assigned}, tupled arguments {tupled}; expected one "
            "replica and one partition, with no device assignment)"
        )
    checked: dict[str, _bridge_executables.CompilerOption] = {}
    for item in overrides:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise ValueError(f"malformed XLA option override {item!r} in compile options")
        name, value = item
        if not isinstance(value, (str, bool, int, float)) or name in checked:
            raise ValueError(f"malformed XLA option override {name!r}: {value!r}")
        checked[name] = value
    return checked


@dataclass(frozen=True, slots=True)
class _Checked:
    """What loading a saved function checked once and need not check again for the same bytes:
    its header (`layout`), its compile options, and that its executable is what its header
    says. What depends on the process (platform, device) is checked at every load."""

    layout: artifact.Layout
    overrides: Mapping[str, _bridge_executables.CompilerOption]


def serialize(compiled: Compiled) -> bytes:
    """`compiled` as bytes: the same as `compiled.serialize()`.

    Raises:
        TypeError: `compiled` is not a `Compiled` (e.g. a jitted function not yet compiled).
    """
    _check_compiled(compiled, "serialize")
    return compiled.serialize()


def deserialize(data: bytes, *, device: Any = None) -> Compiled:
    """Load a function saved by `serialize`, ready to call, on `device` (default: the first).

    Every header field is checked before XLA sees it, and the types the header gives the
    inputs, outputs and constants are checked against those the loaded executable reports: a
    header rewritten around another executable (its checksum recomputed) is refused, never run.

    Raises:
        ArtifactError: `data` is not a saved Lamina function, is corrupted, or its header and
            its executable disagree.
        IncompatibleArtifactError: it was saved by another format version, or compiled by
            another jaxlib or for another platform or device kind than this process has.
    """
    data = bytes(data)
    verified = artifact.verify(data)  # every load: one pass of sha256 over the bytes
    if device is not None and not isinstance(device, _bridge.Device):
        raise TypeError(
            f"deserialize: `device` must be a Device (e.g. lamina.devices()[0]) or None, got "
            f"{type(device).__name__} {device!r}"
        )
    device = device or _bridge_devices.default_device()
    # The checksum and the header's length (which it does not cover) name these bytes: what a
    # load of the same bytes checked (header, compile options, the executable's types) holds
    # for them still.
    checked: _Checked | None = runtime().loaded_artifacts.get(verified)
    layout = artifact.read_layout(data, verified) if checked is None else checked.layout
    artifact.check_compatible(
        layout.built_with, _bridge_executables.platform_description(device), layout.name
    )
    overrides: Mapping[str, _bridge_executables.CompilerOption]
    if checked is None:
        try:
            overrides = _checked_overrides(artifact.Layout.section(data, layout.compile_options))
        except ValueError as err:
            raise ArtifactError(f"saved function {layout.name!r} is malformed: {err}") from None
    else:
        overrides = checked.overrides
    options = _bridge_executables.compile_options(overrides=overrides)
    blob = artifact.Layout.section(data, layout.executable)
    try:
        loaded = _bridge_executables.deserialize_executable(blob, [device], options)
    except Exception as err:  # jaxlib's own error types are not public
        raise ArtifactError(
            f"jaxlib could not load the executable of {layout.name!r}: {err}"
        ) from err
    if checked is None:
        wrong = signature_mismatch(
            loaded,
            [*layout.const_avals, *layout.executable_in_avals],
            layout.out_avals,
            "the header",
        )
        if wrong is not None:
            raise ArtifactError(
                f"saved function {layout.name!r} is inconsistent: its header does not describe "
                f"its executable ({wrong}; the parameters are the {len(layout.const_avals)} "
                "constants, then the inputs)"
            )
        runtime().loaded_artifacts[verified] = _Checked(layout, overrides)
    executable = Executable(
        loaded,
        layout.name,
        device,
        layout.const_avals,
        layout.executable_in_avals,
        layout.out_avals,
        f"aot:{layout.name}",
        options,
        blob,
    )
    return Compiled(
        layout.name,
        executable,
        executable.put_consts(layout.consts(data)),
        layout.in_treedef,
        layout.out_treedef,
        arg_avals=layout.in_avals,
        donated=layout.donated,
        kept=layout.kept,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactInfo:
    """What a saved function says about itself, read without loading its executable."""

    name: str
    built_with: Mapping[str, str]
    """`lamina`, `jaxlib`, `platform`, `platform_version`, `device_kind` of the compiler."""
    args_info: Any
    """The inputs' `ShapeDtypeStruct`s, structured `(args, kwargs)` as the call takes them."""
    out_info: Any
    """The outputs' `ShapeDtypeStruct`s, structured as the function returns them."""
    num_consts: int
    const_bytes: int
    executable_bytes: int
    incompatibility: str | None
    """Why this process cannot load it, or None when it can."""


def describe(data: bytes) -> ArtifactInfo:
    """What the saved function in `data` takes, returns and was built with.

    Raises:
        ArtifactError: `data` is not a saved Lamina function, or is corrupted.
    """
    saved = artifact.decode(bytes(data))

    def shapes(tree: Any, avals: tuple[ShapedArray, ...]) -> Any:
        structs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
        return tree_util.tree_unflatten(decode_treedef(tree), structs)

    try:
        here = _bridge_executables.platform_description(_bridge_devices.default_device())
        artifact.check_compatible(saved.built_with, here, saved.name)
        reason = None
    except IncompatibleArtifactError as err:
        reason = str(err)
    return ArtifactInfo(
        name=saved.name,
        built_with=saved.built_with,
        args_info=shapes(saved.in_tree, saved.in_avals),
        out_info=shapes(saved.out_tree, saved.out_avals),
        num_consts=len(saved.consts),
        const_bytes=sum(c.nbytes for c in saved.consts),
        executable_bytes=len(saved.executable),
        incompatibility=reason,
    )


def save(compiled: Compiled, path: str | os.PathLike[str]) -> None:
    """Write `compiled` to `path` (atomically: a reader never sees half a file)."""
    _check_compiled(compiled, "save")
    target = Path(path)
    data = compiled.serialize()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str], *, device: Any = None) -> Compiled:
    """Load the function saved at `path` (see `deserialize`)."""
    return deserialize(Path(path).read_bytes(), device=device)


__all__ = [
    "ArtifactError",
    "ArtifactInfo",
    "IncompatibleArtifactError",
    "TreeCodecError",
    "describe",
    "deserialize",
    "load",
    "save",
    "serialize",
]
