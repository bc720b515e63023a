"""The persistent cache's files: atomic entries, corruption recovery, LRU bound, settings."""

from __future__ import annotations

import itertools
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lamina_core import config
from lamina_runtime._cache_size import JOURNAL_NAME
from lamina_runtime.cache_key import CACHE_FORMAT_VERSION, CacheKey, make_key
from lamina_runtime.compilation_cache import (
    DEFAULT_MAX_BYTES,
    ENTRY_SUFFIX,
    HEADER,
    MAGIC,
    STALE_TEMP_SECONDS,
    TEMP_SUFFIX,
    CacheSettings,
    CompilationCache,
    configured_settings,
    decode_header,
    default_cache_dir,
    encode_entry,
)


def key(name: str = "jit_f", module: bytes = b"module") -> CacheKey:
    return make_key(name, [("module", module), ("cache format version", b"1")])


def counter_clock() -> Callable[[], int]:
    ticks = itertools.count(1_000_000_000_000)
    return lambda: next(ticks) * 1_000_000


def test_put_then_get_returns_the_payload(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir)
    k = key()
    assert cache.get(k) is None
    assert cache.put(k, b"executable", compile_time=1.25)
    assert cache.get(k) == b"executable"
    entry, journal = sorted(cache_dir.iterdir(), key=lambda p: p.name.startswith("size"))
    assert entry.name == f"jit_f-{k.digest}{ENTRY_SUFFIX}"
    assert journal.name == JOURNAL_NAME  # the size estimate: no other file
    header = decode_header(entry.read_bytes())
    assert header.key_digest == k.digest
    assert header.version == CACHE_FORMAT_VERSION
    assert header.payload_size == len(b"executable")
    assert header.compile_time == 1.25


def test_entry_header_layout() -> None:
    data = encode_entry(key(), b"xyz")
    assert data[:8] == MAGIC
    assert len(data) == HEADER.size + 3
    assert data.endswith(b"xyz")


def test_directory_is_created_on_first_write(tmp_path: Path) -> None:
    cache = CompilationCache(tmp_path / "a" / "b")
    assert cache.get(key()) is None
    assert not (tmp_path / "a").exists()
    cache.put(key(), b"p")
    assert cache.get(key()) == b"p"


def test_put_replaces_an_existing_entry(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir)
    cache.put(key(), b"old")
    cache.put(key(), b"new")
    assert cache.get(key()) == b"new"
    assert len(list(cache_dir.glob(f"*{ENTRY_SUFFIX}"))) == 1


def _truncate(data: bytes) -> bytes:
    return data[:-1]


def _flip_payload_byte(data: bytes) -> bytes:
    return data[:-2] + bytes([data[-2] ^ 0x01]) + data[-1:]


def _flip_key_byte(data: bytes) -> bytes:
    return data[:20] + bytes([data[20] ^ 0x80]) + data[21:]


def _wrong_magic(data: bytes) -> bytes:
    return b"\x89HDF\r\n\x1a\n" + data[8:]


def _other_version(data: bytes) -> bytes:
    return data[:8] + (CACHE_FORMAT_VERSION + 1).to_bytes(4, "little") + data[12:]


def _foreign(data: bytes) -> bytes:
    return b"#!/bin/sh\necho hello\n"


def _empty(data: bytes) -> bytes:
    return b""


def _header_only(data: bytes) -> bytes:
    return data[: HEADER.size]


def _appended(data: bytes) -> bytes:
    return data + b"garbage"


@pytest.mark.parametrize(
    "damage",
    [
        _truncate,
        _flip_payload_byte,
        _flip_key_byte,
        _wrong_magic,
        _other_version,
        _foreign,
        _empty,
        _header_only,
        _appended,
    ],
)
def test_damaged_entry_is_logged_removed_and_missed(
    cache_dir: Path, damage: Callable[[bytes], bytes], caplog: pytest.LogCaptureFixture
) -> None:
    cache = CompilationCache(cache_dir)
    k = key()
    cache.put(k, b"a serialized executable")
    path = cache.path(k)
    path.write_bytes(damage(path.read_bytes()))
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        assert cache.get(k) is None
    assert not path.exists()
    assert "removing" in caplog.text and path.name in caplog.text
    cache.put(k, b"a serialized executable")  # recompiled and written again
    assert cache.get(k) == b"a serialized executable"


def test_entry_of_another_key_under_this_name_is_rejected(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir)
    mine, other = key(module=b"mine"), key(module=b"other")
    cache.put(other, b"other's executable")
    cache.path(other).rename(cache.path(mine))
    assert cache.get(mine) is None
    assert not cache.path(mine).exists()


def test_unreadable_directory_is_a_miss_and_an_unwritable_one_skips_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = CompilationCache(blocker / "cache")
    with caplog.at_level(logging.WARNING, logger="lamina.cache"):
        assert cache.get(key()) is None
        assert cache.put(key(), b"p") is False
    assert "cannot write" in caplog.text


def test_lru_eviction_keeps_the_recently_used(cache_dir: Path) -> None:
    size = len(encode_entry(key("a"), b"x" * 100))
    cache = CompilationCache(cache_dir, max_bytes=int(size * 2.5), clock=counter_clock())
    a, b, c = key("a"), key("b"), key("c")
    cache.put(a, b"x" * 100)
    cache.put(b, b"x" * 100)
    assert cache.get(a) is not None  # a is now more recent than b
    cache.put(c, b"x" * 100)
    assert cache.get(b) is None
    assert cache.get(a) is not None
    assert cache.get(c) is not None
    assert cache.info().total_bytes <= int(size * 2.5)


def test_eviction_order_follows_use_not_creation(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir, max_bytes=None, clock=counter_clock())
    keys = [key(str(i)) for i in range(4)]
    for k in keys:
        cache.put(k, b"p")
    cache.get(keys[0])
    cache.get(keys[2])
    names = [e.path.name for e in cache.entries()]
    assert names == [cache.path(keys[i]).name for i in (1, 3, 0, 2)]
    cache.max_bytes = 2 * len(encode_entry(keys[0], b"p"))
    assert cache.evict() == 2
    assert [e.path.name for e in cache.entries()] == names[2:]


def test_entry_larger_than_the_bound_is_not_written(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir, max_bytes=100)
    assert cache.put(key(), b"x" * 200) is False
    assert cache.entries() == []


def test_unbounded_cache_never_evicts(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir, max_bytes=None)
    for i in range(5):
        cache.put(key(str(i)), b"x" * 1000)
    assert cache.info().entries == 5


def test_stale_temporary_files_are_removed_fresh_ones_kept(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir)
    stale, fresh = cache_dir / f".a{TEMP_SUFFIX}", cache_dir / f".b{TEMP_SUFFIX}"
    stale.write_bytes(b"half an ent")
    fresh.write_bytes(b"being writ")
    old = os.stat(stale).st_mtime_ns - (STALE_TEMP_SECONDS + 10) * 1_000_000_000
    os.utime(stale, ns=(old, old))
    cache.put(key(), b"p")
    assert not stale.exists()
    assert fresh.exists()


def test_clear_removes_entries_and_temporary_files_only(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir)
    cache.put(key("a"), b"p")
    cache.put(key("b"), b"q")
    (cache_dir / f".x{TEMP_SUFFIX}").write_bytes(b"")
    bystander = cache_dir / "jit_f-0123-cache"  # JAX's entries may share the directory
    bystander.write_bytes(b"JAX's")
    assert cache.clear() == 2
    assert list(cache_dir.iterdir()) == [bystander]
    assert cache.clear() == 0


def test_info_summarizes_the_directory(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir, max_bytes=10_000)
    cache.put(key("a"), b"p" * 10)
    info = cache.info()
    assert (info.root, info.entries, info.max_bytes) == (cache_dir, 1, 10_000)
    assert info.total_bytes == HEADER.size + 10
    assert CompilationCache(cache_dir / "missing").info().entries == 0


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="XDG layout")
def test_default_directory_honours_lamina_cache_dir_then_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LAMINA_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("LAMINA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "lamina"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "lamina"


def test_settings_come_from_the_configuration(tmp_path: Path) -> None:
    with config(jax_compilation_cache_dir=str(tmp_path)):
        assert configured_settings() == CacheSettings(tmp_path, DEFAULT_MAX_BYTES)
        with config(jax_compilation_cache_max_size=-1):
            assert configured_settings() == CacheSettings(tmp_path, None)
        with config(jax_compilation_cache_max_size=0):
            assert configured_settings() is None
        with config(jax_enable_compilation_cache=False):
            assert configured_settings() is None


def test_tests_never_use_the_users_cache() -> None:
    settings = configured_settings()
    assert settings is not None
    assert settings.root.name.startswith("lamina-test-cache-")
