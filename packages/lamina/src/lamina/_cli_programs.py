"""Stored programs on the command line: a `.jaxpr` or `.json` file as one more kind of FUNCTION.

A `.jaxpr` file holds the printed text, which shows array constants only by type
(`[...]:f32[16]`); their values live beside it in `FILE.npz` (for `prog.jaxpr`,
`prog.jaxpr.npz`), written by `lamina jaxpr ... --to text -o FILE`. A `.json` file is
self-contained. A stored program runs as `jaxpr_as_fun` of it, so `jit` traces, lowers and
compiles it as it would the function it was made from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Final

import click
import numpy as np

import lamina
from lamina import jaxpr_io
from lamina_core import ClosedJaxpr, JaxprTypeError, check_jaxpr
from lamina_core import dtypes as core_dtypes

SUFFIXES: Final = (".jaxpr", ".json")


class ProgramFileError(click.ClickException):
    """A stored program that cannot be read, shown as a compiler shows one:
    `FILE:LINE:COLUMN: message` (or `FILE: message`), with the usage-error exit status."""

    exit_code = 2

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(self.format_message(), file=file, err=file is None)


def is_program_file(target: str) -> bool:
    """Whether `target` names a stored program rather than MODULE:FUNCTION.

    A `mod:codec.json` is a function when no such file exists.
    """
    path = Path(target)
    return path.suffix in SUFFIXES and (":" not in target or path.is_file())


def constants_file(path: Path) -> Path:
    """Where the values of the elided constants of the text file `path` are kept."""
    return path.with_name(path.name + ".npz")


def load_program(path: Path) -> ClosedJaxpr:
    """The type-checked program stored in `path` (`.jaxpr` text, or `.json`)."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise ProgramFileError(f"{path}: cannot read the file ({err})") from None
    npz = constants_file(path)
    try:
        if path.suffix == ".json":
            closed = jaxpr_io.from_json(text)
        else:
            closed = jaxpr_io.parse(text, _load_constants(npz) if npz.exists() else None)
    except jaxpr_io.JaxprSyntaxError as err:
        message = err.message.replace("; pass them as `consts` (see `elided_constants`)", "")
        if "consts has" in message and path.suffix != ".json":
            # The parser speaks of its `consts` argument; here they come from the .npz.
            message += f"; the values of elided constants are read from {npz}"
            if not npz.exists():
                message += ", which does not exist (`lamina jaxpr ... --to text -o FILE` writes it)"
        raise ProgramFileError(f"{path}:{err.line}:{err.column}: {message}") from None
    except jaxpr_io.JaxprJSONError as err:
        # Malformed JSON is located by line and column; a well-formed document by its path
        # in the document: `program.eqns[2]`.
        if err.line is not None:
            message = err.message.rsplit(": ", 1)[-1]  # the decoder's own words
            raise ProgramFileError(f"{path}:{err.line}:{err.column}: not JSON: {message}") from None
        raise ProgramFileError(f"{path}: {err}") from None
    try:
        check_jaxpr(closed)
    except JaxprTypeError as err:
        raise ProgramFileError(f"{path}: the program does not type-check: {err}") from None
    return closed


def _load_constants(npz: Path) -> list[np.ndarray]:
    # `arr_i` in print order, and `dtypes` naming them: NumPy stores bfloat16 and the other
    # ml_dtypes as raw bytes (`|V2`), to be viewed as their dtype again.
    try:
        with np.load(npz, allow_pickle=False) as stored:
            names = [str(n) for n in stored["dtypes"]]
            arrays = [stored[f"arr_{i}"] for i in range(len(names))]
    except (OSError, ValueError, KeyError) as err:
        raise ProgramFileError(
            f"{npz}: cannot read the elided constants ({err}); write it again with "
            "`lamina jaxpr ... --to text -o FILE`"
        ) from None
    return [
        a if a.dtype.name == n else a.view(np.dtype(n)) for a, n in zip(arrays, names, strict=True)
    ]


def save_program(closed: ClosedJaxpr, to: str, output: Path | None) -> None:
    """Write `closed` as `to` (`text` or `json`) to `output`, or to stdout.

    Text written to a file takes its elided constants to `constants_file(output)` (a stale
    one is removed when there are none); printed, it has only their types.
    """
    text = (jaxpr_io.to_json(closed) if to == "json" else str(closed)).rstrip("\n") + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text)
    if to == "json":
        click.echo(f"wrote {output}")
        return
    consts = [np.asarray(c) for c in jaxpr_io.elided_constants(closed)]
    npz = constants_file(output)
    if not consts:
        npz.unlink(missing_ok=True)
        click.echo(f"wrote {output}")
        return
    np.savez(npz, *consts, dtypes=np.array([c.dtype.name for c in consts]))
    click.echo(f"wrote {output} and {npz} ({len(consts)} elided constant(s))")


def output_form(to: str | None, output: Path | None) -> str:
    """`text` or `json`: `to`, or else what the suffix of `output` says (text by default)."""
    implied = {".json": "json", ".jaxpr": "text"}.get(output.suffix if output else "")
    if to is not None and implied is not None and to != implied:
        raise click.BadParameter(f"--to {to} does not write a {output} file", param_hint="'-o'")
    return to or implied or "text"


def stored_program(
    path: Path, given: Sequence[lamina.ShapeDtypeStruct] | None
) -> tuple[ClosedJaxpr, list[lamina.ShapeDtypeStruct]]:
    """The program stored in `path` and the types it takes (which `given`, from --args,
    must match)."""
    closed = load_program(path)
    return closed, program_arg_specs(closed, path, given)


def program_function(closed: ClosedJaxpr, name: str) -> Callable[..., Any]:
    """`closed` as a function named `name`: one output as it is, several as a tuple (the
    jaxpr keeps no output tree)."""

    fun = jaxpr_io.jaxpr_as_fun(closed)

    def program(*args: Any) -> Any:
        outs = fun(*args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    program.__name__ = program.__qualname__ = name
    return program


def program_arg_specs(
    closed: ClosedJaxpr, path: Path, given: Sequence[lamina.ShapeDtypeStruct] | None
) -> list[lamina.ShapeDtypeStruct]:
    """The types the program takes, from its invars; `given` (from --args) must match them."""
    specs = []
    for i, var in enumerate(closed.jaxpr.invars):
        aval: Any = var.aval
        if not hasattr(aval, "shape") or not hasattr(aval, "dtype"):
            raise ProgramFileError(f"{path}: argument {i} has type {aval}, not an array type")
        specs.append(lamina.ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type))
    if given is not None and _short_types(given) != _short_types(specs):
        raise click.BadParameter(
            f"{_short_types(given)} conflicts with {path}, whose program takes "
            f"{_short_types(specs)}; leave --args out for a stored program",
            param_hint="'--args'",
        )
    return specs


def _short_types(specs: Sequence[lamina.ShapeDtypeStruct]) -> str:
    return ",".join(
        f"{core_dtypes.short_dtype_name(np.dtype(s.dtype))}[{','.join(map(str, s.shape))}]"
        for s in specs
    )
