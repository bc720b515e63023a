"""`jax._src.dispatch` under `lamina.as_jax`: `wait_for_tokens`, which equinox registers to run
at exit (it waits for the effects of programs still running), is Lamina's `effects_barrier`.
"""

from __future__ import annotations

from lamina import effects_barrier


def wait_for_tokens() -> None:
    """Wait until every effect of the programs dispatched so far has happened."""
    effects_barrier()
