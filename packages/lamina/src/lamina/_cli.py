"""The `lamina` command line: print, compile, save and run functions; manage the cache.

    lamina jaxpr  MODULE:FUNCTION --args 'f32[8],f32[8]' [--to json|text -o f.json]
    lamina jaxpr  f.json|f.jaxpr [--to json|text -o OUT]
    lamina hlo    MODULE:FUNCTION --args 'f32[8],f32[8]'
    lamina compile MODULE:FUNCTION --args 'f32[8],f32[8]' -o f.lamina
    lamina compile f.json -o f.lamina
    lamina run f.lamina x.npy zeros
    lamina inspect f.lamina
    lamina cache path|info|clear
    lamina demo

This is the edge of the program, so it is where the environment is read (`LAMINA_CACHE_DIR` and
the `LAMINA_*`/`JAX_*` options, through `lamina.config`). Built on click.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TextIO

import click
import numpy as np

import lamina
import lamina_runtime
from lamina._cli_programs import (
    is_program_file,
    output_form,
    program_function,
    save_program,
    stored_program,
)
from lamina._demo import run_demo
from lamina_core import dtypes
from lamina_core import tree_util as tu

_DTYPES: Final = {
    **{d.name: d for d in dtypes.all_dtypes()},
    **{dtypes.short_dtype_name(d): d for d in dtypes.all_dtypes()},
    "pred": np.dtype(bool),
}
_SPEC: Final = re.compile(r"\s*([A-Za-z][A-Za-z0-9_]*)\s*(?:\[([^\]]*)\])?\s*")
PROGRESS_AFTER: Final = 1.0
"""Seconds a compilation runs before progress is shown."""


def parse_arg_specs(text: str) -> list[lamina.ShapeDtypeStruct]:
    """`'f32[8,2],i32[],bf16'` as argument types (a bare dtype is a scalar).

    Raises:
        ValueError: a malformed spec or an unknown dtype, with the valid spellings.
    """
    specs: list[lamina.ShapeDtypeStruct] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _SPEC.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read an argument type at {text[position:]!r}")
        name, dims = match.group(1), match.group(2)
        if name not in _DTYPES:
            known = ", ".join(sorted({dtypes.short_dtype_name(d) for d in dtypes.all_dtypes()}))
            raise ValueError(f"unknown dtype {name!r}; use one of {known} (or NumPy's names)")
        try:
            shape = tuple(int(d) for d in dims.split(",") if d.strip()) if dims else ()
        except ValueError:
            raise ValueError(f"dimensions must be integers in {match.group(0).strip()!r}") from None
        specs.append(lamina.ShapeDtypeStruct(shape, _DTYPES[name]))
        position = match.end()
        if position < len(text):
            if text[position] != ",":
                raise ValueError(f"expected ',' between argument types at {text[position:]!r}")
            position += 1
    return specs


def load_function(target: str) -> Callable[..., Any]:
    """The function that `MODULE:FUNCTION` (or `path/to/file.py:FUNCTION`) names."""
    module_name, sep, attribute = target.rpartition(":")
    if not sep or not module_name or not attribute:
        raise click.BadParameter(
            f"expected MODULE:FUNCTION or a stored program (.jaxpr or .json file), got {target!r}"
        )
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None or not path.exists():
            raise click.BadParameter(f"no Python file at {module_name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path:
            sys.path.insert(0, "")  # as `python -m` does: modules of the current directory
        try:
            module = importlib.import_module(module_name)
        except ImportError as err:
            raise click.BadParameter(f"cannot import {module_name!r}: {err}") from None
    found: Any = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise click.BadParameter(f"{module_name} has no attribute {attribute!r}") from None
    if not callable(found):
        raise click.BadParameter(f"{target} is a {type(found).__name__}, not a function")
    fn: Callable[..., Any] = found
    return fn


def _jitted(fn: Callable[..., Any]) -> Any:
    return fn if lamina_runtime.jit_function_of(fn) is not None else lamina.jit(fn)


@contextmanager
def progress(
    label: str, *, after: float = PROGRESS_AFTER, out: TextIO | None = None
) -> Iterator[None]:
    """Show `label` and the elapsed time on stderr while the block runs longer than `after` s.

    On a terminal one line is redrawn; elsewhere (logs, CI) one line starts and one ends it.
    """
    stream = out or sys.stderr
    live = stream.isatty()
    done = threading.Event()
    start = time.perf_counter()
    shown = threading.Event()

    def report() -> None:
        if done.wait(after):
            return
        shown.set()
        if not live:
            stream.write(f"{label} ...\n")
            stream.flush()
            return
        while not done.is_set():
            stream.write(f"\r{label} ... {time.perf_counter() - start:.1f} s")
            stream.flush()
            done.wait(0.2)

    thread = threading.Thread(target=report, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown.is_set():
            end = "\r" if live else ""
            stream.write(f"{end}{label}: done in {time.perf_counter() - start:.1f} s\n")
            stream.flush()


def _human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _named(tree: Any, root: str) -> list[tuple[str, Any]]:
    """`(name, leaf)` for each leaf, named as Python would index it from `root`."""
    return [(root + tu.keystr(path), leaf) for path, leaf in tu.tree_leaves_with_path(tree)]


def _named_inputs(args_info: Any) -> list[tuple[str, Any]]:
    """The leaves of an `(args, kwargs)` tree, named `args[0]...` and by keyword."""
    args, kwargs = args_info
    named = _named(args, "args")
    for name in sorted(kwargs):
        named += _named(kwargs[name], name)
    return named


def _types(named: Sequence[tuple[str, Any]]) -> str:
    return ", ".join(f"{name}: {_short(x)}" for name, x in named) or "nothing"


def _short(struct: Any) -> str:
    dims = ",".join(str(d) for d in struct.shape)
    return f"{dtypes.short_dtype_name(np.dtype(struct.dtype))}[{dims}]"


# ---- the commands ---------------------------------------------------------------------------

_FUNCTION = click.argument("function", metavar="FUNCTION")
_ARGS = click.option(
    "--args",
    "arg_types",
    default=None,
    metavar="TYPES",
    help="The argument types, comma-separated: 'f32[8,2],i32[],bool'. Default: no arguments "
    "(for a stored program: the types it takes).",
)


def _specs(arg_types: str) -> list[lamina.ShapeDtypeStruct]:
    try:
        return parse_arg_specs(arg_types)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--args'") from None


def _given(arg_types: str | None) -> list[lamina.ShapeDtypeStruct] | None:
    return None if arg_types is None else _specs(arg_types)


def _target(function: str, arg_types: str | None) -> tuple[Any, list[lamina.ShapeDtypeStruct]]:
    """The function FUNCTION names, as jit would take it, and the types to trace it at."""
    if is_program_file(function):
        closed, specs = stored_program(Path(function), _given(arg_types))
        return lamina.jit(program_function(closed, Path(function).stem)), specs
    return _jitted(load_function(function)), _specs(arg_types or "")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(lamina.__version__, prog_name="lamina")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The compilation cache directory (default: $LAMINA_CACHE_DIR or ~/.cache/lamina).",
)
@click.pass_context
def cli(ctx: click.Context, cache_dir: Path | None) -> None:
    """Lamina's command line: print, compile, save and run functions; manage the cache.

    A FUNCTION is named MODULE:FUNCTION, where MODULE is an importable module (the current
    directory included) or a path to a .py file; or it is a stored program, a .jaxpr (text)
    or .json file that `lamina jaxpr --to` wrote, which takes the types its jaxpr declares.
    """
    if cache_dir is not None:
        ctx.with_resource(lamina.config(jax_compilation_cache_dir=str(cache_dir)))
    try:  # a malformed LAMINA_* cache variable: one line now, not a traceback mid-command
        lamina_runtime.compilation_cache.configured_settings()
    except (TypeError, ValueError) as err:
        raise click.ClickException(str(err)) from None


@cli.command()
@_FUNCTION
@_ARGS
@click.option(
    "--to",
    type=click.Choice(["text", "json"]),
    help="Convert to this form (default: text, or json for an -o ending in .json).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of printing (text: the values of its elided constants go to "
    "FILE.npz).",
)
def jaxpr(function: str, arg_types: str | None, to: str | None, output: Path | None) -> None:
    """Print the jaxpr of FUNCTION traced at the given argument types, or store it.

    A stored program (.jaxpr or .json) is read, type-checked and printed, or converted.

    Examples: lamina jaxpr mymodel:predict --args 'f32[32,256]' -o predict.json;
    lamina jaxpr predict.json --to text
    """
    form = output_form(to, output)
    if is_program_file(function):
        closed, _ = stored_program(Path(function), _given(arg_types))
    else:
        closed = lamina.make_jaxpr(load_function(function))(*_specs(arg_types or ""))
    save_program(closed, form, output)


@cli.command()
@_FUNCTION
@_ARGS
@click.option("--debug-info", is_flag=True, help="Include source locations.")
def hlo(function: str, arg_types: str | None, debug_info: bool) -> None:
    """Print the StableHLO module of jit(FUNCTION) at the given argument types.

    Example: lamina hlo mymodel:predict --args 'f32[32,256]'
    """
    jitted, specs = _target(function, arg_types)
    lowered = jitted.lower(*specs)
    click.echo(lowered.as_text(debug_info=debug_info), nl=False)


@cli.command("compile")
@_FUNCTION
@_ARGS
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the compiled function.",
)
@click.option(
    "--xla-option",
    "xla_options",
    multiple=True,
    metavar="NAME=VALUE",
    help="An XLA compiler option (repeatable), as jit's compiler_options; "
    "e.g. xla_cpu_experimental_ynn_fusion_type= for a faster first run after loading.",
)
@click.option("--progress-after", type=float, default=PROGRESS_AFTER, hidden=True)
def compile_command(
    function: str,
    arg_types: str | None,
    output: Path,
    xla_options: tuple[str, ...],
    progress_after: float,
) -> None:
    """Compile jit(FUNCTION) for the given argument types and save it to a file.

    The file holds the executable and the constants FUNCTION closes over: `lamina run FILE`
    or `lamina.aot.load(FILE)` runs it in any process with the same jaxlib and platform.

    Example: lamina compile mymodel:predict --args 'f32[32,256]' -o predict.lamina
    """
    jitted, specs = _target(function, arg_types)
    options = dict(_xla_option(text) for text in xla_options)
    with progress(f"compiling {function}", after=progress_after):
        try:
            compiled = jitted.lower(*specs).compile(compiler_options=options)
        except lamina_runtime.CompileError as err:
            raise click.ClickException(str(err)) from None
    try:
        lamina.aot.save(compiled, output)
    except lamina.aot.TreeCodecError as err:
        raise click.ClickException(str(err)) from None
    takes = _types(_named_inputs(compiled.args_info))
    returns = _types(_named(compiled.out_info, "out"))
    click.echo(
        f"wrote {output} ({_human(output.stat().st_size)}): takes {takes}; returns {returns}"
    )


def _xla_option(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise click.BadParameter(f"{text!r}: give NAME=VALUE", param_hint="--xla-option")
    return name, value


def _input(token: str, struct: Any, where: str) -> np.ndarray:
    if token in ("zeros", "ones"):
        return np.zeros(struct.shape, struct.dtype) + (token == "ones")
    path = Path(token)
    if not path.exists():
        raise click.BadParameter(f"{where}: no file {token!r} (give a .npy file, zeros or ones)")
    try:
        value: np.ndarray = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise click.BadParameter(f"{where}: cannot read {token} as .npy ({err})") from None
    return value


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option(
    "--save",
    "save_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each output to DIR/out<i>.npy.",
)
def run(file: Path, inputs: Sequence[str], save_dir: Path | None) -> None:
    """Load a compiled function from FILE and run it on INPUTs.

    Each INPUT is a .npy file, `zeros` or `ones` (of the type the function takes there), one
    per array argument in order. Outputs are printed, and saved with --save.

    Example: lamina run predict.lamina x.npy
    """
    try:
        loaded = lamina.aot.load(file)
    except (lamina.aot.ArtifactError, OSError) as err:
        raise click.ClickException(f"{file}: {err}") from None
    expected = _named_inputs(loaded.args_info)
    if len(inputs) != len(expected):
        raise click.UsageError(
            f"{file} takes {len(expected)} input(s) ({_types(expected)}), got {len(inputs)}; "
            "give a .npy file, zeros or ones for each"
        )
    leaves = [
        _input(token, struct, name) for token, (name, struct) in zip(inputs, expected, strict=True)
    ]
    args, kwargs = tu.tree_unflatten(loaded.in_tree, leaves)
    try:
        out = loaded(*args, **kwargs)
    except TypeError as err:
        raise click.ClickException(str(err)) from None
    if save_dir is not None:
        save_dir.mkdir(parents=True, exist_ok=True)
    for i, (name, value) in enumerate(_named(out, "out")):
        array = np.asarray(value)
        click.echo(f"{name}: {_short(array)}")
        click.echo(np.array2string(array, threshold=64))
        if save_dir is not None:
            np.save(save_dir / f"out{i}.npy", array)
            click.echo(f"  saved to {save_dir / f'out{i}.npy'}")


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def inspect(file: Path) -> None:
    """Describe the compiled function saved in FILE, without loading it."""
    try:
        info = lamina.aot.describe(file.read_bytes())
    except (lamina.aot.ArtifactError, OSError) as err:
        raise click.ClickException(f"{file}: {err}") from None
    built = info.built_with
    click.echo(f"function:   {info.name}")
    click.echo(f"takes:      {_types(_named_inputs(info.args_info))}")
    click.echo(f"returns:    {_types(_named(info.out_info, 'out'))}")
    click.echo(f"constants:  {info.num_consts} ({_human(info.const_bytes)})")
    click.echo(f"executable: {_human(info.executable_bytes)}")
    click.echo(
        f"built by:   lamina {built.get('lamina')}, jaxlib {built.get('jaxlib')}, "
        f"{built.get('platform')} ({built.get('device_kind')})"
    )
    click.echo(f"loads here: {'yes' if info.incompatibility is None else 'no'}")
    if info.incompatibility is not None:
        click.echo(f"  {info.incompatibility}")


@cli.group()
def cache() -> None:
    """The persistent compilation cache (on by default).

    Configure it with $LAMINA_CACHE_DIR or `lamina --cache-dir DIR`, and the options
    jax_enable_compilation_cache, jax_compilation_cache_dir and
    jax_compilation_cache_max_size (environment: LAMINA_ENABLE_COMPILATION_CACHE, ...).
    """


@cache.command("path")
def cache_path() -> None:
    """Print the cache directory."""
    click.echo(str(lamina_runtime.configured_cache_dir()))


@cache.command("info")
def cache_info() -> None:
    """Print where the cache is, whether it is on, and how large it is."""
    cache = lamina_runtime.runtime().persistent_cache
    root = lamina_runtime.configured_cache_dir()
    click.echo(f"directory: {root}")
    click.echo(f"enabled:   {'yes' if cache is not None else 'no'}")
    if cache is None:
        return
    try:
        info = cache.info()
    except OSError as err:
        raise click.ClickException(f"cannot read the cache directory {root}: {err}") from None
    bound = "unbounded" if info.max_bytes is None else f"at most {_human(info.max_bytes)}"
    click.echo(f"entries:   {info.entries}")
    click.echo(f"size:      {_human(info.total_bytes)} ({bound})")


@cache.command("clear")
def cache_clear() -> None:
    """Remove every entry of the cache (other files in the directory are left alone)."""
    root = lamina_runtime.configured_cache_dir()
    try:
        removed = lamina_runtime.CompilationCache(root).clear()
    except OSError as err:
        raise click.ClickException(f"cannot clear the cache directory {root}: {err}") from None
    click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'} from {root}")


@cli.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Run the showcase: what Lamina can do today, layer by layer."""
    ctx.exit(run_demo())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line on `argv` (default: `sys.argv[1:]`); return the exit status."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="lamina")
    except SystemExit as exit:
        code = exit.code
        return code if isinstance(code, int) else (0 if code is None else 1)
