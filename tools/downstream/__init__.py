"""Downstream libraries' own test suites, run on JAX and on Lamina (issue 35).

Each suite (`suites.py`: optax, chex) is the library's shipped tests, taken from its source
distribution, run twice with pytest in child processes: once as shipped (on JAX), once with
`jax` meaning Lamina (`pytest -p lamina.as_jax`, or `python -m lamina.as_jax -m pytest`). The
report (`report.py`) counts, per suite, the tests that pass on JAX and how many of those pass on
Lamina (tests skipped, or failing on JAX too, do not count), and groups the others by cause:
the exception's type and first line.

    python -m tools.downstream                     # every suite, installed beforehand
    python -m tools.downstream --install --suite chex
"""

from tools.downstream.report import Outcome, Report, compare, parse_junit
from tools.downstream.suites import SUITES, Suite

__all__ = ["SUITES", "Outcome", "Report", "Suite", "compare", "parse_junit"]
