"""`lamina.jaxpr_io`: the public module over lamina-core's jaxpr parser."""

from __future__ import annotations

import numpy as np

import lamina
import lamina.jaxpr_io as jaxpr_io
import lamina.numpy as jnp
from lamina_core.ir import JaxprSyntaxError, elided_constants, parse


def test_the_public_module_is_core_s_parser() -> None:
    assert jaxpr_io.parse is parse
    assert jaxpr_io.elided_constants is elided_constants
    assert jaxpr_io.JaxprSyntaxError is JaxprSyntaxError


def test_a_program_printed_by_lamina_reads_back() -> None:
    closed = lamina.make_jaxpr(lambda x: jnp.sin(x) * 2.0 + np.arange(4.0, dtype=np.float32))(
        np.ones(4, np.float32)
    )
    text = str(closed)
    assert str(jaxpr_io.parse(text, jaxpr_io.elided_constants(closed))) == text
