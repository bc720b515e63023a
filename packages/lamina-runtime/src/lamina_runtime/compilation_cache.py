"""The persistent compilation cache: serialized executables in a directory, one file each.

Invariants:

- One file per entry, `<name>-<digest>.lxc`, written to a temporary file in the same directory
  and renamed into place, so a reader sees a whole entry or none (never a partial file), and
  processes racing on one key each rename a complete entry over the other's: one valid entry
  remains.
- Every entry starts with a fixed header (magic, format version, the key's digest, payload
  length, payload sha256, compile time). A truncated, corrupted or foreign entry is detected on
  read, logged, removed and reported as a miss, so the caller recompiles: never a crash, never a
  wrong executable.
- The directory's entries are bounded in bytes; past the bound the least recently used go
  first. Use time is the file's modification time, set on every write and hit (no second file
  per entry, which is what corrupts JAX's two-file protocol).
- Any I/O error becomes a logged miss or a skipped write: a read-only or full disk slows
  Lamina down, never stops it.

The cache stores bytes under `CacheKey`s; it knows nothing of executables or of jaxlib. It is
an object (the `Runtime` owns one), never module state.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lamina_core import config
from lamina_core.config import Option
from lamina_runtime.cache_key import CACHE_FORMAT_VERSION, CacheKey

logger = logging.getLogger("lamina.cache")

ENTRY_SUFFIX: Final = ".lxc"
"""Entry files end so; the cache never reads, evicts or clears any other file."""
TEMP_SUFFIX: Final = ".lxc-tmp"
MAGIC: Final = b"\x89LMNXC\r\n"
"""PNG-style: a high byte and CR LF catch text-mode copies and 7-bit transfers."""
HEADER: Final = struct.Struct("<8sI32sQ32sI")
"""magic, format version, key digest, payload length, payload sha256, compile time (ms)."""
DEFAULT_MAX_BYTES: Final = 1 << 30
STALE_TEMP_SECONDS: Final = 3600
"""A temporary file this old belongs to a writer that died; the next eviction removes it."""


def _optional_path(text: str) -> str | None:
    return text or None


enable_compilation_cache: Final = config.define_bool(
    "jax_enable_compilation_cache",
    True,
    "Keep compiled executables on disk and reuse them in later processes.",
)
compilation_cache_dir: Final[Option[str | None]] = config.define(
    "jax_compilation_cache_dir",
    None,
    _optional_path,
    "Where the persistent compilation cache lives. Unset: $LAMINA_CACHE_DIR, else the platform's "
    "user cache directory (~/.cache/lamina on Linux, honouring $XDG_CACHE_HOME).",
)
compilation_cache_max_size: Final = config.define_int(
    "jax_compilation_cache_max_size",
    DEFAULT_MAX_BYTES,
    "The persistent cache's size bound in bytes; least recently used entries are evicted past "
    "it. -1: unbounded; 0: no persistent cache.",
)
min_compile_time_secs: Final = config.define(
    "jax_persistent_cache_min_compile_time_secs",
    0.0,
    float,
    "Only executables that took at least this long to compile are written (default 0: all).",
)


def default_cache_dir() -> Path:
    """`$LAMINA_CACHE_DIR`, else the platform's user cache directory plus `lamina`.

    Linux and other Unix: `$XDG_CACHE_HOME/lamina` or `~/.cache/lamina`; macOS:
    `~/Library/Caches/lamina`; Windows: `%LOCALAPPDATA%\\lamina\\Cache`.
    """
    explicit = os.environ.get("LAMINA_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "lamina"
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return (Path(local) if local else home / "AppData" / "Local") / "lamina" / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache"
    return base / "lamina"


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """The persistent cache the configuration asks for: where, and how large."""

    root: Path
    max_bytes: int | None
    """None: unbounded."""


def configured_cache_dir() -> Path:
    """The directory the configuration names (whether or not the cache is enabled)."""
    root = compilation_cache_dir.value
    return Path(root).expanduser() if root else default_cache_dir()


def configured_settings() -> CacheSettings | None:
    """The settings in effect (config options, then the environment); None when disabled."""
    if not enable_compilation_cache.value:
        return None
    max_size = compilation_cache_max_size.value
    if max_size == 0:
        return None
    return CacheSettings(configured_cache_dir(), None if max_size < 0 else max_size)


class CorruptEntry(ValueError):
    """An entry file that is not a whole, valid entry for the key it was read under."""


def encode_entry(key: CacheKey, payload: bytes, compile_time: float = 0.0) -> bytes:
    """An entry file's bytes: the header, then the payload."""
    millis = min(int(compile_time * 1000), 0xFFFFFFFF)
    digest = hashlib.sha256(payload).digest()
    header = HEADER.pack(
        MAGIC, CACHE_FORMAT_VERSION, bytes.fromhex(key.digest), len(payload), digest, millis
    )
    return header + payload


@dataclass(frozen=True, slots=True)
class EntryHeader:
    """What an entry file says about itself."""

    version: int
    key_digest: str
    payload_size: int
    payload_sha256: bytes
    compile_time: float
    """Seconds the executable took to compile (millisecond resolution)."""


def decode_header(data: bytes) -> EntryHeader:
    """The header at the start of `data`.

    Raises:
        CorruptEntry: `data` is too short, is not a Lamina cache entry, or has another version.
    """
    if len(data) < HEADER.size:
        raise CorruptEntry(f"{len(data)} bytes is shorter than the {HEADER.size}-byte header")
    magic, version, key, size, sha, millis = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CorruptEntry("not a Lamina cache entry (wrong magic number)")
    if version != CACHE_FORMAT_VERSION:
        raise CorruptEntry(f"format version {version}, this Lamina reads {CACHE_FORMAT_VERSION}")
    return EntryHeader(version, key.hex(), size, sha, millis / 1000)


def decode_entry(key: CacheKey, data: bytes) -> bytes:
    """The payload of an entry file's bytes, checked against `key`.

    Raises:
        CorruptEntry: the header is invalid, names another key, or the payload is truncated,
            too long or fails its checksum.
    """
    header = decode_header(data)
    if header.key_digest != key.digest:
        raise CorruptEntry(f"holds key {header.key_digest[:16]}…, not {key.digest[:16]}…")
    payload = data[HEADER.size :]
    if len(payload) != header.payload_size:
        raise CorruptEntry(
            f"payload is {len(payload)} bytes, the header says {header.payload_size}"
        )
    if hashlib.sha256(payload).digest() != header.payload_sha256:
        raise CorruptEntry("payload checksum mismatch")
    return payload


@dataclass(frozen=True, slots=True)
class EntryInfo:
    """One entry file, as the directory lists it."""

    path: Path
    size: int
    last_used_ns: int


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """A summary of a cache directory (what `lamina cache info` prints)."""

    root: Path
    entries: int
    total_bytes: int
    max_bytes: int | None


class CompilationCache:
    """Serialized executables on disk, keyed by `CacheKey`. Identity is intended.

    Args:
        root: the directory; created at the first write.
        max_bytes: the bound on the entries' total size; None for no bound.
        clock: nanoseconds for "last used" times (tests pass a counter).

    Example:
        >>> cache = CompilationCache(Path(tmp), max_bytes=1 << 20)
        >>> cache.put(key, b"executable bytes")
        >>> cache.get(key)
        b'executable bytes'
    """

    def __init__(
        self,
        root: Path,
        *,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self._clock = clock

    def __repr__(self) -> str:
        return f"CompilationCache({str(self.root)!r}, max_bytes={self.max_bytes})"

    def path(self, key: CacheKey) -> Path:
        """Where `key`'s entry lives (whether or not it exists)."""
        return self.root / f"{key.file_stem}{ENTRY_SUFFIX}"

    def get(self, key: CacheKey) -> bytes | None:
        """The payload stored under `key`, or None: missing, unreadable or corrupt (removed)."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            logger.warning("lamina cache: cannot read %s (%s); compiling instead", path, err)
            return None
        try:
            payload = decode_entry(key, data)
        except CorruptEntry as err:
            self.discard(key, f"{err}")
            return None
        self._touch(path)
        return payload

    def put(self, key: CacheKey, payload: bytes, *, compile_time: float = 0.0) -> bool:
        """Store `payload` under `key` (replacing any entry); False when it could not be written."""
        data = encode_entry(key, payload, compile_time)
        if self.max_bytes is not None and len(data) > self.max_bytes:
            logger.info(
                "lamina cache: %s (%d bytes) exceeds the size bound; not cached",
                key.name,
                len(data),
            )
            return False
        path = self.path(key)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._write_atomically(path, data)
        except OSError as err:
            logger.warning("lamina cache: cannot write %s (%s); continuing without it", path, err)
            return False
        self._touch(path)
        if self.max_bytes is not None:
            self.evict(keep=path)
        return True

    def _write_atomically(self, path: Path, data: bytes) -> None:
        # Same directory, so the rename is atomic. No fsync: a crash can leave a short file
        # only where the checksum catches it, and compiling again is the whole penalty.
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{path.stem[:32]}-", suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _touch(self, path: Path) -> None:
        now = self._clock()
        with contextlib.suppress(OSError):  # evicted meanwhile: nothing to record
            os.utime(path, ns=(now, now))

    def discard(self, key: CacheKey, reason: str) -> None:
        """Remove `key`'s entry, logging why (a corrupt entry, or one jaxlib rejected)."""
        path = self.path(key)
        logger.warning("lamina cache: removing %s: %s; compiling again", path, reason)
        with contextlib.suppress(FileNotFoundError):
            try:
                path.unlink()
            except OSError as err:
                logger.warning("lamina cache: cannot remove %s (%s)", path, err)

    def entries(self) -> list[EntryInfo]:
        """The entry files, least recently used first."""
        found = []
        for path, stat in self._scan(ENTRY_SUFFIX):
            found.append(EntryInfo(path, stat.st_size, stat.st_mtime_ns))
        found.sort(key=lambda e: (e.last_used_ns, e.path.name))
        return found

    def _scan(self, suffix: str) -> Iterator[tuple[Path, os.stat_result]]:
        try:
            listing = list(os.scandir(self.root))
        except FileNotFoundError:
            return
        for item in listing:
            if not item.name.endswith(suffix):
                continue
            try:
                yield Path(item.path), item.stat(follow_symlinks=False)
            except FileNotFoundError:  # removed by another process while listing
                continue

    def evict(self, *, keep: Path | None = None) -> int:
        """Remove least recently used entries until the total fits `max_bytes`; how many went.

        Also removes temporary files that writers which died left behind.
        """
        now = self._clock()
        for path, stat in self._scan(TEMP_SUFFIX):
            if now - stat.st_mtime_ns > STALE_TEMP_SECONDS * 1_000_000_000:
                with contextlib.suppress(OSError):
                    path.unlink()
        if self.max_bytes is None:
            return 0
        entries = self.entries()
        total = sum(e.size for e in entries)
        removed = 0
        for entry in entries:
            if total <= self.max_bytes:
                break
            if entry.path == keep:
                continue
            # Another process may be evicting too: a file already gone still counts as freed.
            with contextlib.suppress(FileNotFoundError):
                entry.path.unlink()
                removed += 1
                logger.debug("lamina cache: evicted %s (%d bytes)", entry.path.name, entry.size)
            total -= entry.size
        return removed

    def clear(self) -> int:
        """Remove every entry and temporary file; how many entries there were."""
        count = 0
        for suffix in (ENTRY_SUFFIX, TEMP_SUFFIX):
            for path, _ in self._scan(suffix):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    count += suffix == ENTRY_SUFFIX
        return count

    def info(self) -> CacheInfo:
        entries = self.entries()
        return CacheInfo(self.root, len(entries), sum(e.size for e in entries), self.max_bytes)
