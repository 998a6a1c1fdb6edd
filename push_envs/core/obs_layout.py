"""Observation layouts, declared once per task as data.

A layout is a sequence of :class:`Field` (a run of columns) and :class:`Repeat` (a block of
fields repeated, e.g. once per contact slot). From it come:

* the Markdown table in the task's docstring (:func:`table`), with indices written as
  ``a + bM`` where ``M`` is the repeat count's symbol;
* the ``observation_space`` bounds (:func:`bounds`);
* the column test (tests/tasks/test_observation.py), which compares every field against its
  ``expect`` reader of the world state.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Field:
    """``size`` consecutive columns of one quantity.

    name:   a short identifier (``"robot_xy"``); goal observations and tests look fields up
    doc:    what the columns hold, for the table
    unit:   SI unit of the columns (``"m"``, ``"m/s"``, ``"-"``)
    low, high: bounds of every column
    expect: ``expect(ctx) -> (E, size)`` the values read back from the world state (``ctx``
            is the task's test context); None only for columns that no reader can give
    atol:   tolerance of that comparison (observations are float32)
    """

    name: str
    size: int
    doc: str
    unit: str
    low: float
    high: float
    expect: Callable[[Any], np.ndarray] | None = None
    atol: float = 1e-5


@dataclass(frozen=True)
class Repeat:
    """``fields`` repeated ``args[count]`` times (slot ``j`` of ``M``).

    ``expect`` readers of repeated fields get ``(ctx, j)``. ``name`` names the block (its
    first column and its width, see :func:`offsets`).
    """

    count: str  # constructor argument that sets the repeat count, e.g. "max_contacts"
    symbol: str  # its symbol in the table, e.g. "M"
    fields: tuple[Field, ...]
    name: str = ""  # the block's name, e.g. "contacts"; default: the count argument

    @property
    def block(self) -> str:
        return self.name or self.count

    @property
    def width(self) -> int:
        """Columns of one slot."""
        return sum(f.size for f in self.fields)


Layout = Sequence[Field | Repeat]


def _count(item: Repeat, args: Mapping[str, Any]) -> int:
    return int(args[item.count])


def columns(layout: Layout, args: Mapping[str, Any]) -> list[tuple[Field, int, int | None]]:
    """Every field with its first column and its slot (None outside a Repeat)."""
    out: list[tuple[Field, int, int | None]] = []
    at = 0
    for item in layout:
        if isinstance(item, Field):
            out.append((item, at, None))
            at += item.size
            continue
        width = sum(f.size for f in item.fields)
        for j in range(_count(item, args)):
            k = at + j * width
            for f in item.fields:
                out.append((f, k, j))
                k += f.size
        at += width * _count(item, args)
    return out


def size(layout: Layout, args: Mapping[str, Any]) -> int:
    """Number of columns."""
    return sum(f.size for f, _, _ in columns(layout, args))


def offset(layout: Layout, args: Mapping[str, Any], name: str) -> int:
    """First column of the (non-repeated) field ``name``."""
    for f, k, j in columns(layout, args):
        if f.name == name and j is None:
            return k
    raise KeyError(f"no observation field {name!r}")


# ------------------------------------------------------------------ names for the kernels
# The kernels and the experts write and read the observation through named offsets, never
# literal column numbers: a layout's columns move with its arguments (max_contacts, the number
# of objects), and a literal would go on writing where a field used to be.
#
#   OBS = names(layout())            at import: a namedtuple, name -> index into T.at
#   T.at = offsets(layout, args, OBS)   at build: index -> the field's first column
#   row[T.at[OBS.robot_xy] + 1] = y     in a kernel: the field's second column
#
# A repeated field's offset is its column in slot 0; its block's name gives the block's first
# column and ``<block>_width`` the columns per slot, so slot j's column is
# ``at[OBS.contact_on] + j * at[OBS.contacts_width]``.


def _names(layout: Layout) -> list[str]:
    out: list[str] = []
    for item in layout:
        if isinstance(item, Field):
            out.append(item.name)
        else:
            out += [item.block, f"{item.block}_width"] + [f.name for f in item.fields]
    return out


def names(layout: Layout) -> Any:
    """The kernels' name table of a layout: a namedtuple ``name -> index`` (into the
    offsets of :func:`offsets`) of every field, and of every repeated block and its width.
    A layout that extends another (appends fields) keeps the other's indices."""
    flat = _names(layout)
    dup = sorted({n for n in flat if flat.count(n) > 1})
    if dup:
        raise ValueError(f"observation layout names {dup} more than once")
    return namedtuple("Obs", flat)(*range(len(flat)))


def offsets(layout: Layout, args: Mapping[str, Any], table: Any) -> np.ndarray:
    """int64 offsets for the names of ``table`` (:func:`names` of this layout or of a prefix
    of it): each field's first column (slot 0 for a repeated one), each block's first column
    and width, for the arguments ``args``."""
    out = np.full(len(table), -1, np.int64)
    at = 0
    for item in layout:
        if isinstance(item, Field):
            _put(out, table, item.name, at)
            at += item.size
            continue
        _put(out, table, item.block, at)
        _put(out, table, f"{item.block}_width", item.width)
        k = at
        for f in item.fields:
            _put(out, table, f.name, k)
            k += f.size
        at += item.width * _count(item, args)
    missing = [n for n, v in zip(table._fields, out, strict=True) if v < 0]
    if missing:
        raise ValueError(f"observation names {missing} are not in the layout")
    return out


def _put(out: np.ndarray, table: Any, name: str, value: int) -> None:
    if name in table._fields:
        out[table._fields.index(name)] = value


class Index:
    """The columns of a state observation by name, for Python readers (the experts):
    ``ix.robot_xy`` is that field's first column, ``ix.slot("contact_on", j)`` a repeated
    field's column in slot j, ``ix.size`` the number of columns."""

    def __init__(self, layout: Layout, args: Mapping[str, Any]) -> None:
        self._table = names(layout)
        self._at = dict(zip(self._table._fields, offsets(layout, args, self._table).tolist(),
                            strict=True))
        self._blocks = {f.name: item.block for item in layout if isinstance(item, Repeat)
                        for f in item.fields}
        self.size = size(layout, args)

    def __getattr__(self, name: str) -> int:
        try:
            return self.__dict__["_at"][name]
        except KeyError:
            raise AttributeError(f"no observation field {name!r}") from None

    def slot(self, name: str, j: Any) -> Any:
        """Column of repeated field ``name`` in slot ``j`` (an int or an int array)."""
        block = self._blocks[name]
        return self._at[name] + j * self._at[f"{block}_width"]


def bounds(layout: Layout, args: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per-column (low, high) of the observation space, float32."""
    n = size(layout, args)
    lo, hi = np.empty(n, np.float32), np.empty(n, np.float32)
    for f, k, _ in columns(layout, args):
        lo[k:k + f.size] = f.low
        hi[k:k + f.size] = f.high
    return lo, hi


def _index(const: int, per: Mapping[str, int], extra: str = "") -> str:
    """``const + Σ per[symbol]·symbol + extra`` as a table index, e.g. ``21 + 6M`` or
    ``28 + 6M + 10K + 3j`` after two repeated blocks."""
    terms = [f"{n}{sym}" if n != 1 else sym for sym, n in per.items() if n]
    parts = [str(const)] if const or not (terms or extra) else []
    parts += terms
    if extra:
        parts.append(extra)
    return " + ".join(parts)


def _fmt(x: float) -> str:
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:g}"


def table(layout: Layout) -> str:
    """The Markdown table of a layout: index, quantity, bounds and unit of every field.

    Columns after a repeated block are written with its width times its symbol (``6M``);
    several blocks add their terms in order (``6M + 10K``).
    """
    rows = ["| index | quantity | bounds | unit |", "|---|---|---|---|"]
    const = 0
    per: dict[str, int] = {}

    def idx(offset_: int, span: int, slot: str = "") -> str:
        cols = [_index(const + offset_ + i, per, slot) for i in range(span)]
        return ", ".join(cols) if span <= 4 else f"{cols[0]} ... {cols[-1]}"

    for item in layout:
        if isinstance(item, Field):
            rows.append(f"| {idx(0, item.size)} | {item.doc} | [{_fmt(item.low)}, "
                        f"{_fmt(item.high)}] | {item.unit} |")
            const += item.size
            continue
        width = sum(f.size for f in item.fields)
        k = 0
        for f in item.fields:
            rows.append(f"| {idx(k, f.size, f'{width}j')} | slot j < {item.symbol}: {f.doc} | "
                        f"[{_fmt(f.low)}, {_fmt(f.high)}] | {f.unit} |")
            k += f.size
        per[item.symbol] = per.get(item.symbol, 0) + width
    return "\n".join(rows)
