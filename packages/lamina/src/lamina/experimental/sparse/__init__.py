"""`jax.experimental.sparse`: sparse arrays (BCOO, and the formats of `bcsr`, `coo`, `csr`), their
primitives, `sparsify` and sparse-aware autodiff.

Importing it registers the lowering of every sparse primitive (its jnp impl, traced in place,
as JAX lowers them on CPU). `import lamina` does not import it.
"""

from lamina.experimental.sparse import ad as ad
from lamina.experimental.sparse import api as api
from lamina.experimental.sparse import bcoo as bcoo
from lamina.experimental.sparse import bcsr as bcsr
from lamina.experimental.sparse import coo as coo
from lamina.experimental.sparse import csr as csr
from lamina.experimental.sparse import linalg as linalg
from lamina.experimental.sparse import random as random
from lamina.experimental.sparse import transform as transform
from lamina.experimental.sparse import util as util
from lamina.experimental.sparse.ad import (
    grad as grad,
)
from lamina.experimental.sparse.ad import (
    jacfwd as jacfwd,
)
from lamina.experimental.sparse.ad import (
    jacobian as jacobian,
)
from lamina.experimental.sparse.ad import (
    jacrev as jacrev,
)
from lamina.experimental.sparse.ad import (
    value_and_grad as value_and_grad,
)
from lamina.experimental.sparse.api import (
    empty as empty,
)
from lamina.experimental.sparse.api import (
    eye as eye,
)
from lamina.experimental.sparse.api import (
    todense as todense,
)
from lamina.experimental.sparse.api import (
    todense_p as todense_p,
)
from lamina.experimental.sparse.bcoo import (
    BCOO as BCOO,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_dot_general as bcoo_dot_general,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_dot_general_p as bcoo_dot_general_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_dot_general_sampled as bcoo_dot_general_sampled,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_dot_general_sampled_p as bcoo_dot_general_sampled_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_extract as bcoo_extract,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_extract_p as bcoo_extract_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_fromdense as bcoo_fromdense,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_fromdense_p as bcoo_fromdense_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_sort_indices as bcoo_sort_indices,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_sort_indices_p as bcoo_sort_indices_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_spdot_general_p as bcoo_spdot_general_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_sum_duplicates as bcoo_sum_duplicates,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_sum_duplicates_p as bcoo_sum_duplicates_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_todense as bcoo_todense,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_todense_p as bcoo_todense_p,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_transpose as bcoo_transpose,
)
from lamina.experimental.sparse.bcoo import (
    bcoo_transpose_p as bcoo_transpose_p,
)
from lamina.experimental.sparse.bcsr import (
    BCSR as BCSR,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_broadcast_in_dim as bcsr_broadcast_in_dim,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_concatenate as bcsr_concatenate,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_dot_general as bcsr_dot_general,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_dot_general_p as bcsr_dot_general_p,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_extract as bcsr_extract,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_extract_p as bcsr_extract_p,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_fromdense as bcsr_fromdense,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_fromdense_p as bcsr_fromdense_p,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_sum_duplicates as bcsr_sum_duplicates,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_todense as bcsr_todense,
)
from lamina.experimental.sparse.bcsr import (
    bcsr_todense_p as bcsr_todense_p,
)
from lamina.experimental.sparse.coo import (
    COO as COO,
)
from lamina.experimental.sparse.coo import (
    coo_fromdense as coo_fromdense,
)
from lamina.experimental.sparse.coo import (
    coo_fromdense_p as coo_fromdense_p,
)
from lamina.experimental.sparse.coo import (
    coo_matmat as coo_matmat,
)
from lamina.experimental.sparse.coo import (
    coo_matmat_p as coo_matmat_p,
)
from lamina.experimental.sparse.coo import (
    coo_matvec as coo_matvec,
)
from lamina.experimental.sparse.coo import (
    coo_matvec_p as coo_matvec_p,
)
from lamina.experimental.sparse.coo import (
    coo_todense as coo_todense,
)
from lamina.experimental.sparse.coo import (
    coo_todense_p as coo_todense_p,
)
from lamina.experimental.sparse.csr import (
    CSC as CSC,
)
from lamina.experimental.sparse.csr import (
    CSR as CSR,
)
from lamina.experimental.sparse.csr import (
    csr_fromdense as csr_fromdense,
)
from lamina.experimental.sparse.csr import (
    csr_fromdense_p as csr_fromdense_p,
)
from lamina.experimental.sparse.csr import (
    csr_matmat as csr_matmat,
)
from lamina.experimental.sparse.csr import (
    csr_matmat_p as csr_matmat_p,
)
from lamina.experimental.sparse.csr import (
    csr_matvec as csr_matvec,
)
from lamina.experimental.sparse.csr import (
    csr_matvec_p as csr_matvec_p,
)
from lamina.experimental.sparse.csr import (
    csr_todense as csr_todense,
)
from lamina.experimental.sparse.csr import (
    csr_todense_p as csr_todense_p,
)
from lamina.experimental.sparse.random import (
    random_bcoo as random_bcoo,
)
from lamina.experimental.sparse.transform import (
    SparseTracer as SparseTracer,
)
from lamina.experimental.sparse.transform import (
    sparsify as sparsify,
)
from lamina.experimental.sparse.util import (
    CuSparseEfficiencyWarning as CuSparseEfficiencyWarning,
)
from lamina.experimental.sparse.util import (
    SparseEfficiencyError as SparseEfficiencyError,
)
from lamina.experimental.sparse.util import (
    SparseEfficiencyWarning as SparseEfficiencyWarning,
)
from lamina_core.sparse import (
    JAXSparse as JAXSparse,
)
from lamina_core.sparse import (
    bcoo_broadcast_in_dim as bcoo_broadcast_in_dim,
)
from lamina_core.sparse import (
    bcoo_concatenate as bcoo_concatenate,
)
from lamina_core.sparse import (
    bcoo_conv_general_dilated as bcoo_conv_general_dilated,
)
from lamina_core.sparse import (
    bcoo_dynamic_slice as bcoo_dynamic_slice,
)
from lamina_core.sparse import (
    bcoo_gather as bcoo_gather,
)
from lamina_core.sparse import (
    bcoo_multiply_dense as bcoo_multiply_dense,
)
from lamina_core.sparse import (
    bcoo_multiply_sparse as bcoo_multiply_sparse,
)
from lamina_core.sparse import (
    bcoo_reduce_sum as bcoo_reduce_sum,
)
from lamina_core.sparse import (
    bcoo_reshape as bcoo_reshape,
)
from lamina_core.sparse import (
    bcoo_rev as bcoo_rev,
)
from lamina_core.sparse import (
    bcoo_slice as bcoo_slice,
)
from lamina_core.sparse import (
    bcoo_squeeze as bcoo_squeeze,
)
from lamina_core.sparse import (
    bcoo_update_layout as bcoo_update_layout,
)
