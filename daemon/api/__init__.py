"""The typed Jupiter API client (API.md): models, pacing, error mapping."""

from __future__ import annotations

from daemon.api.client import Attempt, JupiterClient, Observer
from daemon.api.models import ExecuteResult, OrderResponse, Portfolio, SwapEvent, UltraOrder

__all__ = [
    "Attempt",
    "ExecuteResult",
    "JupiterClient",
    "Observer",
    "OrderResponse",
    "Portfolio",
    "SwapEvent",
    "UltraOrder",
]
