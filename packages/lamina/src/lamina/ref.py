"""`jax.ref`: reading and writing Refs (mutable arrays, seed 004) by function."""

from lamina_refs import AbstractRef, Ref, empty_ref, free_ref, freeze, new_ref
from lamina_refs import ref_addupdate as addupdate
from lamina_refs import ref_get as get
from lamina_refs import ref_set as set
from lamina_refs import ref_swap as swap

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
