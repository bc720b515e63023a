"""The fuzz table: malformed and edge-case calls, generated systematically.

Each `Case` is a snippet run with `jax`, `jnp`, `lax`, `np` bound (see `child.py`); its value is
its last expression. `blame` lists the words an error message should contain (a parameter
name, the offending value, shape or dtype): an error naming none of them, and differing from
JAX's, is reported as unhelpful.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    area: str
    code: str
    blame: tuple[str, ...] = ()
    jax: bool = True
    """Run under JAX too and compare; false for Lamina-only surfaces (AOT, cache)."""
    isolate: bool = False
    """A child of its own: the call may abort the process or changes process state."""
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    deliberate: str | None = None
    """Why Lamina answering where JAX raises is intended (documented)."""
    expect: str | None = None
    """Without JAX: a NumPy expression of the right answer."""
    may_raise: bool = True
    """Without JAX and with `expect`: a clean error is acceptable too."""


KNOWN_ISSUES: Mapping[str, str] = MappingProxyType({})
"""Cases whose finding is recorded but not fixed yet: name -> reproducer and why. They are
left out of the fast subset and count as `known`, not as failures. A known case that comes
out `ok` is listed by the command line: remove it from here, and pin the fix in
packages/lamina/tests/test_fuzz_regressions.py (where the first run's findings are)."""


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- inputs -------------------------------------------------------------------------------------

F = "np.float32"
ARR = "np.arange(6, dtype=np.float32).reshape(2, 3)"

BAD_ARRAYS: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (expression, blame words)
    "str": ("'abc'", ("abc", "str")),
    "none": ("None", ("none",)),
    "object": ("object()", ("object",)),
    "dict": ("{'a': 1}", ("dict",)),
    "ragged": ("[[1.0, 2.0], [3.0]]", ("inhomogeneous", "ragged", "shape", "sequence", "list")),
    "bigint": ("2**70", ("1180591620717411303424", "overflow", "too large", "int64")),
    "strarr": ("np.array(['a', 'b'])", ("<u1", "str", "dtype")),
}
EDGE_ARRAYS: dict[str, str] = {
    "nan": "np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5], np.float32)",
    "empty": "np.zeros((0, 3), np.float32)",
    "int": "np.arange(-3, 3, dtype=np.int32)",
    "bool": "np.array([True, False, True])",
    "complex": "np.array([1 + 2j, -1j, 0j], np.complex64)",
    "scalar": "np.float32(0.5)",
    "pyint": "3",
    "f64": "np.linspace(-2.0, 2.0, 5)",
    "u8": "np.array([0, 1, 255], np.uint8)",
    "i64max": "np.array([np.iinfo(np.int32).max, np.iinfo(np.int32).min], np.int32)",
    "list": "[0.25, 0.5]",
    "tiny": "np.array([1e-45, -1e-45, 3.4e38], np.float32)",
}

JNP_UNARY = _words("""
abs absolute arccos arccosh arcsin arcsinh arctan arctanh cbrt ceil conj cos cosh
deg2rad degrees exp exp2 expm1 fabs floor imag isfinite isinf isnan isneginf isposinf log log10
log1p log2 negative positive rad2deg radians real reciprocal rint sign signbit sin sinh sqrt
square tan tanh trunc invert logical_not angle around""")
JNP_BINARY = _words("""
add subtract multiply divide true_divide floor_divide power float_power maximum
minimum arctan2 hypot copysign nextafter fmod mod remainder logaddexp logaddexp2 heaviside equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_xor bitwise_and
bitwise_or bitwise_xor left_shift right_shift divmod""")
JNP_REDUCE = _words("""
sum prod max min mean std var argmax argmin all any amax amin cumsum cumprod sort
argsort flip""")
LAX_UNARY = _words("""
abs acos acosh asin asinh atan atanh cbrt ceil cos cosh digamma erf erf_inv erfc
exp exp2 expm1 floor is_finite lgamma log log1p logistic neg reciprocal round rsqrt sign sin
sinh sqrt square tan tanh bitwise_not clz population_count imag real conj""")
LAX_BINARY = _words("""
add sub mul div rem pow max min atan2 nextafter eq ne lt le gt ge bitwise_and
bitwise_or bitwise_xor shift_left shift_right_arithmetic shift_right_logical complex""")

BAD_AXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "5": ("5", ("axis", "5")),
    "-5": ("-5", ("axis", "-5")),
    "str": ("'a'", ("axis", "'a'", "str")),
    "float": ("1.5", ("axis", "1.5", "float")),
    "dup": ("(0, 0)", ("axis", "duplicate", "repeated")),
    "list": ("[0]", ("axis", "list")),
}

BAD_SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (shape, blame); the HUGE ones make XLA abort (JAX too)
    "neg": ("-1", ("-1", "negative", "shape")),
    "neg2": ("(2, -1)", ("-1", "negative", "shape")),
    "str": ("'a'", ("'a'", "shape", "str")),
    "float": ("2.5", ("2.5", "shape", "float")),
    "none": ("None", ("none", "shape")),
    "nested": ("((2,), 3)", ("shape", "tuple")),
    "huge62": ("(1 << 62,)", ("4611686018427387904", "too large", "overflow", "size")),
    "huge32x2": ("(1 << 32, 1 << 32)", ("4294967296", "too large", "overflow", "size")),
    "huge61": ("(1 << 61,)", ("2305843009213693952", "too large", "overflow", "size")),
    "zero": ("(0, 3)", ("shape",)),
    "npint": ("(np.int64(2), np.int32(3))", ("shape",)),
}
HUGE = {"huge62", "huge32x2", "huge61"}
BAD_DTYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "foo": ("'foo'", ("foo", "dtype")),
    "object": ("object", ("object", "dtype")),
    "str": ("np.str_", ("str", "dtype", "<u")),
    "int": ("5", ("5", "dtype")),
    "f64": ("np.float64", ("float64", "dtype")),
    "i64": ("'int64'", ("int64", "dtype")),
    "bf16": ("jnp.bfloat16", ("bfloat16", "dtype")),
}


# --- generators ---------------------------------------------------------------------------------


def _jnp_elementwise() -> Iterator[Case]:
    for fn in JNP_UNARY:
        for k, (expr, blame) in BAD_ARRAYS.items():
            yield Case(f"jnp.{fn}[{k}]", "jnp", f"jnp.{fn}({expr})", (*blame, fn))
        for k, expr in EDGE_ARRAYS.items():
            blame = (fn, "dtype", "list") if k == "list" else (fn, "dtype")
            yield Case(f"jnp.{fn}[{k}]", "jnp", f"jnp.{fn}({expr})", blame)
    other = "np.ones((4,), np.float32)"
    for fn in JNP_BINARY:
        pairs = {
            "shape": (ARR, other, ("(2, 3)", "(4,)", "shape", "broadcast")),
            "str": (ARR, "'abc'", ("abc", "str")),
            "none": ("None", ARR, ("none",)),
            "object": (ARR, "object()", ("object",)),
            "bigint": ("np.arange(3, dtype=np.int32)", "2**70", ("1180591620717411303424",)),
            "u8neg": ("np.array([1, 2], np.uint8)", "-1", ("-1", "uint8")),
            "i8big": ("np.array([1, 2], np.int8)", "300", ("300", "int8")),
            "nan": (EDGE_ARRAYS["nan"], "np.float32(0.0)", (fn,)),
            "intzero": ("np.array([3, -3, 0], np.int32)", "np.int32(0)", (fn,)),
            "empty": ("np.zeros((0,), np.float32)", "np.ones((1,), np.float32)", (fn,)),
            "mixed": ("np.array([1, 2], np.int32)", "np.array([0.5, 2.0], np.float32)", (fn,)),
            "bool": ("np.array([True, False])", "np.array([True, True])", (fn, "bool")),
            "complex": ("np.array([1 + 1j], np.complex64)", "np.float32(2)", (fn, "complex")),
        }
        for k, (a, b, blame) in pairs.items():
            yield Case(f"jnp.{fn}[{k}]", "jnp", f"jnp.{fn}({a}, {b})", (*blame, fn))


def _jnp_reductions() -> Iterator[Case]:
    for fn in JNP_REDUCE:
        for k, (axis, blame) in BAD_AXES.items():
            yield Case(f"jnp.{fn}[axis={k}]", "jnp", f"jnp.{fn}({ARR}, axis={axis})", blame)
        yield Case(f"jnp.{fn}[empty]", "jnp", f"jnp.{fn}(np.zeros((0, 3), np.float32))", (fn,))
        yield Case(
            f"jnp.{fn}[empty-axis0]",
            "jnp",
            f"jnp.{fn}(np.zeros((0, 3), np.float32), axis=0)",
            (fn, "empty", "zero-size", "identity"),
        )
        yield Case(f"jnp.{fn}[nan]", "jnp", f"jnp.{fn}({EDGE_ARRAYS['nan']})", (fn,))
        yield Case(f"jnp.{fn}[str]", "jnp", f"jnp.{fn}('abc')", ("abc", "str"))
        yield Case(f"jnp.{fn}[0d-axis0]", "jnp", f"jnp.{fn}(np.float32(1), axis=0)", ("axis", "0"))


def _jnp_creation() -> Iterator[Case]:
    for fn, tail in [
        ("zeros", ""),
        ("ones", ""),
        ("empty", ""),
        ("full", ", 1.5"),
        ("eye", ""),
        ("identity", ""),
        ("arange", ""),
    ]:
        for k, (shape, blame) in BAD_SHAPES.items():
            huge = k in HUGE
            yield Case(
                f"jnp.{fn}[shape={k}]",
                "jnp",
                f"jnp.{fn}({shape}{tail})",
                (*blame, "shape", "n", fn),
                jax=not huge,
                isolate=huge,
            )
        for k, (dtype, blame) in BAD_DTYPES.items():
            yield Case(f"jnp.{fn}[dtype={k}]", "jnp", f"jnp.{fn}(3{tail}, dtype={dtype})", blame)
    for k, (dtype, blame) in BAD_DTYPES.items():
        yield Case(f"jnp.array[dtype={k}]", "jnp", f"jnp.array([1, 2], dtype={dtype})", blame)
        yield Case(f"jnp.asarray[dtype={k}]", "jnp", f"jnp.asarray(1.5, dtype={dtype})", blame)
    for k, (expr, blame) in BAD_ARRAYS.items():
        yield Case(f"jnp.array[{k}]", "jnp", f"jnp.array({expr})", blame)
        yield Case(f"jnp.zeros_like[{k}]", "jnp", f"jnp.zeros_like({expr})", blame)
    values = {
        "u8neg": ("-1", "jnp.uint8"),
        "i8big": ("300", "jnp.int8"),
        "i32big": ("2**31", "jnp.int32"),
        "u32neg": ("-5", "jnp.uint32"),
        "f16big": ("1e6", "jnp.float16"),
        "boolstr": ("'x'", "jnp.bool_"),
        "nanint": ("float('nan')", "jnp.int32"),
        "i32list": ("[1, 2**40]", "jnp.int32"),
    }
    for k, (v, dt) in values.items():
        yield Case(f"jnp.array[value={k}]", "jnp", f"jnp.array({v}, dtype={dt})", (v, dt[4:]))
    arange = {
        "big": "1 << 40",
        "step0": "0, 10, 0",
        "neg": "5, 0, 1",
        "float": "0.0, 1.0, 0.1",
        "nan": "float('nan')",
        "inf": "float('inf')",
        "huge-step": "0, 10, 1e30",
    }
    for k, args in arange.items():
        yield Case(
            f"jnp.arange[{k}]",
            "jnp",
            f"jnp.arange({args})",
            ("arange", "1099511627776", "step", "nan", "inf", "size", "0"),
            isolate=k == "big",
        )
    linspace = {
        "neg": "0, 1, -1",
        "float-num": "0, 1, 2.5",
        "nan": "0, float('nan'), 3",
        "zero": "0, 1, 0",
        "str": "0, 1, 'a'",
    }
    for k, args in linspace.items():
        yield Case(f"jnp.linspace[{k}]", "jnp", f"jnp.linspace({args})", ("num", "-1", "2.5", "a"))
    fulls = {
        "vec": "(2, 3), np.ones(3)",
        "str": "(2,), 'a'",
        "none": "(2,), None",
        "big": "(2,), 2**70",
        "nan": "(2,), float('nan')",
    }
    for k, args in fulls.items():
        yield Case(f"jnp.full[{k}]", "jnp", f"jnp.full({args})", ("fill_value", "a", "none"))


_SHAPE_CALLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reshape-size": (f"jnp.reshape({ARR}, (4, 2))", ("(4, 2)", "size", "6", "8")),
    "reshape-2neg": (f"jnp.reshape({ARR}, (-1, -1))", ("-1",)),
    "reshape-neg3": (f"jnp.reshape({ARR}, (-3, 2))", ("-3", "shape")),
    "reshape-str": (f"jnp.reshape({ARR}, 'a')", ("'a'", "shape")),
    "reshape-float": (f"jnp.reshape({ARR}, (3.0, 2))", ("3.0", "float", "shape")),
    "reshape-empty": ("jnp.reshape(np.zeros((0, 3)), (-1, 0))", ("-1", "0")),
    "transpose-short": (f"jnp.transpose({ARR}, (0,))", ("axes", "(0,)", "permutation")),
    "transpose-dup": (f"jnp.transpose({ARR}, (0, 0))", ("axes", "(0, 0)", "permutation")),
    "transpose-big": (f"jnp.transpose({ARR}, (0, 5))", ("axes", "5", "permutation")),
    "swapaxes-big": (f"jnp.swapaxes({ARR}, 0, 4)", ("axis", "4")),
    "moveaxis-dup": (f"jnp.moveaxis({ARR}, (0, 0), (1, 0))", ("repeated", "axis", "source")),
    "moveaxis-len": (f"jnp.moveaxis({ARR}, (0, 1), (0,))", ("source", "destination")),
    "expand_dims-big": (f"jnp.expand_dims({ARR}, 7)", ("axis", "7")),
    "expand_dims-dup": (f"jnp.expand_dims({ARR}, (0, 0))", ("repeated", "axis")),
    "squeeze-non1": (f"jnp.squeeze({ARR}, 0)", ("squeeze", "size", "axis", "2")),
    "squeeze-big": (f"jnp.squeeze({ARR}, 5)", ("axis", "5")),
    "concat-rank": (f"jnp.concatenate([{ARR}, np.ones(3, np.float32)])", ("dimensions", "rank")),
    "concat-shape": (f"jnp.concatenate([{ARR}, np.ones((2, 2))], axis=0)", ("shape", "(2, 2)")),
    "concat-empty": ("jnp.concatenate([])", ("concatenate", "at least one", "empty")),
    "concat-axis": (f"jnp.concatenate([{ARR}, {ARR}], axis=2)", ("axis", "2")),
    "concat-scalar": ("jnp.concatenate([np.float32(1), np.float32(2)])", ("zero-dim", "0")),
    "stack-shape": (f"jnp.stack([{ARR}, np.ones(3)])", ("shape",)),
    "stack-empty": ("jnp.stack([])", ("stack", "at least one", "empty")),
    "stack-axis": (f"jnp.stack([{ARR}, {ARR}], axis=3)", ("axis", "3")),
    "split-uneven": ("jnp.split(np.arange(5.0), 2)", ("equal", "split", "2")),
    "split-zero": ("jnp.split(np.arange(5.0), 0)", ("0", "split", "number")),
    "split-neg": ("jnp.split(np.arange(5.0), [3, 1])", ("split",)),
    "array_split-zero": ("jnp.array_split(np.arange(5.0), 0)", ("0", "sections", "number")),
    "repeat-neg": ("jnp.repeat(np.arange(3.0), -1)", ("-1", "repeats", "negative")),
    "repeat-vec": ("jnp.repeat(np.arange(3.0), np.array([1, 2]))", ("repeats", "shape")),
    "repeat-negvec": ("jnp.repeat(np.arange(3.0), np.array([1, -1, 2]))", ("repeats",)),
    "tile-neg": ("jnp.tile(np.arange(3.0), -2)", ("-2", "reps", "negative")),
    "tile-str": ("jnp.tile(np.arange(3.0), 'a')", ("'a'", "reps", "str")),
    "broadcast_to-bad": (f"jnp.broadcast_to({ARR}, (3, 3))", ("(2, 3)", "(3, 3)", "broadcast")),
    "broadcast_to-rank": (f"jnp.broadcast_to({ARR}, (3,))", ("(2, 3)", "(3,)", "broadcast")),
    "broadcast_to-neg": ("jnp.broadcast_to(np.float32(1), (-1,))", ("-1", "negative", "shape")),
    "broadcast_shapes": ("jnp.broadcast_shapes((2, 3), (4,))", ("(2, 3)", "(4,)")),
    "broadcast_arrays": ("jnp.broadcast_arrays(np.ones(2), np.ones(3))", ("(2,)", "(3,)")),
    "take-oob": ("jnp.take(np.arange(3.0), 10)", ("10",)),
    "take-oob-neg": ("jnp.take(np.arange(3.0), -10)", ("-10",)),
    "take-float-idx": ("jnp.take(np.arange(3.0), 1.5)", ("1.5", "float", "indices", "integer")),
    "take-mode": ("jnp.take(np.arange(3.0), 1, mode='bogus')", ("bogus", "mode")),
    "take-raise": ("jnp.take(np.arange(3.0), 1, mode='raise')", ("raise", "mode")),
    "take-axis": ("jnp.take(np.arange(3.0), 1, axis=3)", ("axis", "3")),
    "take_along-rank": (f"jnp.take_along_axis({ARR}, np.array([0]), axis=0)", ("rank", "ndim")),
    "take_along-axis": (f"jnp.take_along_axis({ARR}, np.zeros((2, 3), int), axis=5)", ("axis",)),
    "where-shape": ("jnp.where(np.array([True, False]), np.ones(3), 0.0)", ("(2,)", "(3,)")),
    "where-one": ("jnp.where(np.array([True, False]), np.ones(2))", ("x", "y", "both")),
    "where-str": ("jnp.where('a', 1.0, 2.0)", ("'a'", "str")),
    "clip-swap": ("jnp.clip(np.arange(5.0), 3, 1)", ("clip",)),
    "clip-nan": ("jnp.clip(np.array([np.nan, 1.0]), 0, 2)", ("clip",)),
    "clip-str": ("jnp.clip(np.arange(5.0), 'a', 1)", ("'a'", "str")),
    "einsum-bad": (f"jnp.einsum('ij,jk->ik', {ARR}, {ARR})", ("j", "3", "2", "size", "dim")),
    "einsum-spec": (f"jnp.einsum('ij->q', {ARR})", ("q", "output", "subscript")),
    "einsum-ops": (f"jnp.einsum('ij,jk', {ARR})", ("operand", "number")),
    "matmul-shape": (f"jnp.matmul({ARR}, {ARR})", ("(2, 3)", "3", "2", "shape")),
    "matmul-0d": ("jnp.matmul(np.float32(1), np.ones(2))", ("scalar", "0", "ndim", "rank")),
    "matmul-empty": ("jnp.matmul(np.zeros((2, 0)), np.zeros((0, 3)))", ("matmul",)),
    "dot-shape": ("jnp.dot(np.ones(3), np.ones(4))", ("(3,)", "(4,)", "3", "4")),
    "tensordot-axes": (f"jnp.tensordot({ARR}, {ARR}, axes=5)", ("axes", "5")),
    "tensordot-neg": (f"jnp.tensordot({ARR}, {ARR}, axes=-1)", ("axes", "-1", "negative")),
    "outer-str": ("jnp.outer(np.ones(2), 'a')", ("'a'", "str")),
    "inner-shape": ("jnp.inner(np.ones(2), np.ones(3))", ("(2,)", "(3,)", "2", "3")),
    "vdot-shape": ("jnp.vdot(np.ones(2), np.ones(3))", ("(2,)", "(3,)", "2", "3")),
    "roll-axis": ("jnp.roll(np.arange(3.0), 1, axis=2)", ("axis", "2")),
    "roll-float": ("jnp.roll(np.arange(3.0), 1.5)", ("1.5", "shift", "float", "integer")),
    "roll-big": ("jnp.roll(np.arange(3.0), 10**12)", ("roll",)),
    "astype-bad": ("jnp.astype(np.arange(3.0), 'foo')", ("foo", "dtype")),
    "astype-nan-int": ("jnp.astype(np.array([np.nan, np.inf]), jnp.int32)", ("astype",)),
    "ravel-order": ("jnp.ravel(np.arange(3.0), order='Q')", ("order", "q")),
    "reshape-order": ("jnp.reshape(np.arange(4.0), (2, 2), order='Q')", ("order", "q")),
    "round-decimals": ("jnp.round(np.arange(3.0), 1.5)", ("decimals", "1.5", "integer")),
    "cumsum-dtype": ("jnp.cumsum(np.arange(3.0), dtype='foo')", ("foo", "dtype")),
    "sum-dtype": ("jnp.sum(np.arange(3.0), dtype='foo')", ("foo", "dtype")),
    "sum-where": ("jnp.sum(np.arange(3.0), where=np.array([True, False]))", ("where", "shape")),
    "sum-keepdims": ("jnp.sum(np.arange(3.0), keepdims='yes')", ("keepdims",)),
    "mean-empty": ("jnp.mean(np.zeros((0,), np.float32))", ("mean",)),
    "std-ddof": ("jnp.std(np.arange(3.0), ddof=5)", ("ddof",)),
    "var-ddof-str": ("jnp.var(np.arange(3.0), ddof='a')", ("ddof", "'a'")),
    "argmax-empty": ("jnp.argmax(np.zeros((0,), np.float32))", ("empty", "argmax")),
    "sort-kind": ("jnp.sort(np.arange(3.0), kind='bogus')", ("kind", "bogus")),
    "sort-stable-str": ("jnp.sort(np.arange(3.0), stable='x')", ("stable",)),
    "iinfo-float": ("jnp.iinfo(jnp.float32)", ("float32", "integer")),
    "finfo-int": ("jnp.finfo(jnp.int32)", ("int32", "float")),
    "promote-bad": ("jnp.promote_types('foo', jnp.int32)", ("foo", "dtype")),
    "result_type-str": ("jnp.result_type('abc')", ("abc", "dtype")),
    "eye-k": ("jnp.eye(3, k=10)", ("eye",)),
    "eye-neg-m": ("jnp.eye(3, -2)", ("-2", "negative", "m")),
    "atleast_1d-str": ("jnp.atleast_1d('a')", ("'a'", "str")),
    "hstack-empty": ("jnp.hstack([])", ("at least one", "empty", "need")),
    "flip-axis": ("jnp.flip(np.arange(3.0), 1)", ("axis", "1")),
    "item-idx": ("jnp.asarray(np.arange(3.0))[5]", ("5", "index", "bounds")),
    "index-float": ("jnp.asarray(np.arange(3.0))[1.5]", ("1.5", "float", "index")),
    "index-str": ("jnp.asarray(np.arange(3.0))['a']", ("'a'", "str", "index")),
    "index-many": ("jnp.asarray(np.arange(3.0))[0, 0]", ("index", "too many")),
    "index-bool-shape": ("jnp.asarray(np.arange(3.0))[np.array([True, False])]", ("bool",)),
    "index-none": ("jnp.asarray(np.arange(3.0))[None, ..., None].shape", ("index",)),
    "index-ellipsis2": ("jnp.asarray(np.arange(3.0))[..., ...]", ("ellipsis",)),
    "index-step0": ("jnp.asarray(np.arange(3.0))[::0]", ("step", "zero", "0")),
    "index-neg-oob": ("jnp.asarray(np.arange(3.0))[-10]", ("-10", "index", "bounds")),
    "setitem": ("a = jnp.zeros(3)\na[0] = 1", ("immutable", "at[]", "does not support")),
    "at-oob": ("jnp.zeros(3).at[10].set(1.0)", ("10",)),
    "at-mode": ("jnp.zeros(3).at[1].set(1.0, mode='bogus')", ("bogus", "mode")),
    "bool-ambig": ("bool(jnp.arange(3))", ("ambiguous", "truth", "(3,)")),
    "int-conv": ("int(jnp.arange(3))", ("size", "scalar", "length")),
    "float-complex": ("float(jnp.array(1 + 1j))", ("complex",)),
    "len-0d": ("len(jnp.float32(1))", ("len", "0", "unsized", "scalar")),
    "iter-0d": ("list(jnp.array(1.0))", ("iteration", "0-d", "scalar")),
    "astype-unsupported": ("jnp.arange(3.0).astype(object)", ("object", "dtype")),
    "T-chain": ("jnp.ones((2, 3)).T.T.shape", ("T",)),
    "matmul-op-str": ("jnp.ones(2) @ 'a'", ("'a'", "str", "@")),
    "add-op-list": ("jnp.ones(2) + [1, 2, 3]", ("(2,)", "(3,)", "shape", "list")),
    "pow-neg-int": ("jnp.arange(3) ** -1", ("negative", "integer", "-1")),
    "div-int0": ("jnp.arange(3) // 0", ("0",)),
    "shift-big": ("jnp.left_shift(np.int32(1), np.int32(40))", ("shift",)),
    "uint-neg-shift": ("jnp.right_shift(np.uint8(8), np.int32(-1))", ("shift",)),
}


def _jnp_shapes() -> Iterator[Case]:
    for k, (code, blame) in _SHAPE_CALLS.items():
        yield Case(f"jnp.{k}", "jnp", code, blame)


def _lax() -> Iterator[Case]:
    lax_inputs = {
        "int": ("np.arange(3, dtype=np.int32)", ("int32", "dtype")),
        "bool": ("np.array([True, False])", ("bool", "dtype")),
        "complex": ("np.array([1 + 1j], np.complex64)", ("complex64", "dtype")),
        "str": ("'a'", ("'a'", "str")),
        "none": ("None", ("none",)),
        "nan": (EDGE_ARRAYS["nan"], ("nan",)),
        "empty": ("np.zeros((0, 2), np.float32)", ("shape",)),
        "pyfloat": ("0.5", ("float",)),
        "f16": ("np.array([0.5, -2.0, 65504.0], np.float16)", ("float16",)),
    }
    for fn in LAX_UNARY:
        for k, (expr, blame) in lax_inputs.items():
            yield Case(f"lax.{fn}[{k}]", "lax", f"lax.{fn}({expr})", (*blame, fn))
    pairs = {
        "dtype": ("np.ones(3, np.float32)", "np.ones(3, np.int32)", ("float32", "int32", "dtype")),
        "shape": ("np.ones(3, np.float32)", "np.ones(4, np.float32)", ("(3,)", "(4,)", "shape")),
        "rank": ("np.ones(3, np.float32)", "np.ones((1, 3), np.float32)", ("(3,)", "(1, 3)")),
        "pyint": ("np.ones(3, np.float32)", "2", ("2",)),
        "f64": ("np.ones(3, np.float32)", "np.ones(3, np.float64)", ("float64", "float32")),
        "str": ("np.ones(3, np.float32)", "'a'", ("'a'", "str")),
        "int": ("np.arange(3, dtype=np.int32)", "np.int32(2)", ("int32",)),
        "intzero": ("np.array([3, -3], np.int32)", "np.zeros(2, np.int32)", ("int32",)),
        "u8": ("np.array([200, 3], np.uint8)", "np.array([100, 9], np.uint8)", ("uint8",)),
        "nan": (EDGE_ARRAYS["nan"], "np.ones(6, np.float32)", ("nan",)),
        "bool": ("np.array([True, False])", "np.array([True, True])", ("bool",)),
    }
    for fn in LAX_BINARY:
        for k, (a, b, blame) in pairs.items():
            yield Case(f"lax.{fn}[{k}]", "lax", f"lax.{fn}({a}, {b})", (*blame, fn))
    for k, (code, blame) in _LAX_CALLS.items():
        yield Case(f"lax.{k}", "lax", code, blame)


X = "np.arange(6, dtype=np.float32).reshape(2, 3)"
_LAX_CALLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reshape-size": (f"lax.reshape({X}, (4, 2))", ("(4, 2)", "(2, 3)", "size")),
    "reshape-neg": (f"lax.reshape({X}, (-1, 6))", ("-1", "negative", "new_sizes")),
    "reshape-dims": (f"lax.reshape({X}, (3, 2), dimensions=(0,))", ("dimensions",)),
    "transpose-perm": (f"lax.transpose({X}, (0,))", ("permutation", "(0,)")),
    "transpose-dup": (f"lax.transpose({X}, (1, 1))", ("permutation", "(1, 1)")),
    "slice-oob": (f"lax.slice({X}, (0, 0), (3, 3))", ("limit_indices", "(3, 3)", "slice")),
    "slice-neg": (f"lax.slice({X}, (-1, 0), (2, 3))", ("start_indices", "-1", "negative")),
    "slice-rev": (f"lax.slice({X}, (1, 0), (0, 3))", ("limit_indices", "start_indices")),
    "slice-rank": (f"lax.slice({X}, (0,), (1,))", ("start_indices", "rank", "(0,)")),
    "slice-stride0": (f"lax.slice({X}, (0, 0), (2, 3), (0, 1))", ("strides", "0")),
    "dynamic_slice-oob": (f"lax.dynamic_slice({X}, (5, 5), (1, 1))", ("dynamic_slice",)),
    "dynamic_slice-big": (f"lax.dynamic_slice({X}, (0, 0), (3, 3))", ("slice_sizes", "(3, 3)")),
    "dynamic_slice-neg": (f"lax.dynamic_slice({X}, (-9, -9), (1, 2))", ("dynamic_slice",)),
    "dynamic_slice-float": (f"lax.dynamic_slice({X}, (0.5, 0), (1, 1))", ("index", "float")),
    "dus-big": (
        f"lax.dynamic_update_slice({X}, np.ones((3, 3), np.float32), (0, 0))",
        ("update", "(3, 3)", "shape"),
    ),
    "dus-dtype": (
        f"lax.dynamic_update_slice({X}, np.ones((1, 1), np.int32), (0, 0))",
        ("int32", "dtype", "float32"),
    ),
    "dus-oob": (f"lax.dynamic_update_slice({X}, np.ones((1, 1), np.float32), (7, 7))", ("x",)),
    "pad-neg": (f"lax.pad({X}, np.float32(0), ((-1, -1, 0), (0, 0, 0)))", ("padding",)),
    "pad-negint": (f"lax.pad({X}, np.float32(0), ((-3, 0, 0), (0, 0, 0)))", ("-3", "padding")),
    "pad-interior-neg": (
        f"lax.pad({X}, np.float32(0), ((0, 0, -1), (0, 0, 0)))",
        ("interior", "-1", "padding"),
    ),
    "pad-rank": (f"lax.pad({X}, np.float32(0), ((0, 0, 0),))", ("padding_config", "rank")),
    "pad-dtype": (f"lax.pad({X}, np.int32(0), ((0, 0, 0), (0, 0, 0)))", ("int32", "dtype")),
    "pad-vec": (
        f"lax.pad({X}, np.zeros(2, np.float32), ((0, 0, 0), (0, 0, 0)))",
        ("padding_value", "scalar", "shape"),
    ),
    "concat-dim": (f"lax.concatenate([{X}, {X}], 2)", ("dimension", "2")),
    "concat-empty": ("lax.concatenate([], 0)", ("operands", "at least one", "empty")),
    "concat-dtype": (f"lax.concatenate([{X}, np.ones((2, 3), np.int32)], 0)", ("int32", "dtype")),
    "concat-shape": (f"lax.concatenate([{X}, np.ones((2, 2), np.float32)], 0)", ("(2, 2)",)),
    "bid-rank": (
        "lax.broadcast_in_dim(np.ones(3, np.float32), (2, 3), ())",
        ("broadcast_dimensions", "()"),
    ),
    "bid-size": (
        "lax.broadcast_in_dim(np.ones(3, np.float32), (2, 4), (1,))",
        ("(2, 4)", "(3,)", "shape"),
    ),
    "bid-order": (
        "lax.broadcast_in_dim(np.ones((2, 3), np.float32), (2, 3), (1, 0))",
        ("broadcast_dimensions", "(1, 0)"),
    ),
    "bid-neg": ("lax.broadcast_in_dim(np.float32(1), (-1,), ())", ("-1", "negative", "shape")),
    "broadcast-neg": ("lax.broadcast(np.float32(1), (-2,))", ("-2", "negative", "sizes")),
    "reduce_sum-axes": (f"lax.reduce_sum({X}, (2,))", ("axes", "2")),
    "reduce_sum-dup": (f"lax.reduce_sum({X}, (0, 0))", ("axes", "duplicate", "(0, 0)")),
    "reduce_max-empty": ("lax.reduce_max(np.zeros((0,), np.float32), (0,))", ("reduce_max",)),
    "argmax-axis": (f"lax.argmax({X}, 5, np.int32)", ("axis", "5")),
    "argmax-dtype": (f"lax.argmax({X}, 0, np.float32)", ("index_dtype", "float32")),
    "iota-neg": ("lax.iota(np.int32, -1)", ("-1", "size", "negative")),
    "iota-dtype": ("lax.iota('foo', 3)", ("foo", "dtype")),
    "iota-huge": ("lax.iota(np.int32, 1 << 62)", ("4611686018427387904", "size", "large")),
    "broadcasted_iota-dim": ("lax.broadcasted_iota(np.int32, (2, 3), 4)", ("dimension", "4")),
    "full-vec": ("lax.full((2, 3), np.ones(3, np.float32))", ("fill_value", "scalar")),
    "full-neg": ("lax.full((2, -1), 0.0)", ("-1", "negative", "shape")),
    "full-str": ("lax.full((2,), 'a')", ("'a'", "str")),
    "convert-bad": ("lax.convert_element_type(np.ones(2), 'foo')", ("foo", "dtype")),
    "convert-nan-int": (
        "lax.convert_element_type(np.array([np.nan, np.inf, -np.inf, 3e9], np.float32), np.int32)",
        ("nan",),
    ),
    "convert-u8": (
        "lax.convert_element_type(np.array([-1.0, 300.0], np.float32), np.uint8)",
        ("uint8",),
    ),
    "bitcast-size": ("lax.bitcast_convert_type(np.ones(2, np.float32), np.int16)", ("int16",)),
    "bitcast-bad": ("lax.bitcast_convert_type(np.ones(2, np.float32), 'foo')", ("foo",)),
    "bitcast-wide": (
        "lax.bitcast_convert_type(np.ones(2, np.int8), np.int32)",
        ("int8", "int32", "shape"),
    ),
    "dot_general-dims": (
        f"lax.dot_general({X}, {X}, (((1,), (1,)), ((0,), (1,))))",
        ("batch", "dimension"),
    ),
    "dot_general-contract": (
        f"lax.dot_general({X}, {X}, (((1,), (0,)), ((), ())))",
        ("contracting", "3", "2"),
    ),
    "dot_general-oob": (
        f"lax.dot_general({X}, {X}, (((5,), (0,)), ((), ())))",
        ("contracting", "5"),
    ),
    "dot_general-dtype": (
        f"lax.dot_general({X}, np.ones((3, 2), np.int32), (((1,), (0,)), ((), ())))",
        ("int32", "float32", "dtype"),
    ),
    "dot-rank": ("lax.dot(np.ones((2, 2, 2), np.float32), np.ones(3, np.float32))", ("dot",)),
    "dot-precision": (f"lax.dot({X}, {X}.T, precision='bogus')", ("precision", "bogus")),
    "sort-dim": (f"lax.sort({X}, dimension=5)", ("dimension", "5")),
    "sort-keys": (f"lax.sort(({X}, {X}), num_keys=3)", ("num_keys", "3")),
    "sort-num0": (f"lax.sort(({X},), num_keys=0)", ("num_keys", "0")),
    "sort_key_val-shape": ("lax.sort_key_val(np.ones(3), np.ones(4))", ("shape", "(3,)")),
    "top_k-big": ("lax.top_k(np.arange(3.0), 5)", ("k", "5")),
    "top_k-neg": ("lax.top_k(np.arange(3.0), -1)", ("k", "-1", "negative")),
    "top_k-0d": ("lax.top_k(np.float32(1), 1)", ("rank", "scalar", "operand")),
    "cumsum-axis": (f"lax.cumsum({X}, axis=5)", ("axis", "5")),
    "cumsum-rev": (f"lax.cumsum({X}, axis=0, reverse='x')", ("reverse",)),
    "squeeze-non1": (f"lax.squeeze({X}, (0,))", ("dimensions", "size", "2")),
    "expand_dims-oob": (f"lax.expand_dims({X}, (9,))", ("dimensions", "9")),
    "rev-oob": (f"lax.rev({X}, (4,))", ("dimensions", "4")),
    "rev-dup": (f"lax.rev({X}, (0, 0))", ("dimensions", "(0, 0)", "duplicate")),
    "clamp-shape": (
        "lax.clamp(np.zeros(2, np.float32), np.ones(3, np.float32), np.float32(5))",
        ("clamp", "shape", "(2,)", "(3,)"),
    ),
    "clamp-dtype": (
        "lax.clamp(np.int32(0), np.ones(3, np.float32), np.float32(5))",
        ("int32", "dtype", "clamp"),
    ),
    "clamp-swap": (
        "lax.clamp(np.float32(5), np.arange(8, dtype=np.float32), np.float32(1))",
        ("clamp",),
    ),
    "select_n-pred": (
        "lax.select_n(np.ones(2, np.float32), np.ones(2), np.zeros(2))",
        ("which", "bool", "int32", "float32"),
    ),
    "select_n-none": ("lax.select_n(np.array([True]))", ("cases", "at least one")),
    "select_n-oob": (
        "lax.select_n(np.array([5, 0], np.int32), np.ones(2, np.float32), np.zeros(2, np.float32))",
        ("select_n",),
    ),
    "select-shape": (
        "lax.select(np.array([True, False]), np.ones(3), np.zeros(3))",
        ("pred", "shape", "(2,)"),
    ),
    "integer_pow-neg": (
        "lax.integer_pow(np.arange(3, dtype=np.int32), -1)",
        ("integer_pow", "-1", "negative"),
    ),
    "integer_pow-float-y": ("lax.integer_pow(np.arange(3.0), 1.5)", ("y", "1.5", "integer")),
    "integer_pow-big": ("lax.integer_pow(np.float32(1.0001), 10**6)", ("integer_pow",)),
    "collapse-bad": (f"lax.collapse({X}, 1, 0)", ("collapse", "start_dimension", "stop")),
    "index_in_dim-oob": (f"lax.index_in_dim({X}, 7, 0)", ("index", "7")),
    "slice_in_dim-oob": (f"lax.slice_in_dim({X}, 0, 9, axis=1)", ("limit", "9", "slice")),
    "dynamic_index-oob": (f"lax.dynamic_index_in_dim({X}, 9, 0)", ("x",)),
    "split-sizes": (f"lax.split({X}, (1, 1), axis=1)", ("sizes", "(1, 1)", "3")),
    "split-axis": (f"lax.split({X}, (1, 1), axis=5)", ("axis", "5")),
    "tile-neg": (f"lax.tile({X}, (-1, 1))", ("reps", "-1", "negative")),
    "reduce_precision-bad": (
        "lax.reduce_precision(np.float32(1), -1, 5)",
        ("exponent_bits", "-1"),
    ),
    "reduce_precision-int": ("lax.reduce_precision(np.int32(1), 8, 7)", ("int32", "float")),
    "complex-int": ("lax.complex(np.int32(1), np.int32(2))", ("int32", "complex")),
    "real-float": ("lax.real(np.float32(1))", ("float32", "complex")),
    "gather-dnums": (
        f"lax.gather({X}, np.zeros((1, 1), np.int32), None, (1, 1))",
        ("dimension_numbers", "none"),
    ),
    "scatter-dnums": (
        f"lax.scatter_add({X}, np.zeros((1, 1), np.int32), np.ones(1), None)",
        ("dimension_numbers", "none"),
    ),
    "stop_gradient-str": ("lax.stop_gradient('a')", ("'a'", "str")),
    "associative_scan-axis": (f"lax.associative_scan(lax.add, {X}, axis=5)", ("axis", "5")),
    "associative_scan-len": (
        "lax.associative_scan(lax.add, (np.ones(2), np.ones(3)))",
        ("length", "2", "3"),
    ),
    "cummax-axis": (f"lax.cummax({X}, axis=-7)", ("axis", "-7")),
    "erf_inv-edge": ("lax.erf_inv(np.array([-1.0, 1.0, 2.0, 0.0], np.float32))", ("erf_inv",)),
    "nextafter-edge": (
        "lax.nextafter(np.float32([0.0, np.inf, np.nan]), np.float32(1))",
        ("nextafter",),
    ),
    "shift-oob": ("lax.shift_left(np.int32([1, 1, 1]), np.int32([31, 32, -1]))", ("shift",)),
    "shift-rl-oob": (
        "lax.shift_right_logical(np.int32([-8, -8]), np.int32([33, -2]))",
        ("shift",),
    ),
    "rem-int0": ("lax.rem(np.int32([5, -5]), np.int32([0, 0]))", ("rem",)),
    "div-int0": ("lax.div(np.int32([5, -5, 0]), np.int32([0, 0, 0]))", ("div",)),
    "div-intmin": ("lax.div(np.int32([-2147483648]), np.int32([-1]))", ("div",)),
    "pow-int": ("lax.pow(np.int32([2, 0]), np.int32([-1, -1]))", ("pow", "int32")),
    "round-method": ("lax.round(np.float32(2.5), rounding_method=7)", ("rounding_method", "7")),
    "population_count-float": ("lax.population_count(np.float32(1))", ("float32",)),
}


def _jit() -> Iterator[Case]:
    calls: dict[str, tuple[str, tuple[str, ...]]] = {
        "static_argnums-oob": ("jax.jit(lambda x: x, static_argnums=5)(1.0)", ("static_argnums",)),
        "static_argnums-neg": (
            "jax.jit(lambda x: x, static_argnums=-5)(1.0)",
            ("static_argnums", "-5"),
        ),
        "static_argnums-str": (
            "jax.jit(lambda x: x, static_argnums='a')(1.0)",
            ("static_argnums", "'a'"),
        ),
        "static_argnums-float": (
            "jax.jit(lambda x: x, static_argnums=0.5)(1.0)",
            ("static_argnums", "0.5"),
        ),
        "static_argnames-missing": (
            "jax.jit(lambda x: x, static_argnames='nope')(1.0)",
            ("static_argnames", "nope"),
        ),
        "static_argnames-int": (
            "jax.jit(lambda x: x, static_argnames=3)(1.0)",
            ("static_argnames", "3"),
        ),
        "donate_argnums-oob": (
            "jax.jit(lambda x: x, donate_argnums=5)(np.ones(2))",
            ("donate_argnums", "5"),
        ),
        "donate_argnames-missing": (
            "jax.jit(lambda x: x, donate_argnames='zz')(np.ones(2))",
            ("donate_argnames", "zz"),
        ),
        "static-and-donated": (
            "jax.jit(lambda x, y: x, static_argnums=0, donate_argnums=0)(1, np.ones(2))",
            ("static", "donate"),
        ),
        "donate-two": (
            "f = jax.jit(lambda x, y: x + y, donate_argnums=(0, 1))\nf(jnp.ones(2), jnp.ones(2))",
            ("donate",),
        ),
        "donated-reuse": (
            "a = jnp.ones(2)\njax.jit(lambda x: x * 2, donate_argnums=0)(a)\na + 1",
            ("deleted", "donated"),
        ),
        "not-callable": ("jax.jit(5)", ("callable", "5", "int")),
        "not-callable-none": ("jax.jit(None)", ("callable", "none")),
        "arity": ("jax.jit(lambda x: x)(1.0, 2.0)", ("positional", "argument", "2")),
        "arity-few": ("jax.jit(lambda x, y: x)(1.0)", ("missing", "y")),
        "kwarg-unknown": ("jax.jit(lambda x: x)(1.0, z=2)", ("z", "keyword")),
        "str-arg": ("jax.jit(lambda x: x)('a')", ("str", "'a'", "valid jax type")),
        "obj-arg": ("jax.jit(lambda x: x)(object())", ("object", "valid jax type")),
        "none-arg": ("jax.jit(lambda x: x)(None)", ("none",)),
        "item": ("jax.jit(lambda x: x.item())(np.ones(()))", ("concret", "tracer", "item")),
        "float": ("jax.jit(lambda x: float(x))(np.ones(()))", ("concret", "tracer", "float")),
        "bool": ("jax.jit(lambda x: 1 if x > 0 else 2)(1.0)", ("concret", "tracer", "bool")),
        "np-asarray": ("jax.jit(lambda x: np.asarray(x))(1.0)", ("tracer", "numpy", "concret")),
        "return-str": ("jax.jit(lambda x: 'a')(1.0)", ("str", "'a'", "valid jax type", "output")),
        "return-obj": ("jax.jit(lambda x: object())(1.0)", ("object", "valid jax type", "output")),
        "return-none": ("jax.jit(lambda x: None)(1.0)", ("none",)),
        "return-tuple": ("jax.jit(lambda x: (x, [x, {'a': x}]))(1.0)", ("jit",)),
        "static-unhashable": (
            "jax.jit(lambda x, y: x, static_argnums=1)(1.0, np.ones(2))",
            ("hash", "static", "ndarray"),
        ),
        "static-list": (
            "jax.jit(lambda x, y: x, static_argnums=1)(1.0, [1])",
            ("hash", "static", "list"),
        ),
        "raise-inside": ("jax.jit(lambda x: 1 / 0)(1.0)", ("division by zero",)),
        "recursion": ("def f(x):\n    return f(x)\njax.jit(f)(1.0)", ("recursion",)),
        "lower-bad": ("jax.jit(lambda x: x).lower('a')", ("str", "'a'", "valid jax type")),
        "lower-compile-call": (
            "c = jax.jit(lambda x: x + 1).lower(np.ones(2, np.float32)).compile()"
            "\nc(np.ones(3, np.float32))",
            ("shape", "(3,)", "float32[3]", "f32[3]"),
        ),
        "lower-compile-dtype": (
            "c = jax.jit(lambda x: x + 1).lower(np.ones(2, np.float32))"
            ".compile()\nc(np.ones(2, np.int32))",
            ("int32", "dtype", "i32[2]"),
        ),
        "lower-sds": (
            "jax.jit(lambda x: x).lower(jax.ShapeDtypeStruct((-1,), np.float32))",
            ("-1", "shape", "negative"),
        ),
        "lower-sds-dtype": (
            "jax.jit(lambda x: x).lower(jax.ShapeDtypeStruct((2,), 'foo'))",
            ("foo", "dtype"),
        ),
        "grad-int": ("jax.grad(lambda x: x * 2)(3)", ("int", "float", "grad")),
        "grad-vector": ("jax.grad(lambda x: x * 2)(np.ones(2, np.float32))", ("scalar", "shape")),
        "grad-argnums": ("jax.grad(lambda x: x, argnums=3)(1.0)", ("argnums", "3")),
        "grad-str": ("jax.grad(lambda x: x)('a')", ("str", "'a'")),
        "grad-complex": ("jax.grad(lambda x: x)(1j)", ("complex", "holomorphic")),
        "vmap-axes": ("jax.vmap(lambda x: x, in_axes=3)(np.ones(2))", ("axis", "3", "in_axes")),
        "vmap-sizes": (
            "jax.vmap(lambda x, y: x + y)(np.ones(2), np.ones(3))",
            ("size", "2", "3", "inconsistent"),
        ),
        "vmap-scalar": ("jax.vmap(lambda x: x)(1.0)", ("axis", "0", "rank", "scalar")),
        "vmap-in_axes-len": (
            "jax.vmap(lambda x, y: x, in_axes=(0,))(np.ones(2), np.ones(2))",
            ("in_axes", "length", "tuple"),
        ),
        "vmap-out_axes": ("jax.vmap(lambda x: x, out_axes=5)(np.ones(2))", ("out_axes", "5")),
        "vmap-empty": ("jax.vmap(lambda x: x)()", ("vmap", "argument", "at least one")),
        "eval_shape-bad": ("jax.eval_shape(lambda x: x @ x, np.ones(3))", ("matmul",)),
        "make_jaxpr-str": ("jax.make_jaxpr(lambda x: x)('a')", ("str", "'a'")),
        "jvp-mismatch": (
            "jax.jvp(lambda x: x, (1.0,), (np.ones(2),))",
            ("tangent", "primal", "shape"),
        ),
        "jvp-arity": ("jax.jvp(lambda x: x, (1.0, 2.0), (1.0,))", ("primal", "tangent")),
        "vjp-ct": (
            "out, f = jax.vjp(lambda x: x, np.ones(2, np.float32))\nf(np.ones(3))",
            ("shape", "(3,)", "cotangent"),
        ),
        "device_put-str": ("jax.device_put('a')", ("str", "'a'")),
        "block-str": ("jax.block_until_ready('a')", ("a",)),
        "jit-nan-in": ("jax.jit(lambda x: x / 0)(np.float32(1))", ("jit",)),
        "jit-empty": ("jax.jit(lambda x: x.sum())(np.zeros((0, 3), np.float32))", ("jit",)),
        "jit-big-const": (
            "jax.jit(lambda: jnp.zeros((1 << 62,)))()",
            ("4611686018427387904", "size", "large"),
        ),
        "jit-static-kw": (
            "jax.jit(lambda x, n: x * n, static_argnames='n')(np.ones(2), n=3)",
            ("jit",),
        ),
        "jit-inline-bad": ("jax.jit(lambda x: x, inline='x')(1.0)", ("inline",)),
        "jit-keep-unused": ("jax.jit(lambda x, y: x, keep_unused=True)(1.0, 2.0)", ("jit",)),
        "jit-backend": ("jax.jit(lambda x: x, backend='nope')(1.0)", ("backend", "nope")),
        "jit-device": ("jax.jit(lambda x: x, device='nope')(1.0)", ("device", "nope")),
        "jit-bad-kwarg": ("jax.jit(lambda x: x, nonsense=1)", ("nonsense",)),
    }
    for k, (code, blame) in calls.items():
        yield Case(f"jit.{k}", "jit", code, blame, isolate=k == "jit-big-const")


# --- AOT and cache (Lamina only) ------------------------------------------------------------

AOT_SETUP = (
    "f = jax.jit(lambda x: x * 2 + 1)\n"
    "c = f.lower(np.arange(4, dtype=np.float32)).compile()\n"
    "data = bytearray(aot.serialize(c))\n"
)
AOT_CALL = "aot.deserialize(bytes(data))(np.arange(4, dtype=np.float32))"
AOT_EXPECT = "np.arange(4, dtype=np.float32) * 2 + 1"
AOT_BLAME = ("artifact", "corrupt", "checksum", "truncated", "magic", "header", "data")


def _aot() -> Iterator[Case]:
    garbage = {
        "empty": "b''",
        "short": "b'x'",
        "garbage": "b'garbage' * 100",
        "zeros": "bytes(4096)",
        "none": "None",
        "str": "'abc'",
        "int": "5",
        "bytearray": "bytearray(b'abc')",
        "memoryview": "memoryview(b'abc')",
        "json": "b'{\"a\": 1}'",
        "npy": "np.ones(3).tobytes()",
    }
    for k, expr in garbage.items():
        yield Case(
            f"aot.deserialize[{k}]",
            "aot",
            f"aot.deserialize({expr})",
            (*AOT_BLAME, "bytes", "str", "int", "none"),
            jax=False,
        )
        yield Case(
            f"aot.describe[{k}]",
            "aot",
            f"aot.describe({expr})",
            (*AOT_BLAME, "bytes", "str", "int", "none"),
            jax=False,
        )
    others = {
        "serialize-jitted": ("aot.serialize(jax.jit(lambda x: x))", ("compile", "lower")),
        "serialize-lowered": ("aot.serialize(jax.jit(lambda x: x).lower(1.0))", ("compile",)),
        "serialize-none": ("aot.serialize(None)", ("none", "compile")),
        "serialize-fn": ("aot.serialize(lambda x: x)", ("function", "compile")),
        "load-missing": ("aot.load('/nonexistent/artifact.bin')", ("nonexistent", "no such")),
        "load-dir": ("aot.load('/tmp')", ("/tmp", "directory")),
        "load-devnull": ("aot.load('/dev/null')", AOT_BLAME),
        "save-dir": (AOT_SETUP + "aot.save(c, '/nonexistent/x/y.bin')", ("nonexistent",)),
        "save-none": ("aot.save(None, '/tmp/x.bin')", ("none", "compile")),
        "roundtrip": (AOT_SETUP + AOT_CALL, ()),
        "call-wrong-shape": (
            AOT_SETUP + "aot.deserialize(bytes(data))(np.ones(3, np.float32))",
            ("shape", "(3,)", "float32[3]", "f32[3]"),
        ),
        "call-wrong-dtype": (
            AOT_SETUP + "aot.deserialize(bytes(data))(np.ones(4, np.int32))",
            ("int32", "dtype", "i32"),
        ),
        "device-bad": (AOT_SETUP + "aot.deserialize(bytes(data), device='cpu9')", ("device",)),
    }
    for k, (code, blame) in others.items():
        expect = AOT_EXPECT if k == "roundtrip" else None
        yield Case(
            f"aot.{k}", "aot", code, blame, jax=False, expect=expect, may_raise=k != "roundtrip"
        )
    # Damage a real artifact: truncation and flipped bytes at positions spread over it.
    for frac in (0.0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        code = AOT_SETUP + f"del data[int(len(data) * {frac}):]\n" + AOT_CALL
        yield Case(
            f"aot.truncate[{frac}]",
            "aot",
            code,
            AOT_BLAME,
            jax=False,
            isolate=True,
            expect=AOT_EXPECT,
        )
    for frac in (0.0, 0.002, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.999):
        code = AOT_SETUP + f"data[int(len(data) * {frac})] ^= 0xFF\n" + AOT_CALL
        yield Case(
            f"aot.flip[{frac}]", "aot", code, AOT_BLAME, jax=False, isolate=True, expect=AOT_EXPECT
        )
    yield Case(
        "aot.append",
        "aot",
        AOT_SETUP + "data += b'x' * 10\n" + AOT_CALL,
        AOT_BLAME,
        jax=False,
        isolate=True,
        expect=AOT_EXPECT,
    )
    yield Case(
        "aot.doubled",
        "aot",
        AOT_SETUP + "data += data\n" + AOT_CALL,
        AOT_BLAME,
        jax=False,
        isolate=True,
        expect=AOT_EXPECT,
    )


CACHE_CALL = "jax.jit(lambda x: x * 3 + 1)(np.arange(3, dtype=np.float32))"
CACHE_EXPECT = "np.arange(3, dtype=np.float32) * 3 + 1"
CACHE_VARS = {
    "max_size": "JAX_COMPILATION_CACHE_MAX_SIZE",
    "min_time": "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
    "enable": "JAX_ENABLE_COMPILATION_CACHE",
    "l_max_size": "LAMINA_COMPILATION_CACHE_MAX_SIZE",
    "l_min_time": "LAMINA_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
    "l_enable": "LAMINA_ENABLE_COMPILATION_CACHE",
}
CACHE_VALUES = {
    "abc": "abc",
    "nan": "nan",
    "neg": "-1",
    "neg5": "-5",
    "empty": "",
    "inf": "inf",
    "big": "1e400",
    "space": " 5 ",
    "hex": "0x10",
    "true": "true",
    "zero": "0",
    "float": "2.5",
    "huge": str(1 << 70),
    "unicode": "五",
}


def _cache() -> Iterator[Case]:
    for (vk, var), (k, value) in itertools.product(CACHE_VARS.items(), CACHE_VALUES.items()):
        yield Case(
            f"cache.{vk}[{k}]",
            "cache",
            CACHE_CALL,
            (var.lower(), repr(value).lower()),
            jax=False,
            isolate=True,
            env=MappingProxyType({var: value}),
            expect=CACHE_EXPECT,
        )
    dirs = {
        "file": "/etc/hostname",
        "devnull": "/dev/null",
        "missing": "/nonexistent/deep/dir",
        "proc": "/proc/self",
        "long": "/tmp/" + "x" * 300,
        "relative": "rel-cache-dir",
        "empty": "",
    }
    for k, path in dirs.items():
        yield Case(
            f"cache.dir[{k}]",
            "cache",
            CACHE_CALL,
            ("lamina_cache_dir", path.lower()),
            jax=False,
            isolate=True,
            env=MappingProxyType({"LAMINA_CACHE_DIR": path}),
            expect=CACHE_EXPECT,
            may_raise=False,
        )
    setups = {
        "unlistable": "os.chmod(d, 0o300)",
        "readonly": "os.chmod(d, 0o500)",
        "fifo": "[os.mkfifo(os.path.join(d, f'e{i}')) for i in range(3)]",
        "garbage-files": "[open(os.path.join(d, f'g{i}'), 'wb').write(os.urandom(100))"
        " for i in range(5)]",
        "subdirs": "[os.makedirs(os.path.join(d, f's{i}', 'x')) for i in range(3)]",
    }
    for k, setup in setups.items():
        code = (
            "import tempfile\nd = tempfile.mkdtemp(dir='.')\n"
            f"{setup}\nos.environ['LAMINA_CACHE_DIR'] = d\n"
            f"r1 = {CACHE_CALL}\njax.clear_caches()\nr2 = {CACHE_CALL}\n"
            "os.chmod(d, 0o700)\n(r1, r2)"
        )
        yield Case(
            f"cache.{k}",
            "cache",
            code,
            ("cache",),
            jax=False,
            isolate=True,
            expect=f"({CACHE_EXPECT}, {CACHE_EXPECT})",
            may_raise=False,
        )


# --- the table ----------------------------------------------------------------------------------

GENERATORS = (
    _jnp_elementwise,
    _jnp_reductions,
    _jnp_creation,
    _jnp_shapes,
    _lax,
    _jit,
    _aot,
    _cache,
)


def all_cases() -> list[Case]:
    cases = [case for gen in GENERATORS for case in gen()]
    names = [c.name for c in cases]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise AssertionError(f"duplicate case names: {sorted(dupes)}")
    return cases


FAST_EVERY = 6
"""The fast subset: every case of the small areas (jit, aot, cache) but the isolated ones
beyond a few, and every FAST_EVERY-th case of the large generated areas."""


def fast_cases() -> list[Case]:
    out: list[Case] = []
    counters: dict[str, int] = {}
    isolated = 0
    for case in all_cases():
        if case.name in KNOWN_ISSUES:
            continue
        i = counters.get(case.area, 0)
        counters[case.area] = i + 1
        if case.isolate:
            isolated += 1
            if isolated % 8 == 1:
                out.append(case)
        elif case.area in ("jit", "aot", "cache") or i % FAST_EVERY == 0:
            out.append(case)
    return out
