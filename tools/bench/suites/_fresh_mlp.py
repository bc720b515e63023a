"""The child process of `cache.mlp20_*`: `python _fresh_mlp.py lamina|jax CACHE_DIR`.

Imports the side, points its persistent compilation cache at CACHE_DIR (for JAX: every entry
written, no minimum compile time or size), runs a jitted 20-layer MLP forward (width 256, batch
32) once, and prints one JSON line: the seconds from after the imports to the first result
(`first_result`), the imports' seconds, and a checksum of the result.

Run as a script, by path: it imports nothing of `tools` (the harness's own imports would count).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

LAYERS, WIDTH, BATCH = 20, 256, 32


def main(side: str, cache_dir: str) -> None:
    start = time.perf_counter()
    import numpy as np

    api: Any
    if side == "lamina":
        os.environ["LAMINA_COMPILATION_CACHE_DIR"] = cache_dir
        import lamina as api

        jnp: Any = api.numpy
    else:
        import jax as api
        import jax.numpy as jnp

        api.config.update("jax_compilation_cache_dir", cache_dir)
        api.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        api.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    imported = time.perf_counter()

    rng = np.random.default_rng(0)
    params = [
        (
            rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / np.sqrt(WIDTH),
            np.zeros(WIDTH, np.float32),
        )
        for _ in range(LAYERS)
    ]
    x = rng.standard_normal((BATCH, WIDTH), dtype=np.float32)

    def mlp(params: Any, x: Any) -> Any:
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return x

    begin = time.perf_counter()
    out = np.asarray(api.jit(mlp)(params, x))
    end = time.perf_counter()
    report = {
        "first_result": end - begin,
        "imports": imported - start,
        "checksum": float(out.sum()),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
