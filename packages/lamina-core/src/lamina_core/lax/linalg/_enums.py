"""The algorithm-choice enums of `jax.lax.linalg`, with JAX's members and values:
`EigImplementation` (nonsymmetric eigensolver backends), `EighImplementation` (Hermitian
eigensolver algorithms) and `SvdAlgorithm` (singular value decomposition algorithms)."""

from __future__ import annotations

import enum


class EigImplementation(enum.Enum):
    """Which library computes a nonsymmetric eigendecomposition."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm computes a Hermitian eigendecomposition."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm computes a singular value decomposition."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm"]
