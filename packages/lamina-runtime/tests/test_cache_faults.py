"""Fault injection for the persistent compilation cache: damaged entries, entries that are not
files, entries moved or rewritten under another key, directory faults, bad settings, and four
processes racing on one directory. Every case ends in a correct result (compiling again) or, for
bad settings, a clean error naming the setting; never a crash, a hang or a wrong executable.

Cases that could hang (a FIFO in an entry's place) or that need their own environment run in
child processes.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

import numpy as np
import pytest

import lamina_runtime as lr
from lamina_core import config
from lamina_core import numpy as jnp
from lamina_mlir import LoweredModule
from lamina_runtime import CompilationCache, Runtime
from lamina_runtime.cache_key import CACHE_FORMAT_VERSION, CacheKey
from lamina_runtime.compilation_cache import (
    ENTRY_SUFFIX,
    HEADER,
    MAGIC,
    TEMP_SUFFIX,
    configured_settings,
    decode_entry,
    encode_entry,
)

f32 = np.float32
X = np.linspace(-2, 2, 16, dtype=f32)
CONST = np.full((16,), 1.5, f32)


def program_a(x: Any) -> Any:
    return jnp.sin(x) * CONST


def program_b(x: Any) -> Any:
    """The same types as `program_a`, another result."""
    return jnp.cos(x) + 1.0


def program_c(x: Any) -> Any:
    """Other types: a scalar result."""
    return jnp.sum(x * x)


def lowered(f: Any, *args: Any) -> LoweredModule:
    module: LoweredModule = lr.jit(f).lower(*args)._module
    return module


def run(runtime: Runtime, module: LoweredModule) -> np.ndarray:
    executable = runtime.compile(module)
    (out,) = executable.run(executable.put_consts(module.const_args.values), [X])
    return np.asarray(out)


def key_of(module: LoweredModule) -> CacheKey:
    return lr.compilation_key(module, [lr.devices()[0]], lr._bridge_executables.compile_options())


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    runtime = Runtime(None)
    return {f.__name__: run(runtime, lowered(f, X)) for f in (program_a, program_b, program_c)}


def fill(cache_dir: Path, f: Any) -> tuple[CompilationCache, LoweredModule, Path]:
    """A cache holding `f`'s entry, written by a first runtime."""
    cache = CompilationCache(cache_dir)
    module = lowered(f, X)
    run(Runtime(cache), module)
    path = cache.path(key_of(module))
    assert path.exists()
    return cache, module, path


def recovers(
    cache: CompilationCache, module: LoweredModule, want: np.ndarray, *, hit: bool = False
) -> Runtime:
    """A fresh runtime on `cache` gives `want`; it compiled unless `hit`."""
    runtime = Runtime(cache)
    np.testing.assert_array_equal(run(runtime, module), want)
    assert (runtime.persistent_hits, runtime.compilations) == ((1, 0) if hit else (0, 1))
    return runtime


# ---- damaged entries: every byte-level corruption is a miss, then compiled again -------------


def flip(at: int) -> Callable[[bytes], bytes]:
    def damage(data: bytes) -> bytes:
        i = at if at >= 0 else len(data) + at
        return data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1 :]

    return damage


def truncate(keep: int) -> Callable[[bytes], bytes]:
    return lambda data: data[:keep]


FIELDS: Final = (("magic", 8), ("version", 4), ("key", 32), ("length", 8), ("checksum", 32),
                 ("ms", 4))  # fmt: skip
"""The entry header's fields and sizes, in order (`HEADER`)."""
OFFSETS: Final = dict(
    zip([n for n, _ in FIELDS], accumulate([0, *(s for _, s in FIELDS)]), strict=False)
)
assert sum(size for _, size in FIELDS) == HEADER.size

RAW: dict[str, Callable[[bytes], bytes]] = {
    **{f"flip {name}": flip(OFFSETS[name]) for name, _ in FIELDS},
    **{f"flip last byte of {name}": flip(OFFSETS[name] + size - 1) for name, size in FIELDS},
    "flip first payload byte": flip(HEADER.size),
    "flip a middle payload byte": lambda d: flip(HEADER.size + (len(d) - HEADER.size) // 2)(d),
    "flip last payload byte": flip(-1),
    "empty": truncate(0),
    "magic only": truncate(8),
    "header only": truncate(HEADER.size),
    "half": lambda d: d[: len(d) // 2],
    "one byte short": lambda d: d[:-1],
    "one byte long": lambda d: d + b"\0",
    "doubled": lambda d: d + d,
    "zeros": lambda d: bytes(len(d)),
    "a shell script": lambda d: b"#!/bin/sh\nrm -rf /\n",
    "another format version": lambda d: (
        d[:8] + (CACHE_FORMAT_VERSION + 7).to_bytes(4, "little") + d[12:]
    ),
}


@pytest.mark.parametrize("case", sorted(RAW))
def test_raw_corruption_is_a_miss_and_recompiles_correctly(
    cache_dir: Path, expected: dict[str, np.ndarray], case: str
) -> None:
    cache, module, path = fill(cache_dir, program_a)
    path.write_bytes(RAW[case](path.read_bytes()))
    recovers(cache, module, expected["program_a"])
    assert decode_entry(key_of(module), path.read_bytes())  # a whole entry again
    recovers(cache, module, expected["program_a"], hit=True)


def rewrite_header(data: bytes, key: CacheKey, *, checksum: bytes | None = None) -> bytes:
    """`data` (an entry) with its header's key replaced, its checksum kept unless given."""
    magic, version, _, size, old_sum, millis = HEADER.unpack_from(data)
    new_sum = old_sum if checksum is None else checksum
    return (
        HEADER.pack(magic, version, bytes.fromhex(key.digest), size, new_sum, millis)
        + (data[HEADER.size :])
    )


def test_entry_rewritten_under_another_key_is_a_miss(
    cache_dir: Path, expected: dict[str, np.ndarray]
) -> None:
    # B's entry, its header's key made A's, moved to A's name: the checksum binds the key.
    cache, module_b, path_b = fill(cache_dir, program_b)
    module_a = lowered(program_a, X)
    path_a = cache.path(key_of(module_a))
    path_a.write_bytes(rewrite_header(path_b.read_bytes(), key_of(module_a)))
    recovers(cache, module_a, expected["program_a"])
    recovers(cache, module_b, expected["program_b"], hit=True)


def test_entry_rewritten_with_the_old_format_checksum_is_a_miss(
    cache_dir: Path, expected: dict[str, np.ndarray]
) -> None:
    # The checksum version 1 wrote (the payload's sha256 alone) no longer passes.
    cache, _, path_b = fill(cache_dir, program_b)
    module_a = lowered(program_a, X)
    data = path_b.read_bytes()
    payload_only = hashlib.sha256(data[HEADER.size :]).digest()
    forged = rewrite_header(data, key_of(module_a), checksum=payload_only)
    cache.path(key_of(module_a)).write_bytes(forged)
    recovers(cache, module_a, expected["program_a"])


def test_forged_entry_of_a_program_of_other_types_is_refused_by_its_types(
    cache_dir: Path, expected: dict[str, np.ndarray], caplog: pytest.LogCaptureFixture
) -> None:
    # A writer that recomputes the checksum: C's executable under A's key. The executable
    # reports C's types, which are not A's, so it is discarded before it runs.
    cache, module_c, path_c = fill(cache_dir, program_c)
    module_a = lowered(program_a, X)
    payload_c = decode_entry(key_of(module_c), path_c.read_bytes())
    path_a = cache.path(key_of(module_a))
    path_a.write_bytes(encode_entry(key_of(module_a), payload_c))
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        recovers(cache, module_a, expected["program_a"])
    assert "another program's executable" in caplog.text
    recovers(cache, module_a, expected["program_a"], hit=True)


def test_forged_entry_that_jaxlib_cannot_load_is_discarded(
    cache_dir: Path, expected: dict[str, np.ndarray]
) -> None:
    cache, module, path = fill(cache_dir, program_a)
    for junk in (b"", b"\0" * 64, b"not an executable" * 10):
        path.write_bytes(encode_entry(key_of(module), junk))
        recovers(cache, module, expected["program_a"])


def test_compile_time_field_is_covered_by_the_checksum(
    cache_dir: Path, expected: dict[str, np.ndarray]
) -> None:
    cache, module, path = fill(cache_dir, program_a)
    magic, version, key, size, checksum, millis = HEADER.unpack_from(path.read_bytes())
    assert magic == MAGIC
    data = path.read_bytes()
    path.write_bytes(
        HEADER.pack(magic, version, key, size, checksum, millis + 1) + data[HEADER.size :]
    )
    recovers(cache, module, expected["program_a"])


# ---- things that are not entry files in an entry's place ------------------------------------

NOT_FILES = """
import os, sys, time
import numpy as np
import lamina_runtime as lr
from lamina_core import numpy as jnp
from lamina_runtime import CompilationCache, Runtime

root = sys.argv[1]
x = np.linspace(-2, 2, 16, dtype=np.float32)
for i, kind in enumerate(["fifo", "directory", "dev-zero", "dangling", "loop", "fifo-link"]):
    f = lr.jit(lambda x, i=i: jnp.sin(x) + i)
    module = f.lower(x)._module
    cache = CompilationCache(root)
    options = lr._bridge_executables.compile_options()
    path = cache.path(lr.compilation_key(module, [lr.devices()[0]], options))
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "dangling":
        os.symlink(os.path.join(root, "nowhere"), path)
    elif kind == "loop":
        os.symlink(path, path)
    else:
        os.mkfifo(os.path.join(root, "a-fifo"))
        os.symlink(os.path.join(root, "a-fifo"), path)
    start = time.monotonic()
    runtime = Runtime(cache)
    executable = runtime.compile(module)
    (out,) = executable.run(executable.put_consts(module.const_args.values), [x])
    ok = np.allclose(np.asarray(out), np.sin(x) + i, atol=1e-6)
    print(kind, ok, runtime.compilations, round(time.monotonic() - start, 1), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_fifo_device_directory_or_bad_link_in_an_entrys_place_never_blocks(
    cache_dir: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NOT_FILES, str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [line[0] for line in lines] == [
        "fifo", "directory", "dev-zero", "dangling", "loop", "fifo-link"
    ]  # fmt: skip
    for kind, ok, compilations, _seconds in lines:
        assert (ok, compilations) == ("True", "1"), kind


def test_unreadable_entry_is_a_miss(
    cache_dir: Path,
    expected: dict[str, np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cache, module, path = fill(cache_dir, program_a)
    real_open = os.open

    def deny(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(file) == str(path):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        recovers(cache, module, expected["program_a"])
    assert "cannot read" in caplog.text


# ---- directory faults -------------------------------------------------------------------------


def fail_with(code: int) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise OSError(code, os.strerror(code))

    return fail


def test_directory_that_cannot_be_listed_is_used_without_eviction(
    cache_dir: Path,
    expected: dict[str, np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Writable but not listable (mode -wx): reads and writes by name work, listing fails.
    cache = CompilationCache(cache_dir, max_bytes=1 << 30)
    module = lowered(program_a, X)
    monkeypatch.setattr(os, "scandir", fail_with(errno.EACCES))
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        recovers(cache, module, expected["program_a"])  # written; eviction logged, skipped
        recovers(cache, module, expected["program_a"], hit=True)
    assert "cannot list" in caplog.text
    with pytest.raises(PermissionError):  # asked for explicitly: the error is the answer
        cache.info()
    with pytest.raises(PermissionError):
        cache.clear()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root lists any directory"
)
def test_directory_with_mode_wx_is_used_without_eviction(
    cache_dir: Path, expected: dict[str, np.ndarray]
) -> None:
    cache = CompilationCache(cache_dir, max_bytes=1 << 30)
    module = lowered(program_a, X)
    cache_dir.chmod(0o300)
    try:
        recovers(cache, module, expected["program_a"])
        recovers(cache, module, expected["program_a"], hit=True)
    finally:
        cache_dir.chmod(0o700)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EIO])
@pytest.mark.parametrize("where", ["mkstemp", "replace", "utime", "unlink"])
def test_io_errors_while_writing_or_evicting_only_skip_the_write(
    cache_dir: Path,
    expected: dict[str, np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    code: int,
    where: str,
) -> None:
    # A tiny bound: every write evicts the other program's entry.
    size = len(fill(cache_dir, program_b)[2].read_bytes())
    cache = CompilationCache(cache_dir, max_bytes=size + size // 2)
    module = lowered(program_a, X)
    target = tempfile if where == "mkstemp" else os
    if where == "unlink":
        monkeypatch.setattr(Path, "unlink", fail_with(code))
    else:
        monkeypatch.setattr(target, where, fail_with(code))
    recovers(cache, module, expected["program_a"])
    monkeypatch.undo()
    assert list(cache_dir.glob(f"*{TEMP_SUFFIX}")) == []


def test_cache_directory_that_is_a_file_a_fifo_or_missing_parent(
    tmp_path: Path, expected: dict[str, np.ndarray]
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    roots = [a_file, a_file / "below", tmp_path / "missing" / "deep" / "cache"]
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        roots.append(tmp_path / "fifo")
    for root in roots:
        recovers(CompilationCache(root), lowered(program_a, X), expected["program_a"])


# ---- settings: reported at first use, clearly --------------------------------------------------

BAD_ENVIRONMENT = [
    ("LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "nan"),
    ("LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "NaN"),
    ("LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "-1"),
    ("LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "soon"),
    ("LAMINA_COMPILATION_CACHE_MAX_SIZE", "nan"),
    ("LAMINA_COMPILATION_CACHE_MAX_SIZE", "1.5e9"),
    ("LAMINA_COMPILATION_CACHE_MAX_SIZE", "1GB"),
    ("LAMINA_ENABLE_COMPILATION_CACHE", "maybe"),
    ("JAX_COMPILATION_CACHE_MAX_SIZE", "lots"),
]


@pytest.mark.parametrize(("variable", "value"), BAD_ENVIRONMENT)
def test_bad_environment_value_is_an_error_at_first_use_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    bare = variable.split("_", 1)[1]
    option = f"jax_{bare.lower()}"
    for name in (f"LAMINA_{bare}", f"JAX_{bare}"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)
    monkeypatch.delitem(config._values, option, raising=False)  # read the environment again
    with pytest.raises(ValueError, match=variable) as raised:
        configured_settings()
    assert repr(value) in str(raised.value)
    runtime = Runtime()
    with pytest.raises(ValueError, match=variable):
        runtime.compile(lowered(program_c, X))
    assert runtime.compilations == 0  # refused before compiling, not after


def test_nan_min_compile_time_from_code_is_refused() -> None:
    with (
        config(jax_persistent_cache_min_compile_time_secs=float("nan")),
        pytest.raises(ValueError, match="min_compile_time_secs"),
    ):
        configured_settings()


def test_bad_environment_value_fails_the_first_jit_call_in_a_fresh_process(
    cache_dir: Path,
) -> None:
    child = textwrap.dedent(
        """
        import numpy as np
        import lamina_runtime as lamina
        try:
            lamina.jit(lambda x: x + 1)(np.float32(1))
        except ValueError as err:
            print("ValueError:", err)
        """
    )
    env = {**os.environ, "LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "nan"}
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" in done.stdout
    assert "'nan'" in done.stdout
    assert list(cache_dir.iterdir()) == []


# ---- four processes racing on one directory, under a bound that makes them evict ------------

PROGRAMS = """
import numpy as np
from lamina_core import numpy as jnp

W = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)
X = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
PROGRAMS = [
    lambda x: jnp.tanh(x @ W),
    lambda x: jnp.sin(x) * 3.0 + x.sum(),
    lambda x: jnp.cumsum(x, axis=0) @ W,
]
"""

RACER = (
    PROGRAMS
    + """
import sys, time
from pathlib import Path
import lamina_runtime as lr

go = Path(sys.argv[1])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
for round in range(3):
    for i, f in enumerate(PROGRAMS):
        print(i, f"{float(np.asarray(lr.jit(f)(X)).sum()):.5f}", flush=True)
    lr.runtime().clear()  # the next round reads the directory again
"""
)


@pytest.mark.slow  # four fresh interpreters on two cores, three rounds each: about 30 s
def test_four_processes_racing_on_a_bounded_damaged_directory(cache_dir: Path) -> None:
    scope: dict[str, Any] = {}
    exec(PROGRAMS, scope)  # the children's programs, here
    programs, x = scope["PROGRAMS"], scope["X"]
    sums = [f"{float(np.asarray(lr.jit(f)(x)).sum()):.5f}" for f in programs]
    modules = [lowered(f, x) for f in programs]
    sizes = []
    for module in modules:  # how large the entries are, measured in a scratch directory
        scratch = CompilationCache(cache_dir.parent / "scratch")
        Runtime(scratch).compile(module)
        sizes.append(scratch.path(key_of(module)).stat().st_size)
    bound = max(sizes) * 2  # room for two of the three: the racers evict each other
    damaged = CompilationCache(cache_dir)
    damaged.path(key_of(modules[0])).write_bytes(b"garbage")
    if hasattr(os, "mkfifo"):
        os.mkfifo(damaged.path(key_of(modules[1])))
    env = {
        **os.environ,
        "LAMINA_COMPILATION_CACHE_DIR": str(cache_dir),
        "LAMINA_CACHE_DIR": str(cache_dir),
        "LAMINA_COMPILATION_CACHE_MAX_SIZE": str(bound),
    }
    go = cache_dir.parent / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        go.touch()
        outputs = [proc.communicate(timeout=180) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-3000:]
        lines = [line.split() for line in out.splitlines()]
        assert len(lines) == 9
        for index, value in lines:
            assert value == sums[int(index)], (index, value, sums)
    entries = list(cache_dir.glob(f"*{ENTRY_SUFFIX}"))
    assert sum(e.stat().st_size for e in entries) <= bound
    assert list(cache_dir.glob(f"*{TEMP_SUFFIX}")) == []
    keys = {CompilationCache(cache_dir).path(key_of(m)): key_of(m) for m in modules}
    for entry in entries:
        assert stat.S_ISREG(entry.lstat().st_mode)  # the planted FIFO was removed
        assert decode_entry(keys[entry], entry.read_bytes())  # every survivor is whole
