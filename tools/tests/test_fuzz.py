"""The fuzz harness (issue 21) on deliberate failures: an abort, a hang, a wrong result are
each caught and classified, and the batch goes on after them."""

from __future__ import annotations

from tools.fuzz import Case, Category, all_cases, classify, fast_cases, run_cases
from tools.fuzz.cases import KNOWN_ISSUES
from tools.fuzz.classify import names_fault

CASES = [
    Case("fine", "test", "jnp.add(np.float32(1), np.float32(2))"),
    Case("abort", "test", "os.abort()"),
    Case("after-abort", "test", "jnp.arange(3)"),
    Case("hang", "test", "import time\ntime.sleep(60)"),
    Case("after-hang", "test", "jnp.ones(2) * 2"),
    Case("wrong", "test", "jnp.float32(1.0 if SIDE == 'lamina' else 2.0)"),
    Case("clear-error", "test", "jnp.zeros(-1)", blame=("-1", "negative")),
    Case(
        "vague-error",
        "test",
        "raise ValueError(f'something went wrong: {len(SIDE)}')",
        blame=("axis",),
    ),
    Case("lamina-only-wrong", "test", "np.float32(3)", jax=False, expect="np.float32(4)"),
    Case("lamina-only-right", "test", "np.float32(4)", jax=False, expect="np.float32(4)"),
]


def test_deliberate_failures_are_caught_classified_and_survived() -> None:
    # One test runs the batch once (each case in child processes, a hang waits out its
    # timeout): split over tests, every parallel worker would run it again.
    results = run_cases(CASES, workers=2, timeout=8.0)
    verdicts = {
        c.name: classify(c, results["lamina"][c.name], results["jax"].get(c.name)).category
        for c in CASES
    }
    # an abort is counted, not fatal: the next case runs
    assert verdicts["abort"] is Category.ABORT
    assert verdicts["after-abort"] is Category.OK
    # a hang is counted, and the batch goes on
    assert verdicts["hang"] is Category.HANG
    assert verdicts["after-hang"] is Category.OK
    # a wrong result is a failure
    assert verdicts["wrong"] is Category.WRONG
    assert verdicts["lamina-only-wrong"] is Category.WRONG
    assert verdicts["lamina-only-right"] is Category.OK
    assert all(verdicts[n].failure for n in ("abort", "hang", "wrong"))
    # errors must name the fault
    assert verdicts["fine"] is Category.OK
    assert verdicts["clear-error"] is Category.OK
    assert verdicts["vague-error"] is Category.UNHELPFUL


def test_names_fault_matches_numbers_as_words() -> None:
    case = Case("x", "test", "", blame=("5",))
    assert names_fault(case, "axis 5 is out of bounds")
    assert not names_fault(case, "got 15 and 0.5")


def test_the_table() -> None:
    cases = all_cases()
    assert len(cases) >= 500
    assert {c.area for c in cases} >= {"jnp", "lax", "jit", "aot", "cache"}
    fast = fast_cases()
    assert 100 <= len(fast) < len(cases)
    assert not {c.name for c in fast} & set(KNOWN_ISSUES)
    assert set(KNOWN_ISSUES) <= {c.name for c in cases}
