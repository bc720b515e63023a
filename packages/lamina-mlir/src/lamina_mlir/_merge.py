"""Merging one module's functions into another: `merge_modules`.

The source module's symbols are renamed apart from the destination's (its `@main` after a name
hint), its functions made private, and every top-level op moved into the destination. Calling a
portable artifact uses it, and so does JAX's `merge_mlir_modules`.

This module knows nothing of jaxprs or of what the functions compute.
"""

from __future__ import annotations

from jaxlib.mlir import ir


def _symbol(op: ir.Operation) -> str | None:
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else None


def merge_modules(
    dst: ir.Module, sym_name: str, src: ir.Module, dst_table: ir.SymbolTable | None = None
) -> str:
    """Move the contents of `src` into `dst`; return the new name of `src`'s `@main`.

    Nothing in `dst` is renamed. A symbol of `src` is renamed when `dst` has one of the same
    name, and `@main` always: to `sym_name` (or its name, for another symbol), suffixed `_0`,
    `_1`, ... until it is taken in neither module nor by an earlier renaming, so that no
    renaming captures another symbol's uses. `src` is left empty.

    Args:
        dst: the module to merge into.
        sym_name: the name hint for `src`'s `@main`.
        src: the module to merge; in `dst`'s context, with a symbol named `main`.
        dst_table: `dst`'s symbol table, when the caller keeps one (it is updated).

    Raises:
        ValueError: the modules are in different MLIR contexts, or `src` has no `@main`.
    """
    if dst.context != src.context:
        raise ValueError("merge_modules: the two modules are in different MLIR contexts")
    src_table = ir.SymbolTable(src.operation)
    if dst_table is None:
        dst_table = ir.SymbolTable(dst.operation)
    ops = [op.operation for op in src.body.operations]
    taken: set[str] = set()
    renames: dict[str, str] = {}
    for op in ops:
        old = _symbol(op)
        if old is None or (old != "main" and old not in dst_table):
            continue
        base = sym_name if old == "main" else old
        new, i = base, 0
        while new in src_table or new in dst_table or new in taken:
            new, i = f"{base}_{i}", i + 1
        renames[old] = new
        taken.add(new)
    if "main" not in renames:
        raise ValueError("merge_modules: the module to merge has no @main")
    for old, new in renames.items():
        ir.SymbolTable.replace_all_symbol_uses(old, new, src.operation)
        ir.SymbolTable.set_symbol_name(src_table[old], new)
    private = ir.StringAttr.get("private", dst.context)
    for op in ops:
        if op.name == "func.func":
            op.attributes["sym_visibility"] = private
        dst.body.append(op)
        if _symbol(op) is not None:
            dst_table.insert(op)
    return renames["main"]
