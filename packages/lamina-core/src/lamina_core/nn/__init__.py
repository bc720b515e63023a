"""`jax.nn` for Lamina: activations, softmax and friends, one_hot, standardize, attention,
and `initializers`.

Each function stages the equations JAX 0.10.2's does (nested `jit`s named as JAX names them,
`custom_jvp` rules where JAX has them), so jaxprs print alike.
"""

from lamina_core.nn import initializers
from lamina_core.nn._activations import (
    celu,
    elu,
    gelu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    swish,
    tanh,
)
from lamina_core.nn._attention import dot_product_attention
from lamina_core.nn._normalization import (
    glu,
    log_softmax,
    logmeanexp,
    logsumexp,
    one_hot,
    softmax,
    standardize,
)
from lamina_core.nn._scaled_dot_general import scaled_dot_general
from lamina_core.nn._scaled_matmul import (
    MATMUL_DIMENSION_NUMBERS as MATMUL_DIMENSION_NUMBERS,
)
from lamina_core.nn._scaled_matmul import get_scaled_dot_general_config, scaled_matmul
from lamina_core.nn._scaled_matmul import (
    scaled_matmul_wrapper_p as scaled_matmul_wrapper_p,
)

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "get_scaled_dot_general_config",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "scaled_dot_general",
    "scaled_matmul",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
