"""The `lamina` command line as `test_cli.py` and `test_cli_jaxpr_files.py` drive it: through
click's CliRunner, on a model file written under a fresh module name (loaded once per process
with `lamina_core.testing.load_test_module`, so the names stay fresh across both)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from lamina._cli import cli

MODEL = """
import ml_dtypes
import numpy as np
import lamina
import lamina._cli
import lamina.numpy as jnp

W = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
H = np.arange(4, dtype=ml_dtypes.bfloat16)

def predict(x, b):
    return jnp.tanh(x @ W) + b

def pair(x):
    return {"double": x * 2, "parts": (x.sum(), x.max())}

def half(x):
    return x * H

@lamina.jit
def already_jitted(x):
    return x + 1.0

NOT_A_FUNCTION = 3
"""
W = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
"""The model's `W`, for the values the tests expect."""

_names = itertools.count()


def invoke(*args: str, code: int = 0) -> Result:
    """`lamina ARGS` run in this process; fails unless it exits with status `code`."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def model(tmp_path: Path) -> str:
    """`MODEL` in a file of its own, under a module name no other has; returns
    `path/to/model.py`."""
    path = tmp_path / f"cli_model_{next(_names)}.py"
    path.write_text(MODEL)
    return str(path)
