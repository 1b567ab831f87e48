"""The typed Jupiter API client (API.md): models, pacing, error mapping."""

from __future__ import annotations

from jupcron.api.client import Attempt, JupiterClient, Observer
from jupcron.api.models import ExecuteResult, OrderResponse, SwapEvent, UltraOrder
from jupcron.api.portfolio import Portfolio

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
