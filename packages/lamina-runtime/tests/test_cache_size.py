"""The persistent cache's size journal: writes keep the directory bounded without listing it.

A scan (`CompilationCache.evict`) lists the directory; the tests count scans by wrapping it, and
compare the journal's estimate with the entries' true total, which it may exceed (a scan comes
sooner) but never trail (the directory would pass its bound unnoticed).
"""

from __future__ import annotations

import itertools
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lamina_runtime import _cache_size
from lamina_runtime._cache_size import HEADER, LOW_WATER, RECONCILE_WRITES, Estimate
from lamina_runtime.cache_key import CacheKey, make_key
from lamina_runtime.compilation_cache import (
    ENTRY_SUFFIX,
    TEMP_SUFFIX,
    CompilationCache,
    encode_entry,
)


def key(name: str) -> CacheKey:
    return make_key(name, [("module", name.encode())])


def true_total(root: Path) -> int:
    return sum(p.stat().st_size for p in root.glob(f"*{ENTRY_SUFFIX}"))


def estimate(cache: CompilationCache) -> Estimate:
    found = _cache_size.read(cache.journal)
    assert found is not None, cache.journal.read_bytes()
    return found


class Scans:
    """Counts the scans of a cache (calls of its `evict`)."""

    def __init__(self, cache: CompilationCache, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = cache.evict

        def counted(**kwargs: object) -> int:
            self.count += 1
            return real(**kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(cache, "evict", counted)


def counter_clock(step_ns: int = 1_000_000) -> Callable[[], int]:
    ticks = itertools.count(1)
    return lambda: 1_700_000_000_000_000_000 + next(ticks) * step_ns


def test_writes_scan_once_then_keep_the_estimate_exact(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CompilationCache(cache_dir, max_bytes=1 << 20)
    scans = Scans(cache, monkeypatch)
    for i in range(50):
        cache.put(key(str(i)), b"x" * (100 + i))
    assert scans.count == 1  # the first write: no journal yet
    assert estimate(cache).total == true_total(cache_dir)
    assert estimate(cache).records == 49
    cache.put(key("7"), b"y" * 500)  # replaced by a larger entry: grows by the difference
    cache.put(key("8"), b"y")  # by a smaller one: not recorded (the estimate errs high)
    assert estimate(cache).total == true_total(cache_dir) + 108 - 1
    assert scans.count == 1


def test_estimate_keeps_the_directory_within_its_bound(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound = 40_000
    cache = CompilationCache(cache_dir, max_bytes=bound, clock=counter_clock())
    scans = Scans(cache, monkeypatch)
    rng = random.Random(0)
    written = 0
    for _ in range(400):
        size = rng.randrange(50, 2000)
        cache.put(key(f"k{rng.randrange(600)}"), b"x" * size)
        written += size + 88
        total = true_total(cache_dir)
        assert total <= bound
        assert estimate(cache).total >= total  # errs high only
    # A scan that evicts frees down to LOW_WATER of the bound: the next scan waits for the
    # records to grow by the rest (or for RECONCILE_WRITES records). A scan per write was 400.
    most = 1 + written / (bound * (1 - LOW_WATER)) + 400 / RECONCILE_WRITES
    assert scans.count <= most, (scans.count, most)
    assert scans.count < 400 / 3


def test_crossing_the_bound_evicts_the_least_recently_used_to_the_low_water_mark(
    cache_dir: Path,
) -> None:
    size = len(b"x" * 1000) + 88  # an entry's header is 88 bytes
    cache = CompilationCache(cache_dir, max_bytes=10 * size, clock=counter_clock())
    for i in range(10):
        cache.put(key(str(i)), b"x" * 1000)
    cache.get(key("0"))  # now the most recently used
    assert len(list(cache_dir.glob(f"*{ENTRY_SUFFIX}"))) == 10
    cache.put(key("new"), b"x" * 1000)
    left = {p.name for p in cache_dir.glob(f"*{ENTRY_SUFFIX}")}
    assert true_total(cache_dir) <= LOW_WATER * 10 * size
    assert left == {
        cache.path(key(k)).name for k in ("0", "3", "4", "5", "6", "7", "8", "9", "new")
    }
    assert estimate(cache) == Estimate(true_total(cache_dir), 0, estimate(cache).scanned_ns)


@pytest.mark.parametrize(
    "damage",
    [
        b"garbage",
        HEADER,  # no scan's total: a scan in progress, or a scanner that died
        HEADER + b"=100 5\n+12",  # a torn record
        HEADER + b"=100 5\n+twelve\n",
        HEADER + b"=100 5\n" + b"+1\n" * (_cache_size.MAX_JOURNAL_BYTES // 3),
        None,  # missing
        "fifo",
        "directory",
    ],
    ids=["garbage", "header-only", "torn", "not-a-number", "huge", "missing", "fifo", "dir"],
)
def test_malformed_or_missing_journal_falls_back_to_a_scan(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes | str | None
) -> None:
    cache = CompilationCache(cache_dir, max_bytes=1 << 20)
    for i in range(5):
        cache.put(key(str(i)), b"x" * 100)
    cache.journal.unlink()
    if damage == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(cache.journal)
    elif damage == "directory":
        cache.journal.mkdir()
    elif isinstance(damage, bytes):
        cache.journal.write_bytes(damage)
    scans = Scans(cache, monkeypatch)
    assert cache.put(key("new"), b"x" * 100)  # never hangs on a FIFO, never raises
    assert scans.count == 1
    if damage == "directory":  # cannot be replaced by a file: no estimate, every write scans
        assert _cache_size.read(cache.journal) is None
        cache.put(key("newer"), b"x" * 100)
        assert scans.count == 2
        return
    assert estimate(cache) == Estimate(true_total(cache_dir), 0, estimate(cache).scanned_ns)
    cache.put(key("newer"), b"x" * 100)
    assert scans.count == 1
    assert list(cache_dir.glob(f"*{TEMP_SUFFIX}")) == []


def test_reconciled_every_so_many_writes_and_after_so_long(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = counter_clock()
    now = [clock()]
    cache = CompilationCache(cache_dir, max_bytes=1 << 30, clock=lambda: now[0])
    scans = Scans(cache, monkeypatch)
    cache.put(key("first"), b"x")
    # An entry copied in by hand: no record. The regular scans find it.
    (cache_dir / f"by-hand{ENTRY_SUFFIX}").write_bytes(b"z" * 5000)
    for i in range(RECONCILE_WRITES - 1):
        cache.put(key(str(i)), b"x")
    assert scans.count == 1
    assert estimate(cache).total == true_total(cache_dir) - 5000
    cache.put(key("one more"), b"x")
    assert scans.count == 2
    assert estimate(cache).total == true_total(cache_dir)
    now[0] += (_cache_size.RECONCILE_SECONDS - 1) * 1_000_000_000
    cache.put(key("within the hour"), b"x")
    assert scans.count == 2
    now[0] += 2 * 1_000_000_000
    cache.put(key("after the hour"), b"x")
    assert scans.count == 3
    now[0] -= 10**12  # a clock set back: the scan's time is in the future, not trusted
    cache.put(key("clock set back"), b"x")
    assert scans.count == 4


def test_entries_written_while_a_scan_lists_are_counted_at_least_once(cache_dir: Path) -> None:
    cache = CompilationCache(cache_dir, max_bytes=1 << 20)
    other = CompilationCache(cache_dir, max_bytes=1 << 20)  # another process, in effect
    cache.put(key("a"), b"x" * 100)
    real_listing = cache._listing

    def listing_while_another_writes() -> list[os.DirEntry[str]] | None:
        # Another process writes an entry and records it after the journal was emptied and
        # before the directory is listed (and reads the journal only after the scan).
        entry = encode_entry(key("during"), b"x" * 300)
        other._write_atomically(other.path(key("during")), entry)
        _cache_size.record_growth(other.journal, len(entry))
        return real_listing()

    cache._listing = listing_while_another_writes  # type: ignore[method-assign]
    cache.evict()
    # Listed and recorded: counted twice, so the estimate errs high, never low.
    assert estimate(cache).total == true_total(cache_dir) + len(b"x" * 300) + 88


CHILD = """
import sys, time
from pathlib import Path
from lamina_runtime.cache_key import make_key
from lamina_runtime.compilation_cache import CompilationCache

root, tag, count, bound, go = sys.argv[1:]
cache = CompilationCache(Path(root), max_bytes=int(bound))
print("ready", flush=True)
while not Path(go).exists():
    time.sleep(0.001)
for i in range(int(count)):
    name = f"{tag}-{i}"
    cache.put(make_key(name, [("module", name.encode())]), b"x" * (200 + (7 * i) % 900))
"""


def run_children(cache_dir: Path, tags: list[str], count: int, bound: int) -> None:
    go = cache_dir.parent / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(cache_dir), tag, str(count), str(bound), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in tags
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1][-2000:]
        go.touch()
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err[-3000:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def test_another_process_writes_are_seen_and_reconciled(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound = 60_000
    cache = CompilationCache(cache_dir, max_bytes=bound)
    for i in range(10):
        cache.put(key(f"mine{i}"), b"x" * 1000)
    run_children(cache_dir, ["other"], 40, bound)
    # The other process's writes are in the journal: this one's estimate is the true total.
    assert estimate(cache).total == true_total(cache_dir)
    scans = Scans(cache, monkeypatch)
    while scans.count == 0:  # fill until the estimate passes the bound: then a scan evicts
        cache.put(key(f"more{true_total(cache_dir)}"), b"x" * 1000)
    assert true_total(cache_dir) <= LOW_WATER * bound
    assert not cache.path(key("mine0")).exists()  # the least recently used went first
    assert estimate(cache).total == true_total(cache_dir)


@pytest.mark.slow  # four fresh interpreters on two cores: about 10 s
def test_four_processes_writing_at_once_stay_within_the_bound(cache_dir: Path) -> None:
    bound = 50_000  # about 70 of the 400 entries written
    run_children(cache_dir, ["a", "b", "c", "d"], 100, bound)
    total = true_total(cache_dir)
    assert 0 < total <= bound
    found = _cache_size.read(cache_dir / _cache_size.JOURNAL_NAME)
    assert found is not None and found.total >= total  # no write was missed
    assert list(cache_dir.glob(f"*{TEMP_SUFFIX}")) == []
