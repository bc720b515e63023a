"""A child process for the AOT tests: `python aot_child.py FILE INPUT.npy`.

Loads the saved function FILE with tracing, lowering and compiling made impossible, calls it on
the array in INPUT.npy and writes each output leaf to `FILE.out<i>.npy`.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import numpy as np

import lamina_runtime as lr
from lamina_core import tree_util
from lamina_runtime import aot, executable, pipeline


def forbidden(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("a loaded function must not trace, lower or compile")


executable.Runtime.compile = forbidden  # type: ignore[method-assign]
pipeline.lower_staged = forbidden
# The module that defines `JitFunction` (`lamina_runtime.jit` is the function).
sys.modules["lamina_runtime._jit"].JitFunction.stage = forbidden

if __name__ == "__main__":
    path, data = sys.argv[1], np.load(sys.argv[2])
    loaded = aot.load(path)
    out = loaded(data, scale=np.float32(2))
    for i, leaf in enumerate(tree_util.tree_leaves(out)):
        np.save(f"{path}.out{i}.npy", np.asarray(leaf))
    assert lr.runtime().compilations == 0
    print(tree_util.tree_structure(out))
