"""The serialized export format: checked on load, with clear errors for anything malformed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lamina_runtime
from lamina_core import numpy as jnp
from lamina_core.config import config
from lamina_runtime import export
from lamina_runtime.export import _format
from lamina_runtime.export._safety import check_custom_calls

F32 = np.float32
WEIGHTS = np.linspace(0, 1, 16, dtype=F32)
"""Above `jax_embedded_constants_max_bytes`: hoisted."""


def _blob(vjp_order: int = 0) -> bytes:
    exported = export.export(lamina_runtime.jit(lambda x: jnp.sin(x) * WEIGHTS))(np.ones(16, F32))
    return bytes(exported.serialize(vjp_order=vjp_order))


def _rewritten(blob: bytes, edit: Callable[[dict[str, Any]], None]) -> bytes:
    """`blob` with its header edited and its checksum made right again (a deliberate
    rewrite, which the checksum cannot catch)."""
    _, version, size, _ = _format.PREFIX.unpack_from(blob)
    header = json.loads(blob[_format.PREFIX.size : _format.PREFIX.size + size])
    edit(header)
    new = json.dumps(header).encode()
    payload = new + blob[_format.PREFIX.size + size :]
    digest = hashlib.sha256(payload).digest()
    return _format.PREFIX.pack(_format.MAGIC, version, len(new), digest) + payload


def test_a_round_trip_keeps_every_field() -> None:
    exported = export.export(lamina_runtime.jit(lambda x: jnp.sin(x) * WEIGHTS))(np.ones(16, F32))
    loaded = export.deserialize(exported.serialize(vjp_order=1))
    for field in (
        *("fun_name", "in_avals", "out_avals", "nr_devices", "platforms", "ordered_effects"),
        *("unordered_effects", "disabled_safety_checks", "calling_convention_version"),
        *("module_kept_var_idx", "uses_global_constants", "mlir_module_serialized"),
    ):
        assert getattr(loaded, field) == getattr(exported, field), field
    assert str(loaded.in_tree) == str(exported.in_tree)
    np.testing.assert_array_equal(loaded.const_args[0], WEIGHTS)
    assert loaded.has_vjp() and not loaded.vjp().has_vjp()


def _load_error(blob: bytes) -> tuple[type[BaseException], str]:
    with pytest.raises(_format.SerializedExportError) as info:
        export.deserialize(blob)
    return info.type, str(info.value)


def test_bytes_that_are_not_an_export_are_refused() -> None:
    _, text = _load_error(b"\x00" * 100)
    assert "not a serialized Lamina export (wrong magic number)" in text


def test_another_format_version_is_refused_as_incompatible() -> None:
    blob = bytearray(_blob())
    blob[8:12] = (7).to_bytes(4, "little")
    kind, text = _load_error(bytes(blob))
    assert kind is export.IncompatibleExportError
    assert "export format version 7; this Lamina reads version 1" in text


@pytest.mark.parametrize("where", [60, -1])
def test_corrupted_or_truncated_bytes_fail_the_checksum(where: int) -> None:
    blob = bytearray(_blob())
    blob[where] ^= 0xFF
    assert "checksum mismatch" in _load_error(bytes(blob))[1]
    assert "checksum mismatch" in _load_error(_blob()[:-10])[1]


def test_a_header_rewritten_around_the_module_is_refused() -> None:
    def bigger(header: dict[str, Any]) -> None:
        header["functions"][0]["in_avals"][0]["shape"] = [7]

    text = _load_error(_rewritten(_blob(), bigger))[1]
    assert "its header does not describe its module" in text
    assert "tensor<7xf32>" in text


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h["consts"][0].update(shape=[5]), "consts[0].data"),
        (lambda h: h["consts"][0].update(dtype="object"), "not a dtype Lamina has"),
        (lambda h: h["functions"][0].update(consts=[3]), "expected indices into 1 constants"),
        (lambda h: h["functions"][0].update(module=[0, 10**9]), "outside the"),
        (lambda h: h["functions"][0].pop("platforms"), "has no platforms"),
        (lambda h: h["functions"][0].update(module_kept_var_idx=[2]), "sorted argument indices"),
        (lambda h: h["functions"][0].update(in_tree={"set": []}), "malformed structure"),
        (lambda h: h["functions"][0].update(disabled_safety_checks=["x"]), "unknown disabled"),
        (lambda h: h["functions"][0].update(in_shardings=[{"mesh": 1}]), "expected 1 nulls"),
        (lambda h: h.update(functions=[]), "expected a non-empty list"),
    ],
)
def test_malformed_headers_are_refused_with_what_is_wrong(
    edit: Callable[[dict[str, Any]], Any], message: str
) -> None:
    assert message in _load_error(_rewritten(_blob(), edit))[1]


def test_a_tree_naming_an_unregistered_class_is_refused() -> None:
    def custom(header: dict[str, Any]) -> None:
        header["functions"][0]["out_tree"] = {"custom": ["no.such.Class", "", ["*"]]}

    with pytest.raises(ValueError, match=r"unregistered type `no\.such\.Class`"):
        export.deserialize(_rewritten(_blob(), custom))


def test_jax_s_unsupported_calling_convention_versions_are_refused() -> None:
    with (
        config(jax_export_calling_convention_version=8),
        pytest.raises(ValueError, match=r"outside the range of supported versions \[9\.\.10\]"),
    ):
        export.export(lamina_runtime.jit(jnp.sin))(np.ones(2, F32))


def test_calls_to_unstable_custom_call_targets_are_refused_unless_allowed() -> None:
    calls = [("lapack_sgetrf_ffi", "a"), ("my_kernel", "stablehlo.custom_call @my_kernel")]
    with pytest.raises(ValueError, match="Cannot serialize code with custom calls") as info:
        check_custom_calls(calls, ())
    assert "stablehlo.custom_call @my_kernel" in str(info.value)
    check_custom_calls(calls, [export.DisabledSafetyCheck.custom_call("my_kernel")])
