"""The typed Jupiter API client (API.md): models, pacing, error mapping."""

from __future__ import annotations

from jupcron.api.client import Attempt, JupiterClient, Observer
from jupcron.api.models import ExecuteResult, OrderResponse, Portfolio, SwapEvent, UltraOrder

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
