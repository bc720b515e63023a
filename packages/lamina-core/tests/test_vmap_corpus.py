"""The differentiation corpora, batched: every program of the AD test corpora (elementwise,
structural, indexing) under `vmap` with batch size 3 and a mix of in_axes 0/1/-1/None, against
JAX's printed jaxpr and values, `vmap(jit(f))`, and a per-example loop (`check_vmap`).

Each float argument is mapped along an axis chosen by the case's position (so the corpus as a
whole mixes every kind); the three examples are the argument scaled by 1, 0.9 and 1.1. Other
arguments (indices, integers) are unmapped, so their values stay what the program expects.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from lamina_core.testing import Oracle, check_vmap

# The largest corpus of the folder: run by the `slow` session, kept out of the default run.
pytestmark = [pytest.mark.oracle, pytest.mark.slow]


def _sibling(name: str) -> ModuleType:
    """A test module of this folder, by path (pytest imports test files in importlib mode)."""
    spec = importlib.util.spec_from_file_location(
        f"_vmap_corpus_{name}", Path(__file__).with_name(f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


elementwise = _sibling("test_ad_elementwise")
structural = _sibling("test_ad_structural")
indexing = _sibling("test_ad_indexing")

Case = tuple[str, Any, tuple[Any, ...]]
CORPUS: list[Case] = [
    *[(f"elementwise {n}", p, a) for n, p, a in elementwise.CASES],
    *[(f"structural {n}", p, a) for n, p, a in structural.ALL],
    *[(f"indexing {n}", p, a) for n, p, a in indexing.CASES],
]
PATTERN = (0, 1, None, -1)
SCALES = (1.0, 0.9, 1.1)

# Programs whose batched jaxpr differs from JAX's for a reason outside the batching rules
# (values are still checked): name -> why.
NOT_PRINTED: dict[str, str] = {}


def _is_float(x: Any) -> bool:
    return np.asarray(x).dtype.kind in "fc" or str(np.asarray(x).dtype) == "bfloat16"


def _batched(k: int, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    axes: list[Any] = []
    out: list[Any] = []
    for j, x in enumerate(args):
        x = np.asarray(x)
        axis = PATTERN[(k + j) % len(PATTERN)] if _is_float(x) else None
        if axis is not None and x.ndim == 0:
            axis = 0
        axes.append(axis)
    if all(a is None for a in axes):
        first_float = next((j for j, x in enumerate(args) if _is_float(x)), 0)
        axes[first_float] = 0
    for x, axis in zip(args, axes, strict=True):
        x = np.asarray(x)
        if axis is None:
            out.append(x)
            continue
        copies = [
            (x * np.asarray(s, x.dtype)).astype(x.dtype) if _is_float(x) else x for s in SCALES
        ]
        out.append(np.stack(copies, axis=axis if axis >= 0 else x.ndim + 1 + axis))
    return tuple(out), tuple(axes)


@pytest.mark.parametrize(
    ("k", "name", "program", "args"),
    [(k, n, p, a) for k, (n, p, a) in enumerate(CORPUS)],
    ids=[c[0] for c in CORPUS],
)
def test_batched_program_matches_jax(
    oracle: Oracle, k: int, name: str, program: Any, args: tuple[Any, ...]
) -> None:
    batched, in_axes = _batched(k, args)
    check_vmap(
        oracle,
        program,
        *batched,
        in_axes=in_axes,
        printed=name not in NOT_PRINTED,
        jitted=k % 3 == 0,
    )
