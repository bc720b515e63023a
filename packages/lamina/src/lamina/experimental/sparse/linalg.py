"""`jax.experimental.sparse.linalg`: `lobpcg_standard`, and `spsolve`, lowered on the CPU as
JAX lowers it, to a host callback of `scipy.sparse.linalg.spsolve`."""

from typing import Any

from lamina.interpreters import mlir
from lamina_core.sparse import lobpcg_standard, spsolve, spsolve_p


def _spsolve_cpu_lowering(
    ctx: Any, data: Any, indices: Any, indptr: Any, b: Any, **params: Any
) -> Any:
    del params  # tol and reorder: scipy takes neither
    import scipy.sparse
    import scipy.sparse.linalg

    def callback(data: Any, indices: Any, indptr: Any, b: Any, **kwargs: Any) -> tuple[Any]:
        A = scipy.sparse.csr_matrix((data, indices, indptr), shape=(b.size, b.size))
        return (scipy.sparse.linalg.spsolve(A, b).astype(b.dtype),)

    result, _, _ = mlir.emit_python_callback(
        ctx,
        callback,
        None,
        [data, indices, indptr, b],
        ctx.avals_in,
        ctx.avals_out,
        has_side_effect=False,
        returns_token=False,
    )
    return result


mlir.register_lowering(spsolve_p, _spsolve_cpu_lowering, platform="cpu")

__all__ = ["lobpcg_standard", "spsolve"]
