"""A faithful local stand-in for Jupiter's HTTP API (DESIGN §5)."""

from __future__ import annotations

from jupcron.emulator.common import EmuResponse
from jupcron.emulator.core import Emulator
from jupcron.emulator.faults import Fault, FaultKind, Faults
from jupcron.emulator.ledger import Ledger
from jupcron.emulator.txbuild import build_unsigned

__all__ = ["EmuResponse", "Emulator", "Fault", "FaultKind", "Faults", "Ledger", "build_unsigned"]
