"""`lamina.aot`: save compiled functions and load them in another process.

JAX offers this only as `jax.experimental.serialize_executable`, without closed-over constants
and with pickled tree structures; Lamina's artifacts are self-contained and hold no pickle:

    compiled = lamina.jit(f).lower(x).compile()
    lamina.aot.save(compiled, "f.lamina")       # or: data = compiled.serialize()
    g = lamina.aot.load("f.lamina")             # or: g = lamina.aot.deserialize(data)
    g(x)                                        # no tracing, lowering or compiling
"""

from lamina_runtime import (
    ArtifactError,
    ArtifactInfo,
    IncompatibleArtifactError,
    TreeCodecError,
    describe,
    deserialize,
    load,
    save,
    serialize,
)

__all__ = [
    "ArtifactError",
    "ArtifactInfo",
    "IncompatibleArtifactError",
    "TreeCodecError",
    "describe",
    "deserialize",
    "load",
    "save",
    "serialize",
]
