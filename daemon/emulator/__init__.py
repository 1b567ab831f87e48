"""A faithful local stand-in for Jupiter's HTTP API (DESIGN §5)."""

from __future__ import annotations

from daemon.emulator.common import EmuResponse
from daemon.emulator.core import Emulator
from daemon.emulator.faults import Fault, FaultKind, Faults
from daemon.emulator.ledger import Ledger
from daemon.emulator.txbuild import build_unsigned

__all__ = ["EmuResponse", "Emulator", "Fault", "FaultKind", "Faults", "Ledger", "build_unsigned"]
