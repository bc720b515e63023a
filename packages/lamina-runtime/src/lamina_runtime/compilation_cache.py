"""The persistent compilation cache: serialized executables in a directory, one file each.

Invariants:

- One file per entry, `<name>-<digest>.lxc`, written to a temporary file in the same directory
  and renamed into place, so a reader sees a whole entry or none (never a partial file), and
  processes racing on one key each rename a complete entry over the other's: one valid entry
  remains.
- Every entry starts with a fixed header (magic, format version, the key's digest, payload
  length, checksum, compile time). The checksum covers the key's digest, the payload length,
  the compile time and the payload, so an entry whose header was rewritten under another key
  (another program's executable) fails it. A truncated, corrupted or foreign entry is detected
  on read, logged, removed and reported as a miss, so the caller recompiles: never a crash,
  never a wrong executable. Only regular files are read, opened non-blocking (a FIFO or a
  device in an entry's place is a miss, never a hang).
- The directory's entries are bounded in bytes; past the bound the least recently used go
  first. Use time is the file's modification time, set on every write and hit (no second file
  per entry, which is what corrupts JAX's two-file protocol). Writes do not list the directory:
  they keep a size estimate in a journal the processes share (`_cache_size`), which errs only
  high, and list it only when the estimate passes the bound or is missing, malformed or old.
- Any I/O error becomes a logged miss or a skipped write: a read-only, full or unlistable
  directory slows Lamina down, never stops it.
- The settings (environment variables included) are read and checked together, when the
  runtime first consults the cache: a bad value is an error naming the variable and the value
  at the first compilation, not after it.

The cache stores bytes under `CacheKey`s; it knows nothing of executables or of jaxlib. It is
an object (the `Runtime` owns one), never module state.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import logging
import math
import os
import secrets
import stat as stat_module
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
from lamina_runtime import _cache_size
from lamina_runtime._cache_size import Estimate
from lamina_runtime.cache_key import CACHE_FORMAT_VERSION, CacheKey

logger = logging.getLogger("lamina.cache")

ENTRY_SUFFIX: Final = ".lxc"
"""Entry files end so; the cache never reads, evicts or clears any other file."""
TEMP_SUFFIX: Final = ".lxc-tmp"
MAGIC: Final = b"\x89LMNXC\r\n"
"""PNG-style: a high byte and CR LF catch text-mode copies and 7-bit transfers."""
HEADER: Final = struct.Struct("<8sI32sQ32sI")
"""magic, format version, key digest, payload length, checksum, compile time (ms).

The checksum is the sha256 of the key digest, the payload length, the compile time and the
payload (`entry_checksum`): the key is bound into it."""
DEFAULT_MAX_BYTES: Final = 1 << 30
STALE_TEMP_SECONDS: Final = 3600
"""A temporary file this old belongs to a writer that died; the next scan (`evict`) removes it."""


def _optional_path(text: str) -> str | None:
    return text or None


def _seconds(text: str) -> float:
    """A duration from the environment: a non-negative number (`inf` for never); not NaN."""
    value = float(text)
    if math.isnan(value) or value < 0:
        raise ValueError(f"expected a non-negative number of seconds, got {text!r}")
    return value


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
    _seconds,
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
    min_compile_time: float = 0.0
    """Seconds a compilation must take for its executable to be written."""


def configured_cache_dir() -> Path:
    """The directory the configuration names (whether or not the cache is enabled)."""
    root = compilation_cache_dir.value
    return Path(root).expanduser() if root else default_cache_dir()


def configured_settings() -> CacheSettings | None:
    """The settings in effect (config options, then the environment); None when disabled.

    Every option is read, the cache's enabled or not, so that a malformed environment variable
    is reported by the first compilation that consults the cache (`ValueError` naming the
    variable and its value), not later.

    Raises:
        ValueError: an environment variable of the cache holds a malformed value.
    """
    enabled = enable_compilation_cache.value
    max_size = compilation_cache_max_size.value
    min_time = min_compile_time()
    root = configured_cache_dir()
    if not enabled or max_size == 0:
        return None
    return CacheSettings(root, None if max_size < 0 else max_size, min_time)


def min_compile_time() -> float:
    """`jax_persistent_cache_min_compile_time_secs`, checked.

    Raises:
        ValueError: it is NaN or negative, or its environment variable is not such a number.
    """
    value = min_compile_time_secs.value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"jax_persistent_cache_min_compile_time_secs takes seconds, got {value!r}")
    if math.isnan(value) or value < 0:
        raise ValueError(
            f"jax_persistent_cache_min_compile_time_secs is {value!r}; give seconds >= 0"
        )
    return float(value)


class CorruptEntry(ValueError):
    """An entry file that is not a whole, valid entry for the key it was read under."""


def entry_checksum(key_digest: bytes, payload: bytes | memoryview, millis: int) -> bytes:
    """The checksum an entry's header holds: over the key, sizes, compile time and payload."""
    h = hashlib.sha256(key_digest)
    h.update(struct.pack("<QI", len(payload), millis))
    h.update(payload)
    return h.digest()


def encode_entry(key: CacheKey, payload: bytes, compile_time: float = 0.0) -> bytes:
    """An entry file's bytes: the header, then the payload."""
    millis = max(0, min(int(compile_time * 1000), 0xFFFFFFFF))
    key_digest = bytes.fromhex(key.digest)
    digest = entry_checksum(key_digest, payload, millis)
    header = HEADER.pack(MAGIC, CACHE_FORMAT_VERSION, key_digest, len(payload), digest, millis)
    return header + payload


@dataclass(frozen=True, slots=True)
class EntryHeader:
    """What an entry file says about itself."""

    version: int
    key_digest: str
    payload_size: int
    checksum: bytes
    """sha256 over the key digest, payload length, compile time and payload."""
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
            too long or fails its checksum (which covers the key: an entry moved or rewritten
            under another key fails it).
    """
    header = decode_header(data)
    if header.key_digest != key.digest:
        raise CorruptEntry(f"holds key {header.key_digest[:16]}…, not {key.digest[:16]}…")
    payload = data[HEADER.size :]
    if len(payload) != header.payload_size:
        raise CorruptEntry(
            f"payload is {len(payload)} bytes, the header says {header.payload_size}"
        )
    millis = HEADER.unpack_from(data)[5]
    if entry_checksum(bytes.fromhex(header.key_digest), payload, millis) != header.checksum:
        raise CorruptEntry("checksum mismatch (corrupted, or rewritten for another key)")
    return payload


def read_regular_file(path: Path, limit: int | None) -> bytes:
    """The bytes of `path` if it is a regular file (symlinks followed) of at most `limit` bytes.

    Opened non-blocking, so a FIFO or a device in its place never blocks the caller.

    Raises:
        FileNotFoundError: there is no such file.
        CorruptEntry: it is not a regular file, or is larger than `limit`.
        OSError: it cannot be opened or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat_module.S_ISREG(info.st_mode):
            raise CorruptEntry("not a regular file")
        if limit is not None and info.st_size > limit:
            raise CorruptEntry(f"{info.st_size} bytes is larger than the cache's bound")
        chunks, total = [], 0
        while chunk := os.read(fd, max(info.st_size + 1, 1 << 16)):
            chunks.append(chunk)
            total += len(chunk)
            if limit is not None and total > limit:  # it grew while being read
                raise CorruptEntry("larger than the cache's bound")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _regular_size(path: Path) -> int:
    """The size of the regular file at `path` (links not followed); 0 if there is none."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return 0
    return info.st_size if stat_module.S_ISREG(info.st_mode) else 0


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
        self.journal = self.root / _cache_size.JOURNAL_NAME
        self.estimate: Estimate | None = None
        """The entries' size as this process last read or scanned it (None: not yet, or the
        journal holds none); the journal on disk is what writes go by."""

    def __repr__(self) -> str:
        return f"CompilationCache({str(self.root)!r}, max_bytes={self.max_bytes})"

    def path(self, key: CacheKey) -> Path:
        """Where `key`'s entry lives (whether or not it exists)."""
        return self.root / f"{key.file_stem}{ENTRY_SUFFIX}"

    def get(self, key: CacheKey) -> bytes | None:
        """The payload stored under `key`, or None: missing, unreadable or corrupt (removed)."""
        path = self.path(key)
        try:
            data = read_regular_file(path, self.max_bytes)
            payload = decode_entry(key, data)
        except FileNotFoundError:
            return None
        except CorruptEntry as err:
            self.discard(key, f"{err}")
            return None
        except OSError as err:
            logger.warning("lamina cache: cannot read %s (%s); compiling instead", path, err)
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
            replaced = _regular_size(path)
            self._write_atomically(path, data)
        except OSError as err:
            logger.warning("lamina cache: cannot write %s (%s); continuing without it", path, err)
            return False
        self._touch(path)
        if self.max_bytes is not None:
            try:
                self._keep_bounded(self.max_bytes, len(data) - replaced, path)
            except OSError as err:  # evict's own errors are logged; this is a last resort
                logger.warning("lamina cache: cannot evict in %s (%s)", self.root, err)
        return True

    def _keep_bounded(self, max_bytes: int, grown: int, written: Path) -> None:
        """After a write that grew the entries by `grown` bytes: record it, and scan (evicting
        if need be) only when the estimate does not show the entries within the bound."""
        try:
            # Recorded before reading, so that of racing writers the last to read sees every
            # record: the directory is never left over its bound unnoticed.
            _cache_size.record_growth(self.journal, grown)
            estimate = _cache_size.read(self.journal)
        except OSError:  # missing (a new directory), or unusable: a scan writes it anew
            estimate = None
        self.estimate = estimate
        if not _cache_size.is_current(estimate, max_bytes, self._clock()):
            self.evict(keep=written, low_water=_cache_size.LOW_WATER)

    def _write_atomically(self, path: Path, data: bytes) -> None:
        # Same directory, so the rename is atomic. No fsync: a crash can leave a short file
        # only where the checksum catches it, and compiling again is the whole penalty.
        # A random part in the prefix names this write's temporary file before it exists: a
        # KeyboardInterrupt inside `mkstemp`, after it made the file, cannot leave it behind.
        prefix = f".{path.stem[:32]}-{secrets.token_hex(4)}-"
        try:
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=prefix, suffix=TEMP_SUFFIX)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            for leftover in self.root.glob(f"{glob.escape(prefix)}*{TEMP_SUFFIX}"):
                with contextlib.suppress(OSError):
                    leftover.unlink()
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

    def entries(self, *, strict: bool = True) -> list[EntryInfo]:
        """The entry files, least recently used first.

        Raises:
            OSError: the directory cannot be listed (unless not `strict`: then it has none).
        """
        found = []
        for path, stat in self._scan(ENTRY_SUFFIX, strict=strict):
            found.append(EntryInfo(path, stat.st_size, stat.st_mtime_ns))
        found.sort(key=lambda e: (e.last_used_ns, e.path.name))
        return found

    def _scan(self, suffix: str, *, strict: bool) -> Iterator[tuple[Path, os.stat_result]]:
        """The files named `*suffix` (symlinks not followed). A missing directory has none; one
        that cannot be listed raises if `strict`, else is logged and has none."""
        try:
            listing = list(os.scandir(self.root))
        except FileNotFoundError:
            return
        except OSError as err:
            if strict:
                raise
            logger.warning("lamina cache: cannot list %s (%s); not evicting", self.root, err)
            return
        for item in listing:
            if not item.name.endswith(suffix):
                continue
            try:
                yield Path(item.path), item.stat(follow_symlinks=False)
            except OSError:  # removed by another process while listing, or unreadable
                continue

    def evict(self, *, keep: Path | None = None, low_water: float = 1.0) -> int:
        """List the directory; if its entries' total passes `max_bytes`, remove the least
        recently used until it is at most `low_water` times that. How many went.

        Also removes temporary files that writers which died left behind, and records the
        total in the size journal. Never raises for I/O: a directory it cannot list or files
        it cannot remove are logged and left.
        """
        # One listing, no `Path` per file: this runs over what may be thousands of entries.
        now = self._clock()
        bounded = self.max_bytes is not None
        # Emptied before listing, so that what is written meanwhile is counted (see
        # `_cache_size`). Without a journal the next write scans again: no harm.
        journal = bounded and self._restart_journal()
        listing = self._listing()
        if listing is None:
            return 0
        stale_ns = STALE_TEMP_SECONDS * 1_000_000_000
        entries: list[tuple[int, str, str, int]] = []
        for item in listing:
            name = item.name
            try:
                if name.endswith(ENTRY_SUFFIX):
                    stat = item.stat(follow_symlinks=False)
                    entries.append((stat.st_mtime_ns, name, item.path, stat.st_size))
                elif (
                    name.endswith(TEMP_SUFFIX)
                    and now - item.stat(follow_symlinks=False).st_mtime_ns > stale_ns
                ):
                    os.unlink(item.path)
            except OSError:  # removed by another process meanwhile, or unreadable
                continue
        if self.max_bytes is None:
            return 0
        entries.sort()
        total = sum(e[3] for e in entries)
        target = self.max_bytes if total <= self.max_bytes else int(self.max_bytes * low_water)
        kept = None if keep is None else str(keep)
        removed = 0
        for _, name, path, size in entries:
            if total <= target:
                break
            if path == kept:
                continue
            # Another process may be evicting too: a file already gone still counts as freed.
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as err:
                logger.warning("lamina cache: cannot evict %s (%s)", path, err)
                continue
            else:
                removed += 1
                logger.debug("lamina cache: evicted %s (%d bytes)", name, size)
            total -= size
        if journal:
            try:
                _cache_size.record_scan(self.journal, total, now)
            except OSError as err:
                logger.debug("lamina cache: cannot record the size in %s (%s)", self.journal, err)
            else:
                self.estimate = Estimate(total, 0, now)
        return removed

    def _restart_journal(self) -> bool:
        """Replace the size journal by an empty one; False (logged) if it cannot be written."""
        try:
            self._write_atomically(self.journal, _cache_size.HEADER)
        except FileNotFoundError:  # no directory yet: nothing to count
            return False
        except OSError as err:
            logger.debug("lamina cache: cannot write %s (%s)", self.journal, err)
            return False
        return True

    def _listing(self) -> list[os.DirEntry[str]] | None:
        """The directory's items; none if it is missing; None (logged) if it cannot be listed."""
        try:
            return list(os.scandir(self.root))
        except FileNotFoundError:
            return []
        except OSError as err:
            logger.warning("lamina cache: cannot list %s (%s); not evicting", self.root, err)
            return None

    def clear(self) -> int:
        """Remove every entry and temporary file; how many entries there were.

        Raises:
            OSError: the directory cannot be listed, or an entry cannot be removed.
        """
        count = 0
        for suffix in (ENTRY_SUFFIX, TEMP_SUFFIX):
            for path, _ in self._scan(suffix, strict=True):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    count += suffix == ENTRY_SUFFIX
        with contextlib.suppress(FileNotFoundError):
            self.journal.unlink()
        self.estimate = None
        return count

    def info(self) -> CacheInfo:
        entries = self.entries()
        return CacheInfo(self.root, len(entries), sum(e.size for e in entries), self.max_bytes)
