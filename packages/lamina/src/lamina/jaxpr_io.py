"""Jaxprs as data: the printed text read back (`parse`), with the array constants it elides
(`elided_constants`), and a lossless JSON form (`to_json`, `from_json`).

`parse(str(j), elided_constants(j))` and `from_json(to_json(j))` print exactly as `j`;
`jaxpr_as_fun` makes a program read back a function to jit, differentiate and batch. Types
printed by their own `str` (hi types) read back through `register_type_reader`; `parse_type`
reads one type."""

from lamina_core.ir import JaxprJSONError as JaxprJSONError
from lamina_core.ir import JaxprSyntaxError as JaxprSyntaxError
from lamina_core.ir import elided_constants as elided_constants
from lamina_core.ir import from_json as from_json
from lamina_core.ir import parse as parse
from lamina_core.ir import parse_type as parse_type
from lamina_core.ir import register_type_reader as register_type_reader
from lamina_core.ir import to_json as to_json
from lamina_core.trace import jaxpr_as_fun as jaxpr_as_fun

__all__ = [
    "JaxprJSONError",
    "JaxprSyntaxError",
    "elided_constants",
    "from_json",
    "jaxpr_as_fun",
    "parse",
    "parse_type",
    "register_type_reader",
    "to_json",
]
