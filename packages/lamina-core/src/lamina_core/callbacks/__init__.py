"""Host callbacks and debugging: `pure_callback` and `io_callback` (`_callbacks`),
`jax.debug`'s `callback` and `print` (`_debugging`), and `breakpoint` (`_debugger`).
Their lowerings are the runtime's (they need the host).
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
