"""`checkify`: functional error checks, as `jax.experimental.checkify` (JAX 0.10.2).

`check` (`_check`) raises, or in a staged program stays an effect; `checkify` (`_interpreter`)
interprets a function's jaxpr so its checks, and the automatic NaN, division and index checks
it adds (`_rules_lax`), become an `Error` value (`_errors`) flowing through `jit`, `cond`,
`while`, `scan` and `remat` (`_rules_control_flow`) and through `custom_jvp`/`custom_vjp` and
`shard_map` (`_rules_custom`). Importing this package registers its rules; nothing below it
imports it (it is the top of lamina-core, loaded on first use).
"""

from lamina_core.callbacks import (
    check_p as check_p,
)
from lamina_core.callbacks import (
    functionalization_error as functionalization_error,
)
from lamina_core.checkify import _rules_control_flow as _rules_control_flow  # registers rules
from lamina_core.checkify import _rules_custom as _rules_custom  # registers rules
from lamina_core.checkify import _rules_lax as _rules_lax  # registers rules
from lamina_core.checkify._check import (
    check as check,
)
from lamina_core.checkify._check import (
    check_error as check_error,
)
from lamina_core.checkify._check import (
    debug_check as debug_check,
)
from lamina_core.checkify._errors import (
    BatchedError as BatchedError,
)
from lamina_core.checkify._errors import (
    DivisionByZeroError as DivisionByZeroError,
)
from lamina_core.checkify._errors import (
    Error as Error,
)
from lamina_core.checkify._errors import (
    ErrorCategory as ErrorCategory,
)
from lamina_core.checkify._errors import (
    ErrorEffect as ErrorEffect,
)
from lamina_core.checkify._errors import (
    FailedCheckError as FailedCheckError,
)
from lamina_core.checkify._errors import (
    JaxException as JaxException,
)
from lamina_core.checkify._errors import (
    JaxRuntimeError as JaxRuntimeError,
)
from lamina_core.checkify._errors import (
    NaNError as NaNError,
)
from lamina_core.checkify._errors import (
    OOBError as OOBError,
)
from lamina_core.checkify._errors import (
    init_error as init_error,
)
from lamina_core.checkify._interpreter import (
    CheckifyRule as CheckifyRule,
)
from lamina_core.checkify._interpreter import (
    checkify as checkify,
)
from lamina_core.checkify._interpreter import (
    checkify_rules as checkify_rules,
)
from lamina_core.checkify._interpreter import (
    user_checks as user_checks,
)

nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks
