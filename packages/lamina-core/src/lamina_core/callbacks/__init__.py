"""Host callbacks and debugging: `pure_callback` and `io_callback` (`_callbacks`),
`jax.debug`'s `callback` and `print` (`_debugging`), and `breakpoint` (`_debugger`); calls of
compiled foreign functions, `ffi_call` (`_ffi`). Their lowerings are lamina-mlir's.
"""

from lamina_core.callbacks._callbacks import (
    FlatCallback as FlatCallback,
)
from lamina_core.callbacks._callbacks import (
    OrderedIOEffect as OrderedIOEffect,
)
from lamina_core.callbacks._callbacks import (
    call_checked as call_checked,
)
from lamina_core.callbacks._callbacks import (
    io_callback as io_callback,
)
from lamina_core.callbacks._callbacks import (
    io_callback_p as io_callback_p,
)
from lamina_core.callbacks._callbacks import (
    io_effect as io_effect,
)
from lamina_core.callbacks._callbacks import (
    ordered_io_effect as ordered_io_effect,
)
from lamina_core.callbacks._callbacks import (
    pure_callback as pure_callback,
)
from lamina_core.callbacks._callbacks import (
    pure_callback_p as pure_callback_p,
)
from lamina_core.callbacks._checks import (
    check_p as check_p,
)
from lamina_core.callbacks._checks import (
    functionalization_error as functionalization_error,
)
from lamina_core.callbacks._debugger import (
    breakpoint as breakpoint,
)
from lamina_core.callbacks._debugging import (
    DebugEffect as DebugEffect,
)
from lamina_core.callbacks._debugging import (
    OrderedDebugEffect as OrderedDebugEffect,
)
from lamina_core.callbacks._debugging import (
    debug_callback as debug_callback,
)
from lamina_core.callbacks._debugging import (
    debug_callback_p as debug_callback_p,
)
from lamina_core.callbacks._debugging import (
    debug_effect as debug_effect,
)
from lamina_core.callbacks._debugging import (
    debug_log as debug_log,
)
from lamina_core.callbacks._debugging import (
    debug_print as debug_print,
)
from lamina_core.callbacks._debugging import (
    debug_print_p as debug_print_p,
)
from lamina_core.callbacks._debugging import (
    ordered_debug_effect as ordered_debug_effect,
)
from lamina_core.callbacks._debugging import (
    print_callback as print_callback,
)
from lamina_core.callbacks._ffi import (
    FfiEffect as FfiEffect,
)
from lamina_core.callbacks._ffi import (
    FrozenDict as FrozenDict,
)
from lamina_core.callbacks._ffi import (
    LayoutOption as LayoutOption,
)
from lamina_core.callbacks._ffi import (
    attribute_values as attribute_values,
)
from lamina_core.callbacks._ffi import (
    ffi_call as ffi_call,
)
from lamina_core.callbacks._ffi import (
    ffi_call_p as ffi_call_p,
)
from lamina_core.callbacks._ffi import (
    ffi_effect as ffi_effect,
)
from lamina_core.callbacks._ffi import (
    hashable_attributes as hashable_attributes,
)
from lamina_core.callbacks._ffi import (
    minor_to_major as minor_to_major,
)
