"""Smoke test of the oracle fixture itself."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from lamina_core.testing import Oracle


@pytest.mark.oracle
def test_oracle_compares_the_seed_func1(oracle: Oracle) -> None:
    def program(jnp: ModuleType, lax: ModuleType) -> Any:
        return lambda first, second: jnp.sum(first + jnp.sin(second) * 3.0)

    oracle.check(program, np.zeros(8, np.float32), np.ones(8, np.float32))
