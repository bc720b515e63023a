"""Every option of JAX 0.10.2's `jax.config` that no Lamina layer implements, and what Lamina
does with it: accept it without effect, or refuse any value but its default.

JAX code sets options freely (`jax.config.update("jax_enable_pgle", True)`); such a call must
neither fail for an option that cannot change what the program computes, nor be silently ignored
for one that would. So each option here is either

- `NO_EFFECT`: it tunes something Lamina does not have or does differently (XLA's GPU and TPU
  passes and autotuning, Pallas, jax2tf, multi-host transfer, JAX's own logging and dumps), so
  the value is checked as JAX checks it, recorded and read back, and changes nothing; or
- `REFUSED`: another value would change results, jaxprs or errors in a way Lamina does not
  implement; `update`, a scope or the environment variable setting anything but the default
  raises NotImplementedError naming the option.

The options Lamina implements are defined by the layers that implement them; this table only
fills in the rest, and a layer defining one of these names later takes its place. The table in
docs/config-options.md is made from this one and from those layers' options (a test checks).
"""

from __future__ import annotations

from typing import Any, Final

from lamina_core import config
from lamina_core.config import (
    ExplicitX64Mode,
    LegacyPrngKeyState,
    RuntimeTracebackMode,
    Support,
    define_enum,
    define_enum_class,
    define_flag,
    define_flag_bool,
    define_number,
    define_object,
    define_optional_enum,
    define_string,
)

NO: Final = Support.NO_EFFECT
REFUSED: Final = Support.REFUSED
_EFFORT: Final = ("UNKNOWN", "O0", "O1", "O2", "O3")
_LOG_LEVELS: Final = ("NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# (name, default, support, why): bool options.
_BOOLS: Final[tuple[tuple[str, bool, Support, str], ...]] = (
    ("check_vma", False, REFUSED, "internal state of shard_map; Lamina's shard_map sets its own"),
    ("eager_constant_folding", False, REFUSED, "folding while staging changes jaxprs"),
    ("jax2tf_associative_scan_reductions", False, NO, "jax2tf only"),
    ("jax2tf_default_native_serialization", True, NO, "jax2tf only"),
    ("jax_auto_pcast", True, REFUSED, "without it, vma mismatches raise where Lamina casts"),
    ("jax_bcoo_cusparse_lowering", False, NO, "GPU sparse lowering"),
    ("jax_check_proxy_envs", True, NO, "a start-up warning about proxies"),
    ("jax_compilation_cache_check_contents", False, NO, "a consistency check of JAX's cache"),
    ("jax_compilation_cache_expect_pgle", False, NO, "GPU profile-guided compilation"),
    (
        "jax_compilation_cache_include_metadata_in_key",
        False,
        NO,
        "what JAX's persistent-cache key hashes",
    ),
    ("jax_compiler_enable_remat_pass", True, NO, "an XLA memory pass; results are the same"),
    ("jax_cpu_enable_async_dispatch", True, NO, "when CPU work runs, not what it computes"),
    ("jax_custom_vjp3", False, REFUSED, "a new custom_vjp staging, with other jaxprs"),
    ("jax_debug_key_reuse", False, REFUSED, "key-reuse checking (KeyReuseError) is not there"),
    ("jax_debug_leaked_clients_on_clear_backends", False, NO, "a debugging check of backends"),
    ("jax_disable_bwd_checks", False, REFUSED, "the checks it disables raise in Lamina"),
    ("jax_disable_most_optimizations", False, NO, "XLA optimization level; same results"),
    ("jax_disable_vmap_shmap_error", False, REFUSED, "relaxes an error Lamina raises"),
    ("jax_disallow_mesh_context_manager", False, REFUSED, "`with mesh:` stays allowed"),
    ("jax_distributed_debug", False, NO, "logging of multi-process runs"),
    ("jax_enable_custom_prng", False, REFUSED, "the legacy custom-PRNG upgrade"),
    ("jax_enable_pgle", False, NO, "GPU profile-guided compilation"),
    ("jax_enable_preemption_service", True, NO, "multi-host preemption"),
    ("jax_enable_recoverability", False, NO, "multi-host recovery"),
    ("jax_experimental_unsafe_xla_runtime_errors", False, REFUSED, "checkify's XLA errors"),
    ("jax_export_ignore_forward_compatibility", False, NO, "jax.export's lowering choice"),
    ("jax_force_dcn_cross_host_transfers", False, NO, "multi-host transfers"),
    ("jax_high_dynamic_range_gumbel", False, REFUSED, "another gumbel sampler"),
    ("jax_include_debug_info_in_dumps", True, NO, "JAX's IR dumps"),
    ("jax_include_full_tracebacks_in_locations", True, NO, "MLIR location metadata"),
    ("jax_log_checkpoint_residuals", False, NO, "logging only"),
    ("jax_mosaic_allow_hlo", False, NO, "Pallas TPU (Mosaic)"),
    ("jax_mutable_array_checks", True, REFUSED, "Lamina always checks Ref aliasing"),
    ("jax_pallas_enable_debug_checks", False, NO, "Pallas"),
    ("jax_pallas_poison_buffers", False, NO, "Pallas"),
    ("jax_pallas_use_mosaic_gpu", True, NO, "Pallas"),
    ("jax_pallas_verbose_errors", False, NO, "Pallas"),
    ("jax_ragged_dot_use_gpu_pallas_triton_lowering", False, NO, "GPU lowering of ragged_dot"),
    ("jax_ragged_dot_use_ragged_dot_instruction", True, NO, "TPU lowering of ragged_dot"),
    ("jax_raise_persistent_cache_errors", False, NO, "JAX's persistent cache"),
    ("jax_refs_to_pins", False, REFUSED, "another lowering of Refs"),
    ("jax_remat3", False, REFUSED, "a new remat staging, with other jaxprs"),
    (
        "jax_remove_custom_partitioning_ptr_from_cache_key",
        False,
        NO,
        "custom partitioning is not there",
    ),
    ("jax_remove_size_one_mesh_axis_from_type", False, REFUSED, "changes sharded types"),
    ("jax_scan3", False, REFUSED, "a new scan staging, with other jaxprs"),
    ("jax_share_binary_between_hosts", False, NO, "multi-host compilation"),
    ("jax_softmax_custom_jvp", False, REFUSED, "another softmax derivative (other jaxprs)"),
    ("jax_sort_devices_by_process_index", True, NO, "device order across hosts"),
    ("jax_thread_guard", False, NO, "a multi-process threading check"),
    ("jax_threefry_gpu_kernel_lowering", False, NO, "GPU lowering of threefry"),
    ("jax_use_direct_linearize", True, REFUSED, "linearize through jvp: other jaxprs"),
    ("jax_use_emit_pipeline_primitive", False, NO, "Pallas"),
    ("jax_use_shardy_partitioner", True, NO, "XLA's partitioner; same results"),
)

# (name, default, kind, support, why): numbers.
_NUMBERS: Final[tuple[tuple[str, Any, type, Support, str], ...]] = (
    ("jax_captured_constants_report_frames", 0, int, NO, "the text of a warning"),
    ("jax_compiler_detailed_logging_min_ops", 10, int, NO, "XLA's logging"),
    ("jax_cpu_get_global_topology_timeout_minutes", 5, int, NO, "multi-host start-up"),
    ("jax_cpu_get_local_topology_timeout_minutes", 2, int, NO, "multi-host start-up"),
    ("jax_cross_host_transfer_timeout_seconds", None, int, NO, "multi-host transfers"),
    ("jax_cross_host_transfer_transfer_size", None, int, NO, "multi-host transfers"),
    ("jax_exec_time_optimization_effort", 0.0, float, NO, "XLA tuning; same results"),
    ("jax_export_calling_convention_version", 10, int, NO, "jax.export's serialized form"),
    ("jax_memory_fitting_effort", 0.0, float, NO, "XLA tuning; same results"),
    ("jax_persistent_cache_min_entry_size_bytes", 0, int, NO, "JAX's persistent cache"),
    ("jax_pgle_aggregation_percentile", 90, int, NO, "GPU profile-guided compilation"),
    ("jax_pgle_profiling_runs", 3, int, NO, "GPU profile-guided compilation"),
    ("jax_serialization_version", 0, int, NO, "deprecated alias of the calling convention"),
    ("jax_share_binary_between_hosts_timeout_ms", 1_200_000, int, NO, "multi-host"),
    ("jax_tracer_error_num_traceback_frames", 5, int, NO, "the length of an error's text"),
    ("jax_traceback_in_locations_limit", 100, int, NO, "MLIR location metadata"),
    ("jax_xla_profile_version", 0, int, NO, "remote compilation profiles"),
    ("mock_num_gpu_processes", 0, int, NO, "GPU topology mocking"),
)

# (name, default, optional, support, why): strings.
_STRINGS: Final[tuple[tuple[str, str | None, bool, Support, str], ...]] = (
    ("jax_backend_target", "", False, REFUSED, "a remote backend"),
    ("jax_cross_host_transfer_socket_address", "", False, NO, "multi-host transfers"),
    ("jax_cross_host_transport_addresses", "", False, NO, "multi-host transfers"),
    ("jax_cuda_visible_devices", "all", False, NO, "GPU devices"),
    ("jax_debug_log_modules", "", False, NO, "JAX's module loggers"),
    ("jax_dump_ir_modes", "stablehlo", False, NO, "JAX's IR dumps"),
    ("jax_dump_ir_to", "", False, NO, "JAX's IR dumps"),
    ("jax_hlo_source_file_canonicalization_regex", None, True, NO, "HLO location metadata"),
    ("jax_mock_gpu_topology", "", False, NO, "GPU topology mocking"),
    ("jax_oneapi_visible_devices", "all", False, NO, "Intel GPU devices"),
    (
        "jax_persistent_cache_enable_xla_caches",
        "xla_gpu_per_fusion_autotune_cache_dir",
        True,
        NO,
        "XLA's GPU autotuning caches",
    ),
    ("jax_rocm_visible_devices", "all", False, NO, "AMD GPU devices"),
    ("jax_source_url_schema", None, True, NO, "links in HTML jaxpr dumps"),
    ("jax_xla_backend", "", False, REFUSED, "deprecated backend selection"),
)

# (name, values, default, optional, support, why): enums of strings.
_ENUMS: Final[tuple[tuple[str, tuple[str, ...], str | None, bool, Support, str], ...]] = (
    (
        "jax_array_garbage_collection_guard",
        ("allow", "log", "fatal"),
        None,
        True,
        NO,
        "a check of how arrays are freed",
    ),
    (
        "jax_cpu_collectives_implementation",
        ("gloo", "mpi", "megascale"),
        "gloo",
        True,
        NO,
        "multi-process CPU collectives",
    ),
    ("jax_error_checking_behavior_divide", ("ignore", "raise"), "ignore", False, REFUSED, ""),
    ("jax_error_checking_behavior_nan", ("ignore", "raise"), "ignore", False, REFUSED, ""),
    ("jax_error_checking_behavior_oob", ("ignore", "raise"), "ignore", False, REFUSED, ""),
    ("jax_logging_level", _LOG_LEVELS, "NOTSET", True, NO, "JAX's own loggers"),
    ("jax_memory_fitting_level", _EFFORT, "O2", False, NO, "XLA tuning; same results"),
    ("jax_optimization_level", _EFFORT, "UNKNOWN", False, NO, "XLA tuning; same results"),
    ("jax_use_magma", ("off", "on", "auto"), "auto", False, NO, "GPU eig"),
)

_ERROR_CHECK_WHY: Final = "jax.experimental.error_check is not there"

# JAX keeps these as plain `Flag`s, which take any value unchecked: so does Lamina.
_JAX_FLAGS: Final = frozenset(
    {
        "jax_backend_target",
        "jax_check_proxy_envs",
        "jax_compiler_detailed_logging_min_ops",
        "jax_cpu_enable_async_dispatch",
        "jax_cross_host_transfer_socket_address",
        "jax_cross_host_transfer_timeout_seconds",
        "jax_cross_host_transfer_transfer_size",
        "jax_cross_host_transport_addresses",
        "jax_cuda_visible_devices",
        "jax_disable_most_optimizations",
        "jax_dump_ir_modes",
        "jax_dump_ir_to",
        "jax_force_dcn_cross_host_transfers",
        "jax_include_debug_info_in_dumps",
        "jax_mock_gpu_topology",
        "jax_oneapi_visible_devices",
        "jax_pallas_verbose_errors",
        "jax_rocm_visible_devices",
        "jax_sort_devices_by_process_index",
        "jax_tracer_error_num_traceback_frames",
        "jax_xla_backend",
        "mock_num_gpu_processes",
    }
)


def _define_all() -> None:
    known = config.options()
    for name, default, support, _ in _BOOLS:
        if name in _JAX_FLAGS and name not in known:
            define_flag(name, default, f"JAX's {name}", kind=bool, support=support)
            _mark(name)
        elif name not in known:
            define_flag_bool(name, default, f"JAX's {name}", support=support)
            _mark(name)
    for name, number, kind, support, _ in _NUMBERS:
        if name in _JAX_FLAGS and name not in known:
            define_flag(name, number, f"JAX's {name}", kind=kind, support=support)
            _mark(name)
        elif name not in known:
            define_number(name, number, f"JAX's {name}", kind=kind, support=support)
            _mark(name)
    for name, text, optional, support, _ in _STRINGS:
        if name in _JAX_FLAGS and name not in known:
            define_flag(name, text, f"JAX's {name}", support=support)
            _mark(name)
        elif name not in known:
            define_string(name, text, f"JAX's {name}", optional=optional, support=support)
            _mark(name)
    for name, values, value, optional, support, _ in _ENUMS:
        if name in known:
            continue
        if optional:
            define_optional_enum(name, values, value, f"JAX's {name}", support=support)
        else:
            assert value is not None
            define_enum(name, values, value, f"JAX's {name}", support=support)
        _mark(name)
    enum_classes: tuple[tuple[str, Any, Support], ...] = (
        ("jax_explicit_x64_dtypes", ExplicitX64Mode.WARN, REFUSED),
        ("jax_legacy_prng_key", LegacyPrngKeyState.ALLOW, REFUSED),
        ("jax_send_traceback_to_runtime", RuntimeTracebackMode.OFF, NO),
    )
    for name, member, support in enum_classes:
        if name not in known:
            define_enum_class(name, type(member), member, f"JAX's {name}", support=support)
            _mark(name)
    if "jax_pjrt_client_create_options" not in known:
        define_object(
            "jax_pjrt_client_create_options",
            None,
            "JAX's jax_pjrt_client_create_options",
            validator=_check_client_options,
            support=NO,
        )
        _mark("jax_pjrt_client_create_options")


def _check_client_options(value: Any) -> None:
    if value is not None and not isinstance(value, (str, dict)):
        raise ValueError(
            "new string config value must be None or of type dict | str, got "
            f"{value} of type {type(value)}."
        )


def _mark(name: str) -> None:
    config.option(name).placeholder = True


def why(name: str) -> str:
    """The reason the table gives for `name` (empty for options a layer implements)."""
    for entry in (*_BOOLS, *_NUMBERS, *_STRINGS, *_ENUMS):
        if entry[0] == name:
            reason = entry[-1]
            assert isinstance(reason, str)
            return reason or (_ERROR_CHECK_WHY if "error_checking" in name else "")
    return {
        "jax_explicit_x64_dtypes": "64-bit types requested with x64 off are narrowed (without "
        "JAX's warning)",
        "jax_legacy_prng_key": "raw uint32 keys are always accepted",
        "jax_send_traceback_to_runtime": "tracebacks passed to XLA's runtime",
        "jax_pjrt_client_create_options": "options of the PJRT client JAX starts",
    }.get(name, "")


_define_all()
