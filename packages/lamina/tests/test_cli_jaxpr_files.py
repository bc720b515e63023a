"""Stored programs on the `lamina` command line: `.jaxpr` and `.json` files as FUNCTIONs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from click.testing import Result

import lamina
import lamina.numpy as jnp
from lamina import jaxpr_io
from lamina_core import ClosedJaxpr
from lamina_core.testing import load_test_module

harness = load_test_module(Path(__file__).parent, "cli_harness")
invoke: Callable[..., Result] = harness.invoke
model = harness.model  # the fixture
W: np.ndarray = harness.W
PREDICT_ARGS = "f32[2,8],f32[8]"


def predict(x: Any, b: Any) -> Any:
    return jnp.tanh(x @ W) + b


def predict_jaxpr() -> ClosedJaxpr:
    closed: ClosedJaxpr = lamina.make_jaxpr(predict)(
        lamina.ShapeDtypeStruct((2, 8), np.float32), lamina.ShapeDtypeStruct((8,), np.float32)
    )
    return closed


def as_file(text: str) -> str:
    """`text` as the CLI writes it: ending in one newline."""
    return text.rstrip("\n") + "\n"


@pytest.fixture
def stored(model: str, tmp_path: Path) -> Path:
    """`predict` stored as text, `predict.jaxpr`, with its constant in `predict.jaxpr.npz`."""
    path = tmp_path / "predict.jaxpr"
    out = invoke("jaxpr", f"{model}:predict", "--args", PREDICT_ARGS, "-o", str(path)).output
    assert out == f"wrote {path} and {path}.npz (1 elided constant(s))\n"
    return path


def test_a_function_stored_as_text_reads_back_as_it_prints(stored: Path) -> None:
    text = str(predict_jaxpr())
    assert stored.read_text() == text + "\n"
    with np.load(f"{stored}.npz") as npz:
        np.testing.assert_array_equal(npz["arr_0"], W)
    assert invoke("jaxpr", str(stored)).output == text + "\n"


def test_a_function_stored_as_json_is_to_json_of_its_jaxpr(model: str, tmp_path: Path) -> None:
    path = tmp_path / "predict.json"
    # -o ending in .json implies --to json
    invoke("jaxpr", f"{model}:predict", "--args", PREDICT_ARGS, "-o", str(path))
    assert path.read_text() == as_file(jaxpr_io.to_json(predict_jaxpr()))
    assert not Path(f"{path}.npz").exists()
    assert invoke("jaxpr", str(path)).output == str(predict_jaxpr()) + "\n"


def test_conversion_both_ways(stored: Path, tmp_path: Path) -> None:
    as_json = as_file(jaxpr_io.to_json(predict_jaxpr()))
    assert invoke("jaxpr", str(stored), "--to", "json").output == as_json
    json_file = tmp_path / "p.json"
    assert invoke("jaxpr", str(stored), "--to", "json", "-o", str(json_file)).output == (
        f"wrote {json_file}\n"
    )
    assert json_file.read_text() == as_json
    back = tmp_path / "back.jaxpr"
    invoke("jaxpr", str(json_file), "--to", "text", "-o", str(back))
    assert back.read_text() == stored.read_text()
    assert Path(f"{back}.npz").read_bytes() == Path(f"{stored}.npz").read_bytes()
    assert invoke("jaxpr", str(json_file), "--to", "text").output == stored.read_text()


def test_non_float32_constants_keep_their_dtype_beside_the_text(model: str, tmp_path: Path) -> None:
    path = tmp_path / "half.jaxpr"
    invoke("jaxpr", f"{model}:half", "--args", "bf16[4]", "-o", str(path))
    closed = jaxpr_io.parse(path.read_text(), [np.arange(4, dtype=ml_dtypes.bfloat16)])
    as_json = tmp_path / "half.json"
    invoke("jaxpr", str(path), "-o", str(as_json))  # reads the bfloat16 values back
    assert as_json.read_text() == as_file(jaxpr_io.to_json(closed))


def test_text_without_constants_removes_a_stale_constants_file(model: str, tmp_path: Path) -> None:
    path = tmp_path / "pair.jaxpr"
    Path(f"{path}.npz").write_bytes(b"stale")
    assert invoke("jaxpr", f"{model}:pair", "--args", "f32[3]", "-o", str(path)).output == (
        f"wrote {path}\n"
    )
    assert not Path(f"{path}.npz").exists()
    invoke("jaxpr", str(path))


@pytest.mark.parametrize("suffix", [".jaxpr", ".json"])
def test_hlo_of_a_stored_program_is_the_function_s(model: str, tmp_path: Path, suffix: str) -> None:
    # The module is named after the file: predict.json lowers as `module @jit_predict`.
    path = tmp_path / f"predict{suffix}"
    invoke("jaxpr", f"{model}:predict", "--args", PREDICT_ARGS, "-o", str(path))
    expected = invoke("hlo", f"{model}:predict", "--args", PREDICT_ARGS).output
    assert "{jax.const = true}" in expected
    assert invoke("hlo", str(path)).output == expected


@pytest.mark.parametrize("suffix", [".jaxpr", ".json"])
def test_compile_and_run_a_stored_program(model: str, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"predict{suffix}"
    invoke("jaxpr", f"{model}:predict", "--args", PREDICT_ARGS, "-o", str(path))
    compiled = tmp_path / "predict.lamina"
    out = invoke("compile", str(path), "-o", str(compiled)).output
    assert "takes args[0]: f32[2,8], args[1]: f32[8]; returns out: f32[2,8]" in out
    x = np.arange(16, dtype=np.float32).reshape(2, 8) / 16
    b = np.linspace(0, 1, 8, dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "b.npy", b)
    invoke("run", str(compiled), str(tmp_path / "x.npy"), str(tmp_path / "b.npy"),
           "--save", str(tmp_path))  # fmt: skip
    np.testing.assert_array_equal(
        np.load(tmp_path / "out0.npy"), np.asarray(lamina.jit(predict)(x, b))
    )


def test_several_outputs_run_as_a_tuple(model: str, tmp_path: Path) -> None:
    path = tmp_path / "pair.json"
    invoke("jaxpr", f"{model}:pair", "--args", "f32[3]", "-o", str(path))
    compiled = tmp_path / "pair.lamina"
    invoke("compile", str(path), "-o", str(compiled))
    assert invoke("run", str(compiled), "ones").output == (
        "out[0]: f32[3]\n[2. 2. 2.]\nout[1]: f32[]\n3.\nout[2]: f32[]\n1.\n"
    )


def test_args_of_a_stored_program_must_match_its_types(stored: Path) -> None:
    assert invoke("hlo", str(stored), "--args", PREDICT_ARGS).output.startswith("module @")
    out = invoke("hlo", str(stored), "--args", "f32[2,8]", code=2).output
    assert (
        "Invalid value for '--args': f32[2,8] conflicts with "
        f"{stored}, whose program takes f32[2,8],f32[8]; leave --args out" in out
    )
    assert "conflicts" in invoke("jaxpr", str(stored), "--args", "f32[9]", code=2).output


def test_to_and_the_output_suffix_must_agree(model: str, tmp_path: Path) -> None:
    out = invoke("jaxpr", f"{model}:pair", "--args", "f32[3]", "--to", "json",
                 "-o", str(tmp_path / "p.jaxpr"), code=2).output  # fmt: skip
    assert "--to json does not write a" in out and "p.jaxpr file" in out
    assert not (tmp_path / "p.jaxpr").exists()


def test_a_target_neither_function_nor_program_is_explained() -> None:
    out = invoke("jaxpr", "prog.txt", code=2).output
    assert "expected MODULE:FUNCTION or a stored program (.jaxpr or .json file)" in out


def _error(*args: str) -> str:
    """The message of a failing command: on stderr alone, no traceback, exit status 2."""
    result = invoke(*args, code=2)
    assert "Traceback" not in result.output
    return result.stderr


def test_malformed_text_gives_a_located_error(stored: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jaxpr"
    bad.write_text(stored.read_text().replace("tanh", "tanhh"))
    Path(f"{bad}.npz").write_bytes(Path(f"{stored}.npz").read_bytes())
    expected = f"{bad}:6:18: unknown primitive 'tanhh' (is the package defining it imported?)\n"
    for command in ("jaxpr", "hlo", "compile"):
        extra = ("-o", str(tmp_path / "x.lamina")) if command == "compile" else ()
        assert _error(command, str(bad), *extra) == expected
    bad.write_text(stored.read_text().replace("f:f32[2,8] = add", "f:f32[2,9] = add"))
    assert _error("jaxpr", str(bad)) == (
        f"{bad}:8:5: type mismatch: 'add' of these operands gives f32[2,8], "
        "the text says f32[2,9]\n"
    )
    assert _error("jaxpr", str(tmp_path / "missing.jaxpr")).startswith(
        f"{tmp_path / 'missing.jaxpr'}: cannot read the file"
    )


def test_text_without_its_constants_file_names_the_first_missing_one(
    stored: Path, tmp_path: Path
) -> None:
    alone = tmp_path / "alone.jaxpr"
    alone.write_text(stored.read_text())
    assert _error("hlo", str(alone)) == (
        f"{alone}:5:9: no value for [...]:f32[8,8], elided constant number 1 in print order "
        f"(consts has 0); the values of elided constants are read from {alone}.npz, which does "
        "not exist (`lamina jaxpr ... --to text -o FILE` writes it)\n"
    )
    Path(f"{alone}.npz").write_bytes(b"not an npz")
    assert _error("hlo", str(alone)).startswith(f"{alone}.npz: cannot read the elided constants")


def test_malformed_json_gives_a_located_error(model: str, tmp_path: Path) -> None:
    path = tmp_path / "pair.json"
    invoke("jaxpr", f"{model}:pair", "--args", "f32[3]", "-o", str(path))
    bad = tmp_path / "bad.json"
    bad.write_text(path.read_text().replace('"version": 1,', '"version": 1,,'))
    assert _error("jaxpr", str(bad)) == (
        f"{bad}:3:16: not JSON: Expecting property name enclosed in double quotes\n"
    )
    bad.write_text(path.read_text().replace('"mul"', '"mull"'))
    assert _error("hlo", str(bad)) == (
        f"{bad}: program.eqns[0]: unknown primitive 'mull' (is the package defining it imported?)\n"
    )
