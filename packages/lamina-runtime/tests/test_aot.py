"""Saved compiled functions: the artifact format, loading elsewhere, version checks, no pickle."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from collections import namedtuple
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_core import tree_util
from lamina_runtime import aot, artifact
from lamina_runtime.artifact import ArtifactError, IncompatibleArtifactError
from lamina_runtime.compilation_cache import ENTRY_SUFFIX
from lamina_runtime.tree_codec import TreeCodecError, decode_treedef, encode_treedef

f32 = np.float32
CHILD = Path(__file__).with_name("aot_child.py")
WEIGHTS = np.linspace(-1.0, 1.0, 64, dtype=f32).reshape(8, 8)
TABLE = np.arange(64, dtype=np.int32).reshape(8, 8)
HALF = np.linspace(0, 1, 64).astype(ml_dtypes.bfloat16).reshape(8, 8)


def model(x: Any, *, scale: Any) -> Any:
    """Closes over three constants of three dtypes: all hoisted into arguments."""
    h = jnp.tanh(x @ WEIGHTS) * scale
    gram = x.T @ x
    table = gram.astype(np.int32) + TABLE
    half = (gram.astype(ml_dtypes.bfloat16) + HALF).astype(f32)
    return {"h": h, "stats": (h.sum(), [table, half]), "none": None}


def compiled_model() -> lr.Compiled:
    x = np.ones((4, 8), f32)
    compiled: lr.Compiled = lr.jit(model).lower(x, scale=f32(2)).compile()
    return compiled


def test_round_trip_in_process_gives_identical_results() -> None:
    compiled = compiled_model()
    loaded = aot.deserialize(compiled.serialize())
    x = np.arange(32, dtype=f32).reshape(4, 8) / 32
    expected, got = compiled(x, scale=f32(2)), loaded(x, scale=f32(2))
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for a, b in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert loaded.in_tree == compiled.in_tree and loaded.out_tree == compiled.out_tree
    assert loaded.args_info == compiled.args_info


def test_artifact_holds_the_hoisted_constants_values() -> None:
    data = compiled_model().serialize()
    saved = artifact.decode(data)
    assert len(saved.consts) == 3
    by_dtype = {c.dtype: c for c in saved.consts}
    np.testing.assert_array_equal(by_dtype[np.dtype(f32)], WEIGHTS)
    np.testing.assert_array_equal(by_dtype[np.dtype(np.int32)], TABLE)
    np.testing.assert_array_equal(by_dtype[np.dtype(ml_dtypes.bfloat16)], HALF)


def test_saved_constants_do_not_follow_later_changes_of_the_closure() -> None:
    const = np.ones(4, f32)
    compiled = lr.jit(lambda x: x + const).lower(np.zeros(4, f32)).compile()
    data = compiled.serialize()
    const[:] = 100.0
    np.testing.assert_array_equal(np.asarray(aot.deserialize(data)(np.zeros(4, f32))), 1.0)


def test_device_array_constant_is_saved() -> None:
    const = lr.device_put(np.arange(4, dtype=f32))
    data = lr.jit(lambda x: x * const).lower(np.ones(4, f32)).compile().serialize()
    np.testing.assert_array_equal(np.asarray(aot.deserialize(data)(np.ones(4, f32))), np.arange(4))


def test_saving_a_loaded_function_reuses_its_executable_bytes() -> None:
    # jaxlib re-serializes a deserialized CPU executable lossily (the copy fails to run in a
    # fresh process), so a loaded function must save the very bytes it was loaded from.
    data = compiled_model().serialize()
    again = aot.deserialize(data).serialize()
    assert artifact.decode(again).executable == artifact.decode(data).executable


def test_function_from_the_persistent_cache_saves_the_cached_bytes(tmp_path: Path) -> None:
    module = lr.jit(model).lower(np.ones((4, 8), f32), scale=f32(2))._module
    lr.Runtime(lr.CompilationCache(tmp_path)).compile(module)
    cached = lr.Runtime(lr.CompilationCache(tmp_path)).compile(module)
    assert cached.serialized is not None
    (entry,) = tmp_path.glob(f"*{ENTRY_SUFFIX}")
    assert entry.read_bytes().endswith(cached.serialize())


def test_loaded_function_checks_argument_types() -> None:
    loaded = aot.deserialize(compiled_model().serialize())
    # A loaded function names its arguments by their places in the call.
    with pytest.raises(TypeError, match=r"Argument 'args\[0\]' compiled with float32\[4,8\]"):
        loaded(np.ones((3, 8), f32), scale=f32(2))
    with pytest.raises(TypeError, match="does not match the input pytree"):
        loaded(np.ones((4, 8), f32))


def test_donation_is_recorded() -> None:
    compiled = lr.jit(lambda x, y: x + y, donate_argnums=0).lower(np.ones(4, f32), f32(1)).compile()
    loaded = aot.deserialize(compiled.serialize())
    assert [i.donated for i in loaded.args_info[0]] == [True, False]


def test_save_and_load_files(tmp_path: Path) -> None:
    path = tmp_path / "model.lamina"
    aot.save(compiled_model(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.lamina"]
    x = np.ones((4, 8), f32)
    np.testing.assert_array_equal(
        np.asarray(aot.load(path)(x, scale=f32(2))["h"]),
        np.asarray(compiled_model()(x, scale=f32(2))["h"]),
    )


def test_artifact_saved_here_runs_in_a_fresh_process(tmp_path: Path) -> None:
    path, data = tmp_path / "model.lamina", np.arange(32, dtype=f32).reshape(4, 8) / 32
    compiled = compiled_model()
    aot.save(compiled, path)
    np.save(tmp_path / "x.npy", data)
    proc = subprocess.run(
        [sys.executable, str(CHILD), str(path), str(tmp_path / "x.npy")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    expected = tree_util.tree_leaves(compiled(data, scale=f32(2)))
    assert proc.stdout.strip() == str(tree_util.tree_structure(compiled(data, scale=f32(2))))
    for i, leaf in enumerate(expected):
        got = np.load(f"{path}.out{i}.npy")
        assert got.dtype == np.asarray(leaf).dtype
        np.testing.assert_array_equal(got, np.asarray(leaf))


def _rewrite(data: bytes, **changes: Any) -> bytes:
    return artifact.encode(dataclasses.replace(artifact.decode(data), **changes))


def test_other_jaxlib_is_refused_with_a_clear_message() -> None:
    data = compiled_model().serialize()
    built = dict(artifact.decode(data).built_with)
    other = _rewrite(data, built_with={**built, "jaxlib": "0.0.1"})
    with pytest.raises(IncompatibleArtifactError) as err:
        aot.deserialize(other)
    message = str(err.value)
    assert "jaxlib 0.0.1" in message and f"jaxlib {built['jaxlib']}" in message
    assert "compile it again here" in message


def test_other_platform_is_refused() -> None:
    data = compiled_model().serialize()
    built = dict(artifact.decode(data).built_with)
    other = _rewrite(data, built_with={**built, "platform": "tpu", "device_kind": "TPU v5"})
    with pytest.raises(IncompatibleArtifactError, match="platform, device_kind"):
        aot.deserialize(other)


def test_other_format_version_is_refused() -> None:
    data = bytearray(compiled_model().serialize())
    data[8:12] = (artifact.FORMAT_VERSION + 1).to_bytes(4, "little")
    with pytest.raises(IncompatibleArtifactError, match="format version 2"):
        aot.deserialize(bytes(data))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: d[:-10], "checksum"),
        (lambda d: d[:-10] + bytes([d[-10] ^ 1]) + d[-9:], "checksum"),
        (lambda d: b"PK\x03\x04" + d[4:], "not a saved Lamina function"),
        (lambda d: b"", "not a saved Lamina function"),
    ],
)
def test_corrupted_artifact_is_refused(damage: Any, message: str) -> None:
    with pytest.raises(ArtifactError, match=message):
        aot.deserialize(damage(compiled_model().serialize()))


def test_loading_never_unpickles(monkeypatch: pytest.MonkeyPatch) -> None:
    data = compiled_model().serialize()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("pickle used")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "Unpickler", refuse)
    assert aot.deserialize(data) is not None
    assert isinstance(artifact.read_header(data)["in_tree"], dict)


Point = namedtuple("Point", "x y")


def test_unsupported_containers_are_refused_when_saving() -> None:
    compiled = lr.jit(lambda p: p.x + p.y).lower(Point(f32(1), f32(2))).compile()
    with pytest.raises(TreeCodecError, match=r"\(args, kwargs\)\[0\]\[0\] is a .*Point"):
        compiled.serialize()


@pytest.mark.parametrize(
    "tree",
    [
        1,
        None,
        (),
        (1, [2, None], {"a": 3, "b": (4,)}),
        {1: "x", 2: ["y", "z"]},
        [[[]], {}],
    ],
)
def test_tree_codec_round_trips_standard_containers(tree: Any) -> None:
    treedef = tree_util.tree_structure(tree)
    assert decode_treedef(encode_treedef(treedef)) == treedef


def test_tree_codec_refuses_odd_keys_and_malformed_input() -> None:
    with pytest.raises(TreeCodecError, match="float key"):
        encode_treedef(tree_util.tree_structure({1.5: 0}))
    bad_encodings: list[Any] = [{"set": []}, {"tuple": 3}, {"dict": [[1.5, "*"]]}, "leaf", 7]
    for bad in bad_encodings:
        with pytest.raises(TreeCodecError):
            decode_treedef(bad)
