"""The persistent cache's size estimate: a journal of size changes that processes share.

Keeping a directory under its bound by listing it at every write costs a `stat` per entry
(32 ms per compilation with 7,800 entries). Instead every write appends its size change to a
small file in the directory, and the entries' total is estimated as the sum of the journal's
records; the directory is listed (a scan) only when the estimate passes the bound, when the
journal has no scan's total, or every `RECONCILE_WRITES` records or `RECONCILE_SECONDS`.

The journal is text, one record a line, after a header line:

    +123            an entry written (by how much it grew the entries, if it replaced one)
    =4096 17000     a scan found 4096 bytes of entries, at 17000 ns since the epoch

Processes append without a lock: each record is one `write` to a file opened `O_APPEND`, so
records never interleave. A scan first replaces the journal with an empty one (atomically),
then lists the directory and appends its total. Every entry written before the replacement
is in the listing, and every record appended after it is in the new journal, so an entry is
counted at least once: an entry written while a scan lists may be counted twice, none is
missed. A write whose record went to the replaced journal happened before the listing, which
counts it. So that the estimate errs only high (a scan sooner, never an unnoticed excess),
removals are not recorded, nor is an entry replaced by a smaller one. What the journal cannot
see (entries copied in by hand, a process that died between writing an entry and its record)
the regular scans reconcile. A journal that is missing, malformed or without a scan's total (one in
progress, or a scanner that died) is no estimate: the next write scans.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path
from typing import Final

JOURNAL_NAME: Final = "size.lxc-journal"
"""The journal's file name in the cache directory (not an entry's, nor a temporary file's)."""
HEADER: Final = b"lamina cache size journal 1\n"
RECONCILE_WRITES: Final = 256
"""Records after which the next write scans, whatever the estimate says."""
RECONCILE_SECONDS: Final = 3600
"""Age of the last scan after which the next write scans (it also removes dead writers'
temporary files, `STALE_TEMP_SECONDS` old)."""
LOW_WATER: Final = 0.9
"""A scan that finds the entries over the bound evicts down to this fraction of it, so that the
writes after it fit without another scan."""
MAX_JOURNAL_BYTES: Final = 1 << 20
"""A longer journal is malformed (`RECONCILE_WRITES` records take a few kilobytes)."""

_DELTA: Final = re.compile(rb"\+[0-9]{1,19}")
_SCAN: Final = re.compile(rb"=([0-9]{1,19}) ([0-9]{1,20})")
_FLAGS: Final = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
"""Never block on a FIFO, nor follow a link, planted in the journal's place."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the journal says of the entries."""

    total: int
    """Their size in bytes: the last scan's, plus the changes recorded since."""
    records: int
    """Size changes recorded since the last scan."""
    scanned_ns: int
    """When the last scan recorded its total (the clock's nanoseconds)."""


def parse(data: bytes) -> Estimate | None:
    """The estimate a journal's bytes hold; None if malformed or without a scan's total."""
    if not data.startswith(HEADER) or not data.endswith(b"\n"):
        return None  # a torn last record is malformed too: the next scan rewrites the journal
    total, records, scanned = 0, 0, None
    for line in data[len(HEADER) : -1].split(b"\n") if len(data) > len(HEADER) else ():
        if _DELTA.fullmatch(line):
            total += int(line)
            records += 1
        elif match := _SCAN.fullmatch(line):
            # Two scans that raced both append a total: their sum errs high, which only
            # brings the next scan sooner.
            total += int(match[1])
            scanned = max(scanned or 0, int(match[2]))
        else:
            return None
    return None if scanned is None else Estimate(total, records, scanned)


def read(path: Path) -> Estimate | None:
    """The estimate of the journal at `path`; None if there is none or it is malformed.

    Raises:
        OSError: it exists but cannot be read (missing: None).
    """
    try:
        fd = os.open(path, os.O_RDONLY | _FLAGS | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat_module.S_ISREG(info.st_mode) or info.st_size > MAX_JOURNAL_BYTES:
            return None
        data = os.read(fd, MAX_JOURNAL_BYTES + 1)
    finally:
        os.close(fd)
    return parse(data)


def _append(path: Path, record: bytes) -> None:
    # Never created here: a journal begins with its header, written by a scan.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | _FLAGS | getattr(os, "O_BINARY", 0))
    try:
        if not stat_module.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.write(fd, record)
    finally:
        os.close(fd)


def record_growth(path: Path, grown: int) -> None:
    """Append that a write grew the entries by `grown` bytes (>= 0).

    Raises:
        OSError: the journal is missing (FileNotFoundError) or cannot be written.
    """
    _append(path, b"+%d\n" % max(grown, 0))


def record_scan(path: Path, total: int, now_ns: int) -> None:
    """Append what a scan found: `total` bytes of entries at `now_ns`.

    Raises:
        OSError: the journal is missing or cannot be written.
    """
    _append(path, b"=%d %d\n" % (max(total, 0), max(now_ns, 0)))


def is_current(estimate: Estimate | None, max_bytes: int, now_ns: int) -> bool:
    """Whether a write may trust `estimate` and skip the scan: there is one, it is within the
    bound, and the last scan is neither too many records nor too long ago."""
    return (
        estimate is not None
        and estimate.total <= max_bytes
        and estimate.records < RECONCILE_WRITES
        and 0 <= now_ns - estimate.scanned_ns < RECONCILE_SECONDS * 1_000_000_000
    )
