"""A strict, bounds-checked reader of Borsh data (what Anchor programs take).

Strict the way the programs' own deserializers are: a bool is 0 or 1, an
Option tag is 0 or 1, an enum index must name a variant, and nothing reads
past the end. Every violation is a `BorshError` (a ValueError), never an
IndexError or a silent guess. `skip` walks a value of a described layout
without building it, which is how a route plan is stepped over.

Layouts are small tuples: a primitive name ("u8", "u16", "u32", "u64",
"u128", "i64", "bool", "bytes", "pubkey"), or ("option", T), ("vec", T),
("array", T, n), ("struct", (T, ...)), ("enum", n) for an enum whose n
variants carry no data, and ("union", ((name, (T, ...)), ...)) for an enum
whose variants may carry fields.
"""

from __future__ import annotations

import struct
from typing import TypeAlias

from solders.pubkey import Pubkey

Layout: TypeAlias = str | tuple[object, ...]

_SIZES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i64": 8, "u128": 16, "pubkey": 32}


class BorshError(ValueError):
    """The data does not fit the layout (too short, or a value the program refuses)."""


class CannotDecodeError(ValueError):
    """The data uses a layout the published interface does not describe."""


class Reader:
    """Reads Borsh values from `data`, starting at `at`."""

    def __init__(self, data: bytes, at: int = 0) -> None:
        self.data = data
        self.at = at

    @property
    def left(self) -> int:
        return len(self.data) - self.at

    def take(self, size: int) -> bytes:
        if size < 0 or size > self.left:
            raise BorshError("instruction data too short")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(struct.unpack("<H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack("<I", self.take(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.take(8))[0])

    def i64(self) -> int:
        return int(struct.unpack("<q", self.take(8))[0])

    def pubkey(self) -> str:
        return str(Pubkey.from_bytes(self.take(32)))

    def bincode_string(self) -> str:
        """A string as bincode writes it (System's seeds): a u64 length, then UTF-8."""
        size = self.u64()
        return self.take(size).decode("utf-8", "replace")

    def boolean(self) -> bool:
        value = self.u8()
        if value > 1:
            raise BorshError(f"a bool holds {value}, not 0 or 1")
        return value == 1

    def present(self) -> bool:
        """An Option's tag: whether a value follows."""
        tag = self.u8()
        if tag > 1:
            raise BorshError(f"an option tag holds {tag}, not 0 or 1")
        return tag == 1

    def option_u64(self) -> int | None:
        return self.u64() if self.present() else None

    def option_i64(self) -> int | None:
        return self.i64() if self.present() else None

    def option_u16(self) -> int | None:
        return self.u16() if self.present() else None

    def option_bool(self) -> bool | None:
        return self.boolean() if self.present() else None

    def count(self) -> int:
        """A Vec's length, refused when the data left cannot hold that many elements."""
        size = self.u32()
        if size > self.left:
            raise BorshError(f"a list claims {size} elements, more than the data holds")
        return size

    def variant(self, variants: int) -> int:
        index = self.u8()
        if index >= variants:
            raise BorshError(f"enum variant #{index} is not one of the {variants} known")
        return index


def skip(r: Reader, layout: Layout) -> None:
    """Step over one value of `layout`, checking it as the program would."""
    if isinstance(layout, str):
        if layout == "bool":
            r.boolean()
        elif layout == "bytes":
            r.take(r.count())
        else:
            r.take(_SIZES[layout])
        return
    kind = layout[0]
    if kind == "option":
        if r.present():
            skip(r, _layout(layout[1]))
    elif kind == "vec":
        for _ in range(r.count()):
            skip(r, _layout(layout[1]))
    elif kind == "array":
        for _ in range(_int(layout[2])):
            skip(r, _layout(layout[1]))
    elif kind == "struct":
        for part in _parts(layout[1]):
            skip(r, part)
    elif kind == "enum":
        r.variant(_int(layout[1]))
    elif kind == "union":
        cases = _cases(layout[1])
        _name, fields = cases[r.variant(len(cases))]
        for part in fields:
            skip(r, part)
    else:
        raise AssertionError(f"unknown layout {kind!r}")


def _layout(value: object) -> Layout:
    assert isinstance(value, (str, tuple))
    return value


def _int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _parts(value: object) -> tuple[Layout, ...]:
    assert isinstance(value, tuple)
    return tuple(_layout(v) for v in value)


def _cases(value: object) -> tuple[tuple[str, tuple[Layout, ...]], ...]:
    assert isinstance(value, tuple)
    return tuple((str(name), _parts(fields)) for name, fields in value)
