"""`jax.debug`'s sharding tools: `inspect_array_sharding`, `visualize_sharding` and
`visualize_array_sharding`, as JAX 0.10.2's.

The picture is a `rich` table of the array's pieces (one or two dimensions), each cell naming
the devices that hold that piece, sized in proportion to it; like JAX, it needs `rich`, and
colours the cells with matplotlib's `tab20b` map when both it and a colour terminal are there.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from lamina_core import tree_util
from lamina_core.trace import Tracer

ColorMap = Callable[[float], tuple[float, float, float, float]]

_HEIGHT_TO_WIDTH: float = 2.5


def inspect_array_sharding(value: Any, *, callback: Callable[[Any], None]) -> None:
    """Call `callback` with the sharding of each array in the pytree `value`.

    Raises:
        NotImplementedError: `value` holds traced arrays (under `jit` Lamina does not yet
            report the sharding the compiler chooses).
    """
    for leaf in tree_util.tree_leaves(value):
        if isinstance(leaf, Tracer):
            raise NotImplementedError(
                "inspect_array_sharding: Lamina reports the sharding of concrete arrays only, "
                "not of traced values inside a transformation"
            )
        callback(leaf.sharding)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print how the array `arr` is laid out over devices (see `visualize_sharding`)."""

    def show(sharding: Any) -> None:
        visualize_sharding(np.shape(arr), sharding, **kwargs)

    inspect_array_sharding(arr, callback=show)


def _indices(shape: tuple[int, ...], sharding: Any) -> dict[Any, tuple[Any, ...]]:
    """Each device's index (slices, or ints) into an array of `shape`."""
    index_map = getattr(sharding, "devices_indices_map", None)
    if index_map is not None:
        found: dict[Any, tuple[Any, ...]] = index_map(shape)
        return found
    return {d: (slice(None),) * len(shape) for d in sharding.device_set}


def _chunk(size: int, piece: slice) -> tuple[int, float]:
    """Which chunk along an axis of `size` the slice `piece` is, and its share of the axis."""
    if piece.start is None and piece.stop is None:
        return 0, 1.0
    length = piece.stop - piece.start
    return piece.start // length, length / size


def _colors(color_map: ColorMap, rows: int, cols: int) -> Iterator[tuple[float, ...]]:
    n = rows * cols
    values = np.linspace(0, 1, n)
    step = n // 2 + (1 if n % 2 == 0 else 0)
    at = 0
    for _ in range(n):
        yield tuple(color_map(values[at]))
        at = (at + step) % n


def _hex(color: tuple[float, ...]) -> str:
    return "#" + "".join(f"{int(c * 255):02X}" for c in color[:3])


def _text_on(background: str) -> str:
    r, g, b = (int(background[i : i + 2], 16) for i in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def visualize_sharding(
    shape: Sequence[int],
    sharding: Any,
    *,
    use_color: bool = True,
    scale: float = 1.0,
    min_width: int = 9,
    max_width: int = 80,
    color_map: ColorMap | None = None,
) -> None:
    """Print a table of how an array of `shape` (1 or 2 dimensions) placed as `sharding` is
    split: one cell per piece, naming the devices that hold it."""
    if not importlib.util.find_spec("rich"):
        raise ValueError("`visualize_sharding` requires `rich` to be installed.")
    import rich.align
    import rich.box
    import rich.console
    import rich.padding
    import rich.style
    import rich.table

    shape = tuple(shape)
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    console = rich.console.Console(width=max_width)
    use_color = use_color and console.color_system is not None
    if use_color and color_map is None:
        try:
            mpl = importlib.import_module("matplotlib")
        except ModuleNotFoundError:
            use_color = False
        else:
            color_map = mpl.colormaps["tab20b"]
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = str(next(iter(sharding.device_set)).platform).upper()
    holders: dict[tuple[int, int], set[int]] = {}
    sizes: dict[tuple[int, int], tuple[float | None, float]] = {}
    for device, index in _indices(shape, sharding).items():
        pieces = [slice(i, i + 1) if isinstance(i, int) else i for i in index]
        chunks = [_chunk(n, p) for n, p in zip(shape, pieces, strict=True)]
        if len(shape) == 2:
            cell = (chunks[0][0], chunks[1][0])
            sizes[cell] = (chunks[0][1], chunks[1][1])
        else:
            cell = (0, chunks[0][0])
            sizes[cell] = (None, chunks[0][1])
        holders.setdefault(cell, set()).add(device.id)
    rows = max(r for r, _ in holders) + 1
    cols = max(c for _, c in holders) + 1
    colors = _colors(color_map, rows, cols) if use_color and color_map is not None else None
    table = rich.table.Table(
        show_header=False,
        show_lines=not use_color,
        padding=0,
        highlight=not use_color,
        pad_edge=False,
        box=None if use_color else rich.box.SQUARE,
    )
    for r in range(rows):
        cells = []
        for c in range(cols):
            label = f"{kind} " + ",".join(str(i) for i in sorted(holders[r, c]))
            height_share, width_share = sizes[r, c]
            width = int(width_share * base_width * _HEIGHT_TO_WIDTH)
            width = min(max(width, min_width), max_width)
            height = 1 if height_share is None else int(height_share * base_height)
            left, extra = divmod(width - len(label) - 2, 2)
            right = left + extra
            top, extra = divmod(height - 2, 2)
            bottom = top + extra
            style = rich.style.Style()
            if colors is not None:
                background = _hex(next(colors))
                style = rich.style.Style(bgcolor=background, color=_text_on(background))
                top, bottom, left, right = top + 1, bottom + 1, left + 1, right + 1
            pad = (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0))
            centered = rich.align.Align(label, "center", vertical="middle")
            cells.append(rich.padding.Padding(centered, pad, style=style))
        table.add_row(*cells)
    console.print(table, end="\n\n")


__all__ = ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]
