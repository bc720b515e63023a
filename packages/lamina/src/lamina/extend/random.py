"""`jax.extend.random`: PRNG implementations as objects, seeding keys with one, the threefry
hash and its primitive, and defining new implementations (see `lamina_core.random`)."""

from lamina_core.random import (
    define_prng_impl,
    random_seed,
    rbg_prng_impl,
    seed_with_impl,
    threefry2x32_p,
    threefry_2x32,
    threefry_prng_impl,
    unsafe_rbg_prng_impl,
)

__all__ = [
    "define_prng_impl",
    "random_seed",
    "rbg_prng_impl",
    "seed_with_impl",
    "threefry2x32_p",
    "threefry_2x32",
    "threefry_prng_impl",
    "unsafe_rbg_prng_impl",
]
