"""Configuration: typed options (`config`, mirroring `jax.config`), scoped overrides, and the
context store a C++ dispatcher keys its cache on (`_dispatch_context`).

Nothing here knows arrays or traces; every layer above reads its options from here.
"""

from lamina_core.config import _dispatch_context
from lamina_core.config._config import (
    Option as Option,
)
from lamina_core.config._config import (
    Support as Support,
)
from lamina_core.config._config import (
    affects_tracing as affects_tracing,
)
from lamina_core.config._config import (
    config as config,
)
from lamina_core.config._config import (
    debug_infs as debug_infs,
)
from lamina_core.config._config import (
    debug_nans as debug_nans,
)
from lamina_core.config._config import (
    disable_jit as disable_jit,
)
from lamina_core.config._config import (
    disable_jit_scope as disable_jit_scope,
)
from lamina_core.config._config import (
    enable_checks as enable_checks,
)
from lamina_core.config._config import (
    enable_x64 as enable_x64,
)
from lamina_core.config._config import (
    log_compiles as log_compiles,
)
from lamina_core.config._config import (
    make_user_context as make_user_context,
)
from lamina_core.config._config import (
    no_tracing as no_tracing,
)
from lamina_core.config._config import (
    replaying_equations as replaying_equations,
)
from lamina_core.config._config import (
    use_simplified_jaxpr_constants as use_simplified_jaxpr_constants,
)
from lamina_core.config._kinds import (
    ExplicitX64Mode as ExplicitX64Mode,
)
from lamina_core.config._kinds import (
    LegacyPrngKeyState as LegacyPrngKeyState,
)
from lamina_core.config._kinds import (
    NumpyDtypePromotion as NumpyDtypePromotion,
)
from lamina_core.config._kinds import (
    RuntimeTracebackMode as RuntimeTracebackMode,
)
from lamina_core.config._kinds import (
    define_enum as define_enum,
)
from lamina_core.config._kinds import (
    define_enum_class as define_enum_class,
)
from lamina_core.config._kinds import (
    define_flag as define_flag,
)
from lamina_core.config._kinds import (
    define_flag_bool as define_flag_bool,
)
from lamina_core.config._kinds import (
    define_number as define_number,
)
from lamina_core.config._kinds import (
    define_object as define_object,
)
from lamina_core.config._kinds import (
    define_optional_enum as define_optional_enum,
)
from lamina_core.config._kinds import (
    define_string as define_string,
)

dispatch_context = _dispatch_context
"""Where a C++ dispatcher registers the store it keys its cache on (`register_context_store`)
and how core keeps it current (`changed_globally`, `local_scope`)."""
