"""Fuzz harness (issue 21): malformed and edge-case calls, Lamina against JAX, in child processes.

A case is a small Python snippet (`cases.py` builds the table systematically: every lax/jnp
function Lamina has times bad inputs, jit settings, AOT artifacts, cache settings). The runner
(`runner.py`) executes the snippets in batches in child processes (`child.py`), once with
`lamina` and once with `jax` bound to the same names, with a per-case timeout, so that an abort
or a hang is counted, not fatal. `classify.py` compares the two outcomes.

    python -m tools.fuzz --fast     # the CI subset
    python -m tools.fuzz            # everything
"""

from tools.fuzz.cases import KNOWN_ISSUES, Case, all_cases, fast_cases
from tools.fuzz.classify import Category, Verdict, classify
from tools.fuzz.runner import Outcome, run_cases

__all__ = [
    "KNOWN_ISSUES",
    "Case",
    "Category",
    "Outcome",
    "Verdict",
    "all_cases",
    "classify",
    "fast_cases",
    "run_cases",
]
