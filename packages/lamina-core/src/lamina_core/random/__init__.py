"""`lamina_core.random`: PRNG keys as an extended dtype, the PRNG primitives and samplers.

Keys are arrays of dtype `key<fry>` (threefry2x32; `key<rbg>` and `key<urbg>` for the `rbg`
and `unsafe_rbg` implementations), made by `key(seed)` and consumed by
`split`, `fold_in`, `bits` and the samplers; there is no global state, so the same key always
gives the same numbers. Legacy raw keys (`PRNGKey`, `uint32[2]`) work everywhere a key does.
Values are JAX 0.10.2's bit for bit (threefry with either `jax_threefry_partitionable`).

Modules: `_threefry` (the hash and key operations in NumPy, the reference), `_primitives`
(the primitives and their core rules; the key dtype), `_keys` (making and deriving keys),
`_sharded` (samplers' `out_sharding`), `_samplers`, `_samplers_more`, `_samplers_discrete`,
`_samplers_transformed`, `_samplers_gamma`, `_samplers_poisson`, `_samplers_binomial`,
`_samplers_linalg` (the distributions),
`_threefry_original` (threefry's non-partitionable layout), `_rbg` (the rbg implementations'
key operations), `_extend` (what `jax.extend.random` adds: seeding with a given
implementation, the raw threefry hash, user-defined implementations). Lowering rules are
lamina-mlir's `_rules_random`.
"""

from lamina_core.random._extend import (
    define_prng_impl as define_prng_impl,
)
from lamina_core.random._extend import (
    random_seed as random_seed,
)
from lamina_core.random._extend import (
    seed_with_impl as seed_with_impl,
)
from lamina_core.random._extend import (
    threefry_2x32 as threefry_2x32,
)
from lamina_core.random._extend import (
    user_key_ops as user_key_ops,
)
from lamina_core.random._keys import (
    PRNGKey,
    bits,
    clone,
    default_prng_impl,
    fold_in,
    is_key,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from lamina_core.random._primitives import (
    PRNGImpl,
    key_impl_of,
    random_bits_p,
    random_clone_p,
    random_fold_in_p,
    random_seed_p,
    random_split_p,
    random_unwrap_p,
    random_wrap_p,
    threefry2x32_p,
    threefry_prng_impl,
)
from lamina_core.random._primitives import (
    rbg_prng_impl as rbg_prng_impl,
)
from lamina_core.random._primitives import (
    threefry_partitionable as threefry_partitionable,
)
from lamina_core.random._primitives import (
    unsafe_rbg_prng_impl as unsafe_rbg_prng_impl,
)
from lamina_core.random._samplers import bernoulli, normal, uniform
from lamina_core.random._samplers_binomial import binomial, multinomial
from lamina_core.random._samplers_discrete import categorical, choice, permutation
from lamina_core.random._samplers_gamma import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    random_gamma_p,
    t,
)
from lamina_core.random._samplers_gamma import (
    gamma_impl as gamma_impl,
)
from lamina_core.random._samplers_linalg import multivariate_normal, orthogonal
from lamina_core.random._samplers_more import (
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    randint,
    truncated_normal,
)
from lamina_core.random._samplers_poisson import poisson
from lamina_core.random._samplers_transformed import (
    double_sided_maxwell,
    geometric,
    lognormal,
    maxwell,
    pareto,
    rademacher,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)
from lamina_core.random._threefry import (
    KEY_SCHEDULE_PARITY as KEY_SCHEDULE_PARITY,
)
from lamina_core.random._threefry import (
    ROTATIONS as ROTATIONS,
)

__all__ = [
    "PRNGImpl",
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "default_prng_impl",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "is_key",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "key_impl_of",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "random_bits_p",
    "random_clone_p",
    "random_fold_in_p",
    "random_gamma_p",
    "random_seed_p",
    "random_split_p",
    "random_unwrap_p",
    "random_wrap_p",
    "rayleigh",
    "split",
    "t",
    "threefry2x32_p",
    "threefry_prng_impl",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]

# Not JAX's API: the key operations of the rbg and non-partitionable threefry implementations,
# which lamina-mlir lowers by tracing them.
from lamina_core.random import _rbg, _threefry_original

rbg = _rbg
threefry_original = _threefry_original
