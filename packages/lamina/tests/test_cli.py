"""The `lamina` command line, driven through click's CliRunner (and once as a real process)."""

from __future__ import annotations

import io
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

import lamina
import lamina._cli
import lamina.numpy as jnp
from lamina._cli import cli, main, parse_arg_specs, progress
from lamina_core.testing import load_test_module

harness = load_test_module(Path(__file__).parent, "cli_harness")
invoke: Callable[..., Result] = harness.invoke
model = harness.model  # the fixture
W: np.ndarray = harness.W


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["jaxpr"],
        ["hlo"],
        ["compile"],
        ["run"],
        ["inspect"],
        ["cache"],
        ["cache", "path"],
        ["cache", "info"],
        ["cache", "clear"],
        ["demo"],
    ],
)
def test_every_command_has_help(command: list[str]) -> None:
    result = invoke(*command, "--help")
    assert result.output.startswith("Usage: ")
    assert "Show this message and exit." in result.output


def test_version() -> None:
    assert lamina.__version__ in invoke("--version").output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("f32[8],f32[8]", [((8,), np.float32), ((8,), np.float32)]),
        (" f32[8, 2] , i32[] ,bool", [((8, 2), np.float32), ((), np.int32), ((), np.bool_)]),
        ("bf16[3],float16[1,1],u8", [((3,), "bfloat16"), ((1, 1), np.float16), ((), np.uint8)]),
        ("", []),
    ],
)
def test_argument_types_parse(text: str, expected: list[tuple[tuple[int, ...], Any]]) -> None:
    specs = parse_arg_specs(text)
    assert [(s.shape, s.dtype) for s in specs] == [(s, np.dtype(d)) for s, d in expected]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q32[8]", "unknown dtype 'q32'"),
        ("f32[a]", "dimensions must be integers"),
        ("f32[8] f32[8]", "expected ','"),
        ("[8]", "cannot read"),
    ],
)
def test_bad_argument_types_are_explained(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_arg_specs(text)


def test_jaxpr_prints_what_make_jaxpr_prints(model: str) -> None:
    out = invoke("jaxpr", f"{model}:pair", "--args", "f32[3]").output
    assert (
        out
        == str(
            lamina.make_jaxpr(lambda x: {"double": x * 2, "parts": (x.sum(), x.max())})(
                lamina.ShapeDtypeStruct((3,), np.float32)
            )
        )
        + "\n"
    )


def test_importable_module_names_work(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(Path(model).parent)
    out = invoke("jaxpr", f"{Path(model).stem}:predict", "--args", "f32[2,8],f32[8]").output
    assert "tanh" in out and "a:f32[2,8] b:f32[8]" in out


def test_hlo_prints_the_stablehlo_module(model: str) -> None:
    out = invoke("hlo", f"{model}:predict", "--args", "f32[2,8],f32[8]").output
    assert out.startswith("module @jit_predict")
    assert "{jax.const = true}" in out and "stablehlo.tanh" in out
    assert "loc(" not in out
    assert (
        "loc("
        in invoke("hlo", f"{model}:predict", "--args", "f32[2,8],f32[8]", "--debug-info").output
    )


def test_already_jitted_function_is_used_as_it_is(model: str) -> None:
    out = invoke("hlo", f"{model}:already_jitted", "--args", "f32[4]").output
    assert out.startswith("module @jit_already_jitted")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_colon", "expected MODULE:FUNCTION"),
        ("no_such_module_anywhere:f", "cannot import"),
        ("{model}:missing", "has no attribute 'missing'"),
        ("{model}:NOT_A_FUNCTION", "not a function"),
        ("/no/such/file.py:f", "no Python file"),
    ],
)
def test_bad_function_names_are_explained(model: str, target: str, message: str) -> None:
    result = invoke("jaxpr", target.format(model=model), code=2)
    assert message in result.output


def test_compile_then_run_with_npy_and_zeros(model: str, tmp_path: Path) -> None:
    file = tmp_path / "predict.lamina"
    out = invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file))
    assert out.output.startswith(f"wrote {file}")
    assert "takes args[0]: f32[2,8], args[1]: f32[8]; returns out: f32[2,8]" in out.output
    x = np.arange(16, dtype=np.float32).reshape(2, 8) / 16
    np.save(tmp_path / "x.npy", x)
    result = invoke("run", str(file), str(tmp_path / "x.npy"), "zeros", "--save", str(tmp_path))
    assert result.output.startswith("out: f32[2,8]\n")
    np.testing.assert_allclose(np.load(tmp_path / "out0.npy"), np.tanh(x @ W), rtol=1e-5)


def test_compile_takes_xla_options(model: str, tmp_path: Path) -> None:
    file = tmp_path / "predict.lamina"
    option = "xla_cpu_experimental_ynn_fusion_type="
    invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file),
           "--xla-option", option)  # fmt: skip
    assert invoke("run", str(file), "ones", "zeros").output.startswith("out: f32[2,8]\n")
    bad = invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file),
                 "--xla-option", "xla_no_such_option=1", code=1)  # fmt: skip
    assert "No such compile option: 'xla_no_such_option'" in bad.output
    assert "give NAME=VALUE" in invoke(
        "compile", f"{model}:predict", "--args", "f32[8]", "-o", str(file), "--xla-option",
        "novalue", code=2,
    ).output  # fmt: skip


def test_run_prints_every_output_by_path(model: str, tmp_path: Path) -> None:
    file = tmp_path / "pair.lamina"
    invoke("compile", f"{model}:pair", "--args", "f32[3]", "-o", str(file))
    out = invoke("run", str(file), "ones").output
    assert out == (
        "out['double']: f32[3]\n[2. 2. 2.]\n"
        "out['parts'][0]: f32[]\n3.\n"
        "out['parts'][1]: f32[]\n1.\n"
    )


def test_run_checks_inputs(model: str, tmp_path: Path) -> None:
    file = tmp_path / "predict.lamina"
    invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file))
    assert "takes 2 input(s) (args[0]: f32[2,8], args[1]: f32[8]), got 1" in (
        invoke("run", str(file), "zeros", code=2).output
    )
    np.save(tmp_path / "wrong.npy", np.zeros(3, np.float32))
    wrong = invoke("run", str(file), "zeros", str(tmp_path / "wrong.npy"), code=1).output
    assert "Argument 'args[1]' compiled with float32[8] and called with float32[3]" in wrong
    assert "no file 'nope.npy'" in invoke("run", str(file), "zeros", "nope.npy", code=2).output


def test_run_refuses_a_corrupted_file(model: str, tmp_path: Path) -> None:
    file = tmp_path / "predict.lamina"
    invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file))
    file.write_bytes(file.read_bytes()[:-5])
    assert "checksum" in invoke("run", str(file), "zeros", "zeros", code=1).output
    assert "checksum" in invoke("inspect", str(file), code=1).output


def test_inspect_describes_without_loading(model: str, tmp_path: Path) -> None:
    file = tmp_path / "predict.lamina"
    invoke("compile", f"{model}:predict", "--args", "f32[2,8],f32[8]", "-o", str(file))
    out = invoke("inspect", str(file)).output
    assert "function:   predict\n" in out
    assert "takes:      args[0]: f32[2,8], args[1]: f32[8]\n" in out
    assert "constants:  1 (256 B)\n" in out
    assert "loads here: yes" in out


def test_compiled_file_runs_in_a_fresh_process(model: str, tmp_path: Path) -> None:
    file = tmp_path / "pair.lamina"
    invoke("compile", f"{model}:pair", "--args", "f32[3]", "-o", str(file))
    proc = subprocess.run(
        [sys.executable, "-m", "lamina", "run", str(file), "ones"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("out['double']: f32[3]\n[2. 2. 2.]\n")


def test_cache_commands(tmp_path: Path, model: str) -> None:
    root = tmp_path / "cache"
    assert invoke("--cache-dir", str(root), "cache", "path").output == f"{root}\n"
    info = invoke("--cache-dir", str(root), "cache", "info").output
    assert (
        info
        == f"directory: {root}\nenabled:   yes\nentries:   0\nsize:      0 B (at most 1.0 GiB)\n"
    )
    invoke(
        "--cache-dir",
        str(root),
        "compile",
        f"{model}:pair",
        "--args",
        "f32[5]",
        "-o",
        str(tmp_path / "f"),
    )
    assert "entries:   1\n" in invoke("--cache-dir", str(root), "cache", "info").output
    assert (
        invoke("--cache-dir", str(root), "cache", "clear").output
        == f"removed 1 entry from {root}\n"
    )
    assert "entries:   0\n" in invoke("--cache-dir", str(root), "cache", "info").output


def test_cache_info_when_disabled() -> None:
    with lamina.config(jax_enable_compilation_cache=False):
        assert "enabled:   no\n" in invoke("cache", "info").output


def test_demo_runs_the_showcase(monkeypatch: pytest.MonkeyPatch) -> None:
    # The showcase itself is tested where it is written; here only its wiring and exit status.
    def fake_demo() -> int:
        print("Lamina showcase (fake)")
        return 3

    monkeypatch.setattr(lamina._cli, "run_demo", fake_demo)
    assert invoke("demo", code=3).output == "Lamina showcase (fake)\n"


def test_main_returns_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "path"]) == 0
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


def test_progress_is_shown_only_for_long_blocks() -> None:
    out = io.StringIO()
    with progress("compiling f", after=0.0, out=out):
        time.sleep(0.05)
    assert out.getvalue().startswith("compiling f ...\n")
    assert "compiling f: done in" in out.getvalue()
    quiet = io.StringIO()
    with progress("compiling g", after=10.0, out=quiet):
        pass
    assert quiet.getvalue() == ""


def test_compile_shows_progress_on_stderr(model: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "compile",
            f"{model}:pair",
            "--args",
            "f32[2]",
            "-o",
            str(tmp_path / "f"),
            "--progress-after",
            "0",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "compiling" in result.stderr and "done in" in result.stderr


def test_umbrella_exports_aot() -> None:
    assert "aot" in lamina.__all__
    compiled = lamina.jit(lambda x: jnp.sin(x) * W.sum()).lower(np.ones(3, np.float32)).compile()
    loaded = lamina.aot.deserialize(lamina.aot.serialize(compiled))
    np.testing.assert_array_equal(
        np.asarray(loaded(np.ones(3, np.float32))), np.asarray(compiled(np.ones(3, np.float32)))
    )
