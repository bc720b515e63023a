"""Jaxprs as data: the printed text read back (`parse`), with the array constants it elides
(`elided_constants`). `parse(str(j), elided_constants(j))` prints exactly as `j`."""

from lamina_core.ir import JaxprSyntaxError as JaxprSyntaxError
from lamina_core.ir import elided_constants as elided_constants
from lamina_core.ir import parse as parse

__all__ = ["JaxprSyntaxError", "elided_constants", "parse"]
