"""A bounds-checked reader of instruction data (little-endian, borsh/bincode)."""

from __future__ import annotations

import struct

from solders.pubkey import Pubkey


class Reader:
    """Reads fields from `data` starting at `start`; ValueError when it runs out."""

    def __init__(self, data: bytes, start: int = 0) -> None:
        self.data = data
        self.at = start

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise ValueError("instruction data too short")
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

    def string(self) -> str:
        size = self.u64()
        return self.take(size).decode("utf-8", "replace")

    @property
    def rest(self) -> int:
        return len(self.data) - self.at
