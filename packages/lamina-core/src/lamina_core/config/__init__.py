"""Configuration: typed options (`config`, mirroring `jax.config`), scoped overrides, and the
context store a C++ dispatcher keys its cache on (`_dispatch_context`).

Nothing here knows arrays or traces; every layer above reads its options from here.
"""
