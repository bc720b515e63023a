"""Fault injection for saved functions: raw corruption, and header tampering by a writer that
recomputes the checksum. Every case ends in a correct result or a clean `ArtifactError`.

Cases where XLA sees the damaged part (compile options, the executable section) run in a child
process, so that an abort is a failed test, not a dead test run.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_core import tree_util
from lamina_runtime import _bridge_executables, aot, artifact
from lamina_runtime.artifact import FORMAT_VERSION, MAGIC, PREFIX, ArtifactError
from lamina_runtime.tree_codec import MAX_DEPTH

f32 = np.float32
WEIGHTS = np.linspace(-1.0, 1.0, 24, dtype=f32).reshape(3, 8)
X = np.arange(6, dtype=f32).reshape(2, 3) / 6
Y = np.arange(4, dtype=f32)


def model(x: Any, y: Any, *, scale: Any) -> Any:
    """A constant, a keyword argument, and a dict of two outputs of two dtypes."""
    return {"h": jnp.tanh(x @ WEIGHTS) * scale, "n": (jnp.sum(y) * 3).astype(np.int32)}


def other(x: Any) -> Any:
    """Another program: its executable is swapped into `model`'s file."""
    return jnp.cos(x)


@pytest.fixture(scope="module")
def saved() -> bytes:
    data: bytes = lr.jit(model).lower(X, Y, scale=f32(2)).compile().serialize()
    return data


@pytest.fixture(scope="module")
def expected(saved: bytes) -> dict[str, np.ndarray]:
    out = aot.deserialize(saved)(X, Y, scale=f32(2))
    return {k: np.asarray(v) for k, v in out.items()}


def split(data: bytes) -> tuple[dict[str, Any], bytes]:
    header = artifact.read_header(data)
    _, _, size, _ = PREFIX.unpack_from(data)
    return header, data[PREFIX.size + size :]


def rebuild(header: Any, body: bytes, *, raw_header: bytes | None = None) -> bytes:
    """A file with this header and body and a correct checksum: a hostile or buggy writer."""
    encoded = raw_header if raw_header is not None else json.dumps(header).encode()
    # Deeper than `json.dumps` can write: spliced in as text.
    encoded = encoded.replace(DEEP.encode(), b'{"tuple":[' * 5000 + b'"*"' + b"]}" * 5000)
    payload = encoded + body
    return PREFIX.pack(MAGIC, FORMAT_VERSION, len(encoded), hashlib.sha256(payload).digest()) + (
        payload
    )


def edit(data: bytes, change: Callable[[dict[str, Any]], Any]) -> bytes:
    header, body = split(data)
    header = copy.deepcopy(header)
    result = change(header)
    return rebuild(header if result is None else result, body)


DEEP = "@nested 5000 deep@"
"""Stands for a tree nested 5000 deep in a header (`rebuild` writes it)."""


def nested(depth: int) -> Any:
    tree: Any = "*"
    for _ in range(depth):
        tree = {"tuple": [tree]}
    return tree


def set_path(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit setting `header[a][b]...` (path `a/b/...`, integers index lists)."""

    def change(header: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.lstrip("-").isdigit() else p for p in path.split("/")]
        node: Any = header
        for p in parents:
            node = node[p]
        node[last] = value

    return change


def drop(field: str) -> Callable[[dict[str, Any]], None]:
    def change(header: dict[str, Any]) -> None:
        del header[field]

    return change


# ---- raw corruption: the checksum refuses every one -----------------------------------------


@pytest.mark.parametrize("fraction", [i / 16 for i in range(16)] + [0.999])
def test_flipped_byte_anywhere_is_refused(saved: bytes, fraction: float) -> None:
    at = min(int(len(saved) * fraction), len(saved) - 1)
    damaged = saved[:at] + bytes([saved[at] ^ 0x40]) + saved[at + 1 :]
    with pytest.raises(ArtifactError):
        aot.deserialize(damaged)
    with pytest.raises(ArtifactError):
        aot.describe(damaged)


@pytest.mark.parametrize("keep", [0, 7, 8, 15, PREFIX.size - 1, PREFIX.size, 200, -100, -1])
def test_truncated_file_is_refused(saved: bytes, keep: int) -> None:
    with pytest.raises(ArtifactError):
        aot.deserialize(saved[:keep])


def test_appended_bytes_and_a_header_length_past_the_end_are_refused(saved: bytes) -> None:
    with pytest.raises(ArtifactError, match="checksum"):
        aot.deserialize(saved + b"\0")
    _, version, _, digest = PREFIX.unpack_from(saved)
    too_long = PREFIX.pack(MAGIC, version, 1 << 31, digest) + saved[PREFIX.size :]
    with pytest.raises(ArtifactError):
        aot.deserialize(too_long)


# ---- header tampering with a recomputed checksum: refused before XLA sees it ----------------

MALFORMED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "header is a list": lambda h: [h],
    "header is a number": lambda h: 7,
    **{f"no {field}": drop(field) for field in sorted(artifact._HEADER_FIELDS)},
    "name not a string": set_path("name", ["model"]),
    "built_with not a dict": set_path("built_with", "lamina"),
    "built_with value not a string": set_path("built_with/jaxlib", 10),
    "byteorder unknown": set_path("byteorder", "middle"),
    "in shape negative": set_path("in_avals/0/shape", [-2, 3]),
    "in shape float": set_path("in_avals/0/shape", [2.0, 3]),
    "in shape bool": set_path("in_avals/0/shape", [True, 3]),
    "in shape string": set_path("in_avals/0/shape", "2,3"),
    "in shape huge": set_path("in_avals/0/shape", [1 << 40, 1 << 40]),
    "in shape overflows int64": set_path("in_avals/0/shape", [1 << 70]),
    "in dtype object": set_path("in_avals/0/dtype", "object"),
    "in dtype unicode": set_path("in_avals/0/dtype", "<U8"),
    "in dtype not a string": set_path("in_avals/0/dtype", 5),
    "in weak_type not a bool": set_path("in_avals/0/weak_type", "yes"),
    "in aval not a dict": set_path("in_avals/0", [2, 3]),
    "in_avals not a list": set_path("in_avals", {"0": 1}),
    "one input too few": lambda h: h["in_avals"].pop() and None,
    "out_avals one too many": lambda h: h["out_avals"].append(h["out_avals"][0]),
    "donated too short": set_path("donated", [False]),
    "donated not bools": set_path("donated", [0, 0, 0]),
    "kept not a list": set_path("kept", 3),
    "kept past the inputs": set_path("kept", [0, 99]),
    "kept out of order": set_path("kept", [1, 0]),
    "kept repeats an input": set_path("kept", [0, 0]),
    "executable section past the end": set_path("executable/1", 1 << 40),
    "executable section negative": set_path("executable/0", -1),
    "executable section not a pair": set_path("executable", [0]),
    "executable section floats": set_path("executable", [0.0, 10.0]),
    "options section a string": set_path("compile_options", "all"),
    "const bytes too few": lambda h: h["consts"][0]["data"].__setitem__(1, 8),
    "const shape needs more bytes": set_path("consts/0/shape", [4, 8]),
    "const dtype object": set_path("consts/0/dtype", "object"),
    "consts not a list": set_path("consts", None),
    "in_tree malformed": set_path("in_tree", {"set": []}),
    "in_tree not args and kwargs": set_path("in_tree", {"list": ["*", "*", "*"]}),
    "in_tree too few leaves": set_path("in_tree/tuple/0", {"tuple": ["*"]}),
    "in_tree deeply nested": set_path("in_tree/tuple/0/tuple/0", nested(MAX_DEPTH + 5)),
    "in_tree nested past the recursion limit": set_path("in_tree", DEEP),
    "out_tree duplicate keys": set_path("out_tree", {"dict": [["h", "*"], ["h", "*"]]}),
    "out_tree mixed keys": set_path("out_tree", {"dict": [["h", "*"], [1, "*"]]}),
    "out_tree dict entry malformed": set_path("out_tree", {"dict": [["h"], ["n", "*"]]}),
    "out_tree leaf spelled wrong": set_path("out_tree", {"dict": [["h", "+"], ["n", "*"]]}),
    "out_tree a bare list": set_path("out_tree", ["*", "*"]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_header_is_a_clean_error(saved: bytes, case: str) -> None:
    damaged = edit(saved, MALFORMED[case])
    with pytest.raises(ArtifactError, match=r"malformed|header"):
        aot.deserialize(damaged)
    with pytest.raises(ArtifactError):
        aot.describe(damaged)


def test_header_that_is_not_json_or_nests_without_bound_is_refused(saved: bytes) -> None:
    _, body = split(saved)
    for raw in (b"", b"{", b"\xff\xfe", b"[" * 100_000, b'{"a":' * 50_000):
        with pytest.raises(ArtifactError):
            aot.deserialize(rebuild(None, body, raw_header=raw))


# The executable loads, but the header's types are not its: refused, never run with them.
MISMATCHED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "input dtype changed": set_path("in_avals/0/dtype", "int32"),
    "input shape changed": set_path("in_avals/0/shape", [3, 2]),
    "second input shape changed": set_path("in_avals/1/shape", [5]),
    "output shape changed": set_path("out_avals/0/shape", [8, 2]),
    "output dtype changed": set_path("out_avals/0/dtype", "int32"),
    "scalar output given a shape": set_path("out_avals/1/shape", [1]),
    "constant dtype changed, same size": set_path("consts/0/dtype", "int32"),
    "constant reshaped, same size": set_path("consts/0/shape", [8, 3]),
    "outputs swapped": lambda h: h["out_avals"].reverse(),
    "kept drops an input the executable takes": set_path("kept", [0, 2]),
}


@pytest.mark.parametrize("case", sorted(MISMATCHED))
def test_header_types_that_contradict_the_executable_are_refused(saved: bytes, case: str) -> None:
    damaged = edit(saved, MISMATCHED[case])
    with pytest.raises(ArtifactError, match="does not describe its executable"):
        aot.deserialize(damaged)


HARMLESS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "renamed": set_path("name", "renamed"),
    "another lamina version": set_path("built_with/lamina", "0.0.1"),
    "input marked weakly typed": set_path("in_avals/1/weak_type", True),
    "dict entries reordered": lambda h: h["out_tree"]["dict"].reverse(),
    "unknown extra field": set_path("comment", "hello"),
}


@pytest.mark.parametrize("case", sorted(HARMLESS))
def test_harmless_header_edits_still_give_the_right_result(
    saved: bytes, expected: dict[str, np.ndarray], case: str
) -> None:
    loaded = aot.deserialize(edit(saved, HARMLESS[case]))
    out = loaded(X, Y, scale=f32(2))
    for name, value in expected.items():
        np.testing.assert_array_equal(np.asarray(out[name]), value)


def test_flipped_donation_does_not_change_results(
    saved: bytes, expected: dict[str, np.ndarray]
) -> None:
    loaded = aot.deserialize(edit(saved, set_path("donated", [True, True, True])))
    np.testing.assert_array_equal(np.asarray(loaded(X, Y, scale=f32(2))["h"]), expected["h"])


# ---- damage XLA would see: compile options and the executable, in a child process ------------

CHILD = """
import sys
import numpy as np
from lamina_runtime import aot
x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
y = np.arange(4, dtype=np.float32)
for path in sys.argv[1:]:
    print("loading", path, flush=True)
    try:
        out = aot.load(path)(x, y, scale=np.float32(2))
    except aot.ArtifactError as err:
        print("refused", path, type(err).__name__, str(err).replace("\\n", " "), flush=True)
    else:
        print("ran", path, float(np.asarray(out["h"]).sum()), int(out["n"]), flush=True)
"""


def with_section(data: bytes, field: str, content: bytes) -> bytes:
    """`data` with the section `field` replaced by `content` (appended to the body)."""
    header, body = split(data)
    header[field] = [len(body), len(content)]
    return rebuild(header, body + content)


def xla_facing_cases(saved: bytes) -> dict[str, bytes]:
    header, body = split(saved)
    start, size = header["executable"]
    executable = body[start : start + size]
    swapped = split(lr.jit(other).lower(X).compile().serialize())
    other_start, other_size = swapped[0]["executable"]
    options = lr._bridge_executables.compile_options()
    two_replicas = lr._bridge_executables.compile_options(num_replicas=2)
    bad_override = lr._bridge_executables.compile_options(overrides={"no_such_xla_option": 1})
    return {
        "options empty": with_section(saved, "compile_options", b""),
        "options garbage": with_section(saved, "compile_options", b"\xff\x13garbage" * 9),
        "options zero bytes": with_section(saved, "compile_options", b"\0" * 64),
        "options two replicas": with_section(
            saved, "compile_options", lr._bridge_executables.serialize_compile_options(two_replicas)
        ),
        "options unknown xla option": with_section(
            saved, "compile_options", lr._bridge_executables.serialize_compile_options(bad_override)
        ),
        "options valid": with_section(
            saved, "compile_options", lr._bridge_executables.serialize_compile_options(options)
        ),
        "executable empty": with_section(saved, "executable", b""),
        "executable garbage": with_section(saved, "executable", b"\0garbage" * 100),
        "executable truncated": with_section(saved, "executable", executable[: size // 2]),
        "executable of another program": with_section(
            saved, "executable", swapped[1][other_start : other_start + other_size]
        ),
    }


def test_damage_that_xla_would_see_is_refused_in_a_child_process(
    saved: bytes, expected: dict[str, np.ndarray], tmp_path: Path
) -> None:
    cases = xla_facing_cases(saved)
    paths = {}
    for i, (case, data) in enumerate(cases.items()):
        paths[case] = tmp_path / f"case{i}.lamina"
        paths[case].write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *map(str, paths.values())],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.stdout, done.stderr[-3000:])
    outcome = {
        line.split()[1]: line for line in done.stdout.splitlines() if line.split()[0] != "loading"
    }
    right = f"ran {{}} {float(expected['h'].sum())} {int(expected['n'])}"
    for case, path in paths.items():
        line = outcome[str(path)]
        if case == "options valid":
            assert line == right.format(path), line
        else:
            assert line.startswith(f"refused {path} ArtifactError"), (case, line)


# ---- the command line: an error line, never a traceback -------------------------------------


def test_cli_reports_damaged_files_in_one_line(
    saved: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = pytest.importorskip("lamina._cli", reason="the umbrella package is not installed").main

    files = {
        "flipped": saved[:100] + bytes([saved[100] ^ 1]) + saved[101:],
        "deep": edit(saved, set_path("in_tree", DEEP)),
        "dtype": edit(saved, MISMATCHED["input dtype changed"]),
        "no name": edit(saved, drop("name")),
        "empty": b"",
    }
    for name, data in files.items():
        path = tmp_path / f"{name}.lamina"
        path.write_bytes(data)
        commands = [["inspect", str(path)], ["run", str(path), "ones", "ones", "ones"]]
        if name == "dtype":  # only loading sees what the executable says
            commands = commands[1:]
        for command in commands:
            assert main(command) == 1, (name, command)
            err = capsys.readouterr().err
            assert err.startswith("Error: ") and "Traceback" not in err, (name, err)
            assert len(err.strip().splitlines()) == 1, err


def test_cli_run_of_empty_compile_options_prints_an_error_in_a_child(
    saved: bytes, tmp_path: Path
) -> None:
    pytest.importorskip("lamina._cli", reason="the umbrella package is not installed")
    path = tmp_path / "options.lamina"
    path.write_bytes(with_section(saved, "compile_options", b""))
    done = subprocess.run(
        [sys.executable, "-m", "lamina", "run", str(path), "ones", "ones", "ones"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert done.stderr.startswith("Error: ") and "Traceback" not in done.stderr
    assert "compile options" in done.stderr


def test_deep_structures_are_refused_when_saving_not_only_when_loading() -> None:
    x: Any = np.float32(1)
    for _ in range(MAX_DEPTH + 1):
        x = (x,)
    compiled = lr.jit(lambda t: tree_util.tree_leaves(t)[0] + 1).lower(x).compile()
    with pytest.raises(aot.TreeCodecError, match="nests"):
        compiled.serialize()


# ---- loading the same bytes again: what was checked once is not checked again ---------------


def test_second_load_of_the_same_bytes_checks_header_and_executable_once(
    saved: bytes, expected: dict[str, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    lr.runtime().clear()
    calls = {"read_layout": 0, "signature_mismatch": 0}

    def counting(module: Any, name: str) -> None:
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    counting(artifact, "read_layout")
    counting(aot, "signature_mismatch")
    for _ in range(3):
        out = aot.deserialize(saved)(X, Y, scale=f32(2))
        for name, value in expected.items():
            np.testing.assert_array_equal(np.asarray(out[name]), value)
    assert calls == {"read_layout": 1, "signature_mismatch": 1}
    lr.runtime().clear()  # `clear_caches` forgets what was checked too
    aot.deserialize(saved)
    assert calls == {"read_layout": 2, "signature_mismatch": 2}


def test_bytes_that_differ_from_those_loaded_before_are_checked(saved: bytes) -> None:
    aot.deserialize(saved)  # checked, and remembered by its checksum
    middle = len(saved) // 2
    flipped = saved[:middle] + bytes([saved[middle] ^ 1]) + saved[middle + 1 :]
    with pytest.raises(ArtifactError, match="checksum"):
        aot.deserialize(flipped)
    # The header's length is outside the checksum: the same checksum over another split of
    # header and body is other bytes, parsed again (and refused), not taken for the first.
    _, version, size, digest = PREFIX.unpack_from(saved)
    shifted = PREFIX.pack(MAGIC, version, size - 1, digest) + saved[PREFIX.size :]
    with pytest.raises(ArtifactError, match="malformed"):
        aot.deserialize(shifted)


def test_platform_and_device_are_checked_at_every_load(
    saved: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    aot.deserialize(saved)
    with pytest.raises(TypeError, match="`device` must be a Device"):
        aot.deserialize(saved, device="cpu:0")
    real = _bridge_executables.platform_description

    def elsewhere(device: Any) -> dict[str, str]:
        return {**real(device), "jaxlib": "0.0.1"}

    monkeypatch.setattr(_bridge_executables, "platform_description", elsewhere)
    with pytest.raises(artifact.IncompatibleArtifactError, match=r"jaxlib 0\.0\.1"):
        aot.deserialize(saved)
