"""Sparse arrays (`jax.experimental.sparse`): the formats, their primitives and rules.

BCOO (`_bcoo*`: the layout, its conversion, contraction, deduplication primitives and the
`BCOO` class), the base class and errors (`_base`), helpers (`_util`), `todense`/`empty`/`eye`
(`_api`). Each primitive's lowering is registered by the umbrella package, which owns
lamina-mlir's tables; lamina-core knows only the primitives' Python implementations.
"""

from lamina_core.sparse import _bcoo_methods as _bcoo_methods  # installs BCOO's operators
from lamina_core.sparse import _transform_bcsr as _transform_bcsr  # registers the rules
from lamina_core.sparse import _transform_calls as _transform_calls  # registers the rules
from lamina_core.sparse._ad import grad as grad
from lamina_core.sparse._ad import jacfwd as jacfwd
from lamina_core.sparse._ad import jacobian as jacobian
from lamina_core.sparse._ad import jacrev as jacrev
from lamina_core.sparse._ad import value_and_grad as value_and_grad
from lamina_core.sparse._api import empty as empty
from lamina_core.sparse._api import eye as eye
from lamina_core.sparse._api import todense as todense
from lamina_core.sparse._api import todense_impl as todense_impl
from lamina_core.sparse._api import todense_p as todense_p
from lamina_core.sparse._base import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from lamina_core.sparse._base import JAXSparse as JAXSparse
from lamina_core.sparse._base import SparseEfficiencyError as SparseEfficiencyError
from lamina_core.sparse._base import SparseEfficiencyWarning as SparseEfficiencyWarning
from lamina_core.sparse._bcoo import BCOO as BCOO
from lamina_core.sparse._bcoo import bcoo_dot_general as bcoo_dot_general
from lamina_core.sparse._bcoo import bcoo_eliminate_zeros as bcoo_eliminate_zeros
from lamina_core.sparse._bcoo import bcoo_extract as bcoo_extract
from lamina_core.sparse._bcoo import bcoo_fromdense as bcoo_fromdense
from lamina_core.sparse._bcoo import bcoo_set_nse as bcoo_set_nse
from lamina_core.sparse._bcoo import bcoo_sort_indices as bcoo_sort_indices
from lamina_core.sparse._bcoo import bcoo_sum_duplicates as bcoo_sum_duplicates
from lamina_core.sparse._bcoo import bcoo_todense as bcoo_todense
from lamina_core.sparse._bcoo import bcoo_transpose as bcoo_transpose
from lamina_core.sparse._bcoo_conv import bcoo_conv_general_dilated as bcoo_conv_general_dilated
from lamina_core.sparse._bcoo_convert import bcoo_extract_buffers as bcoo_extract_buffers
from lamina_core.sparse._bcoo_convert import bcoo_extract_impl as bcoo_extract_impl
from lamina_core.sparse._bcoo_convert import bcoo_extract_p as bcoo_extract_p
from lamina_core.sparse._bcoo_convert import bcoo_fromdense_buffers as bcoo_fromdense_buffers
from lamina_core.sparse._bcoo_convert import bcoo_fromdense_impl as bcoo_fromdense_impl
from lamina_core.sparse._bcoo_convert import bcoo_fromdense_p as bcoo_fromdense_p
from lamina_core.sparse._bcoo_convert import bcoo_todense_buffers as bcoo_todense_buffers
from lamina_core.sparse._bcoo_convert import bcoo_todense_impl as bcoo_todense_impl
from lamina_core.sparse._bcoo_convert import bcoo_todense_p as bcoo_todense_p
from lamina_core.sparse._bcoo_dot import bcoo_dot_general_buffers as bcoo_dot_general_buffers
from lamina_core.sparse._bcoo_dot import bcoo_dot_general_impl as bcoo_dot_general_impl
from lamina_core.sparse._bcoo_dot import bcoo_dot_general_p as bcoo_dot_general_p
from lamina_core.sparse._bcoo_dot import bcoo_transpose_buffers as bcoo_transpose_buffers
from lamina_core.sparse._bcoo_dot import bcoo_transpose_impl as bcoo_transpose_impl
from lamina_core.sparse._bcoo_dot import bcoo_transpose_p as bcoo_transpose_p
from lamina_core.sparse._bcoo_dups import bcoo_sort_indices_impl as bcoo_sort_indices_impl
from lamina_core.sparse._bcoo_dups import bcoo_sort_indices_p as bcoo_sort_indices_p
from lamina_core.sparse._bcoo_dups import bcoo_sum_duplicates_impl as bcoo_sum_duplicates_impl
from lamina_core.sparse._bcoo_dups import bcoo_sum_duplicates_p as bcoo_sum_duplicates_p
from lamina_core.sparse._bcoo_gather import bcoo_gather as bcoo_gather
from lamina_core.sparse._bcoo_layout import BCOOProperties as BCOOProperties
from lamina_core.sparse._bcoo_layout_update import bcoo_update_layout as bcoo_update_layout
from lamina_core.sparse._bcoo_ops import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from lamina_core.sparse._bcoo_ops import bcoo_multiply_dense as bcoo_multiply_dense
from lamina_core.sparse._bcoo_ops import bcoo_multiply_sparse as bcoo_multiply_sparse
from lamina_core.sparse._bcoo_ops import bcoo_reduce_sum as bcoo_reduce_sum
from lamina_core.sparse._bcoo_sampled import bcoo_dot_general_sampled as bcoo_dot_general_sampled
from lamina_core.sparse._bcoo_sampled import (
    bcoo_dot_general_sampled_impl as bcoo_dot_general_sampled_impl,
)
from lamina_core.sparse._bcoo_sampled import (
    bcoo_dot_general_sampled_p as bcoo_dot_general_sampled_p,
)
from lamina_core.sparse._bcoo_shape import bcoo_concatenate as bcoo_concatenate
from lamina_core.sparse._bcoo_shape import bcoo_dynamic_slice as bcoo_dynamic_slice
from lamina_core.sparse._bcoo_shape import bcoo_reshape as bcoo_reshape
from lamina_core.sparse._bcoo_shape import bcoo_rev as bcoo_rev
from lamina_core.sparse._bcoo_shape import bcoo_slice as bcoo_slice
from lamina_core.sparse._bcoo_shape import bcoo_squeeze as bcoo_squeeze
from lamina_core.sparse._bcoo_spdot import bcoo_spdot_general_impl as bcoo_spdot_general_impl
from lamina_core.sparse._bcoo_spdot import bcoo_spdot_general_p as bcoo_spdot_general_p
from lamina_core.sparse._bcsr import BCSR as BCSR
from lamina_core.sparse._bcsr import bcsr_broadcast_in_dim as bcsr_broadcast_in_dim
from lamina_core.sparse._bcsr import bcsr_concatenate as bcsr_concatenate
from lamina_core.sparse._bcsr import bcsr_dot_general as bcsr_dot_general
from lamina_core.sparse._bcsr import bcsr_dot_general_impl as bcsr_dot_general_impl
from lamina_core.sparse._bcsr import bcsr_dot_general_p as bcsr_dot_general_p
from lamina_core.sparse._bcsr import bcsr_eliminate_zeros as bcsr_eliminate_zeros
from lamina_core.sparse._bcsr import bcsr_fromdense as bcsr_fromdense
from lamina_core.sparse._bcsr import bcsr_sum_duplicates as bcsr_sum_duplicates
from lamina_core.sparse._bcsr import bcsr_todense as bcsr_todense
from lamina_core.sparse._bcsr_convert import BCSRProperties as BCSRProperties
from lamina_core.sparse._bcsr_convert import bcsr_extract as bcsr_extract
from lamina_core.sparse._bcsr_convert import bcsr_extract_impl as bcsr_extract_impl
from lamina_core.sparse._bcsr_convert import bcsr_extract_p as bcsr_extract_p
from lamina_core.sparse._bcsr_convert import bcsr_fromdense_impl as bcsr_fromdense_impl
from lamina_core.sparse._bcsr_convert import bcsr_fromdense_p as bcsr_fromdense_p
from lamina_core.sparse._bcsr_convert import bcsr_todense_impl as bcsr_todense_impl
from lamina_core.sparse._bcsr_convert import bcsr_todense_p as bcsr_todense_p
from lamina_core.sparse._coo import COO as COO
from lamina_core.sparse._coo import COOInfo as COOInfo
from lamina_core.sparse._coo import coo_fromdense as coo_fromdense
from lamina_core.sparse._coo import coo_fromdense_impl as coo_fromdense_impl
from lamina_core.sparse._coo import coo_fromdense_p as coo_fromdense_p
from lamina_core.sparse._coo import coo_matmat as coo_matmat
from lamina_core.sparse._coo import coo_matmat_impl as coo_matmat_impl
from lamina_core.sparse._coo import coo_matmat_p as coo_matmat_p
from lamina_core.sparse._coo import coo_matvec as coo_matvec
from lamina_core.sparse._coo import coo_matvec_impl as coo_matvec_impl
from lamina_core.sparse._coo import coo_matvec_p as coo_matvec_p
from lamina_core.sparse._coo import coo_todense as coo_todense
from lamina_core.sparse._coo import coo_todense_impl as coo_todense_impl
from lamina_core.sparse._coo import coo_todense_p as coo_todense_p
from lamina_core.sparse._csr import CSC as CSC
from lamina_core.sparse._csr import CSR as CSR
from lamina_core.sparse._csr import csr_fromdense as csr_fromdense
from lamina_core.sparse._csr import csr_fromdense_impl as csr_fromdense_impl
from lamina_core.sparse._csr import csr_fromdense_p as csr_fromdense_p
from lamina_core.sparse._csr import csr_matmat as csr_matmat
from lamina_core.sparse._csr import csr_matmat_impl as csr_matmat_impl
from lamina_core.sparse._csr import csr_matmat_p as csr_matmat_p
from lamina_core.sparse._csr import csr_matvec as csr_matvec
from lamina_core.sparse._csr import csr_matvec_impl as csr_matvec_impl
from lamina_core.sparse._csr import csr_matvec_p as csr_matvec_p
from lamina_core.sparse._csr import csr_todense as csr_todense
from lamina_core.sparse._csr import csr_todense_impl as csr_todense_impl
from lamina_core.sparse._csr import csr_todense_p as csr_todense_p
from lamina_core.sparse._linalg import spsolve as spsolve
from lamina_core.sparse._linalg import spsolve_p as spsolve_p
from lamina_core.sparse._lobpcg import lobpcg_standard as lobpcg_standard
from lamina_core.sparse._random import random_bcoo as random_bcoo
from lamina_core.sparse._transform import SparsifyEnv as SparsifyEnv
from lamina_core.sparse._transform import SparsifyValue as SparsifyValue
from lamina_core.sparse._transform import sparse_rules_bcoo as sparse_rules_bcoo
from lamina_core.sparse._transform import sparse_rules_bcsr as sparse_rules_bcsr
from lamina_core.sparse._transform_tracer import SparseTrace as SparseTrace
from lamina_core.sparse._transform_tracer import SparseTracer as SparseTracer
from lamina_core.sparse._transform_tracer import sparsify as sparsify
from lamina_core.sparse._util import Shape as Shape
from lamina_core.sparse._util import SparseInfo as SparseInfo
from lamina_core.sparse._util import broadcasting_vmap as broadcasting_vmap
from lamina_core.sparse._util import nfold_vmap as nfold_vmap
