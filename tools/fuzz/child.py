"""The child process: run snippets with one side (`lamina` or `jax`) bound to `jax`, `jnp`, `lax`.

Run as a script (`python child.py SIDE`), never imported by the parent: it reads a JSON list of
`{"name", "code"}` from stdin and writes one JSON line per case to its original stdout, flushed
before the next case starts, so that the parent knows which case was running when the child
died or stopped answering. Anything the libraries print goes to stderr.

A snippet's value is its last expression statement (or `None`). Results are sent as the leaves
of the side's pytree flattening, each as an `.npy` payload in base64 (no pickle).
"""

from __future__ import annotations

import ast
import base64
import io
import json
import math
import os
import sys
import warnings
from typing import Any

import numpy as np

MAX_MESSAGE = 4000
NARROW = {"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"}


def _prelude(side: str) -> dict[str, Any]:
    if side == "lamina":
        import lamina as jax
        import lamina.aot as aot
        import lamina.numpy as jnp
        from lamina import lax

        return {"jax": jax, "jnp": jnp, "lax": lax, "aot": aot, "SIDE": side}
    import jax as real_jax
    import jax.numpy as real_jnp
    from jax import lax as real_lax

    return {"jax": real_jax, "jnp": real_jnp, "lax": real_lax, "aot": None, "SIDE": side}


def _leaf(value: Any) -> dict[str, Any]:
    try:
        arr = np.asarray(value)
    except Exception as err:  # a leaf numpy cannot take: compare its text
        return {"repr": f"<unconvertible {type(value).__name__}: {err}>"}
    if arr.dtype == object or arr.dtype.kind in "USV":
        return {"repr": repr(value).replace("jax", "lamina")}
    dtype = str(arr.dtype)
    if dtype in NARROW:
        arr = arr.astype(np.float32 if "float" in dtype else np.int8)
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return {"dtype": dtype, "npy": base64.b64encode(buf.getvalue()).decode()}


def _encode(ns: dict[str, Any], value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    leaves = ns["jax"].tree_util.tree_leaves(value)
    return [_leaf(leaf) for leaf in leaves]


def _run(code: str, ns: dict[str, Any]) -> Any:
    tree = ast.parse(code)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body[-1].value)
        tree.body.pop()
    exec(compile(tree, "<case>", "exec"), ns)
    return None if last is None else eval(compile(last, "<case>", "eval"), ns)


def main() -> None:
    side = sys.argv[1]
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # library output goes to stderr, the protocol keeps the real stdout
    warnings.simplefilter("ignore")
    cases = json.load(sys.stdin)
    base: dict[str, Any] = {"np": np, "math": math, "os": os}
    failed: BaseException | None = None
    try:
        base.update(_prelude(side))
    except Exception as err:  # e.g. a malformed environment variable: every case raises it
        failed = err
    for case in cases:
        ns = dict(base)
        try:
            if failed is not None:
                raise failed
            value = _run(case["code"], ns)
            record: dict[str, Any] = {"status": "ok", "leaves": _encode(ns, value)}
        except BaseException as err:  # SystemExit and KeyboardInterrupt are outcomes too
            message = str(err)[:MAX_MESSAGE]
            mro = [k.__name__ for k in type(err).__mro__]
            record = {"status": "raise", "type": type(err).__name__, "message": message, "mro": mro}
        record["name"] = case["name"]
        proto.write(json.dumps(record) + "\n")
        proto.flush()


if __name__ == "__main__":
    main()
