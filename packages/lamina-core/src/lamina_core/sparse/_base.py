"""`JAXSparse`, the abstract base of the sparse array classes, and the sparse errors and warnings.

A sparse object is a pytree of dense buffers (`data` and its index arrays) plus a static `shape`;
subclasses say how the buffers encode the matrix. This module knows no format and no primitive.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any, Self

import numpy as np

from lamina_core.lax import canonical_shape
from lamina_core.trace import Tracer


class SparseEfficiencyError(ValueError):
    """An operation would need a dense intermediate, or data-dependent sizes, to run sparsely."""


class SparseEfficiencyWarning(UserWarning):
    """An operation runs, but densely or otherwise inefficiently."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """A cuSPARSE kernel does not support the operands and a fallback is used."""


class JAXSparse(abc.ABC):
    """Base class of the high-level sparse array objects (`BCOO`, `BCSR`, `COO`, `CSR`, `CSC`)."""

    data: Any
    """The stored values."""
    shape: tuple[int, ...]
    """The shape of the dense matrix the object stands for."""

    __hash__ = None  # type: ignore[assignment]  # unhashable, as JAX's

    def __init__(self, args: tuple[Any, ...], *, shape: Sequence[int]) -> None:
        del args  # the subclass stores its own buffers
        self.shape = canonical_shape(shape)

    @property
    @abc.abstractmethod
    def dtype(self) -> np.dtype[Any]:
        """The element type of the stored values."""

    @property
    @abc.abstractmethod
    def nse(self) -> int:
        """The number of stored elements (specified, possibly padded or duplicated)."""

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        name = type(self).__name__
        try:
            nse = self.nse
            dtype = self.dtype
            shape = list(self.shape)
        except Exception:  # as JAX's: a malformed object still prints
            text = f"{name}(<invalid>)"
        else:
            text = f"{name}({dtype}{shape}, {nse=})"
        if isinstance(self.data, Tracer):
            text = f"{self.data.jax_name}[{text}]"
        return text

    @abc.abstractmethod
    def tree_flatten(self) -> tuple[tuple[Any, ...], Any]:
        """The buffers (children) and the static data of the pytree."""

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data: Any, children: Sequence[Any]) -> Self:
        """The object back from `tree_flatten`'s output."""

    @abc.abstractmethod
    def transpose(self, axes: Sequence[int] | None = None) -> JAXSparse:
        """The transposed sparse object."""

    @abc.abstractmethod
    def todense(self) -> Any:
        """The dense array this object stands for."""

    @property
    def T(self) -> JAXSparse:
        return self.transpose()

    def block_until_ready(self) -> Self:
        for arg in self.tree_flatten()[0]:
            arg.block_until_ready()
        return self

    # Not abstract, as JAX's: not every format implements them.
    def sum(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.sum")

    def __neg__(self) -> Any:
        raise NotImplementedError(f"{type(self)}.__neg__")

    def __pos__(self) -> Any:
        raise NotImplementedError(f"{type(self)}.__pos__")

    def __matmul__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__matmul__")

    def __rmatmul__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__rmatmul__")

    def __mul__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__mul__")

    def __rmul__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__rmul__")

    def __add__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__add__")

    def __radd__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__radd__")

    def __sub__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__sub__")

    def __rsub__(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__rsub__")

    def __getitem__(self, item: Any) -> Any:
        raise NotImplementedError(f"{type(self)}.__getitem__")
